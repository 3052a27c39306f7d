"""pytest plugin (registered as the ``pytest11`` entry point ``memory_router_canaries``): collect
canary YAML suites as pytest items, one per case (and one per session case), with the same verdicts
as ``canary run``.

A YAML file is collected only when it looks like a canary suite: its name starts with
``canary`` or it sits in a directory named ``canaries``, and it has a top-level ``cases:`` key.
Other YAML (CI workflows, configs) is never touched.

``xfail`` cases become strict pytest xfails: still failing -> XFAIL; passing -> a failure
(XPASS(strict)), exactly as ``canary run`` counts an xpass against the gate. A malformed suite
is a collection error naming file:line.

This module is imported by every pytest run in an environment where memory-router is
installed, so it imports nothing heavy at module level.
"""

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("memory-router canaries")
    group.addoption("--canary-clusters", metavar="FILE", default=None,
                    help="cluster file for every collected canary suite (overrides each suite's 'clusters:')")
    group.addoption("--canary-config", metavar="FILE", default=None,
                    help="memory-router config whose routing settings the canaries use "
                         "(default: memory-router.toml or pyproject.toml in the current directory)")


def _is_candidate(file_path):
    if file_path.suffix not in (".yaml", ".yml"):
        return False
    return file_path.name.startswith("canary") or file_path.parent.name == "canaries"


def pytest_collect_file(parent, file_path):
    if not _is_candidate(file_path):
        return None
    from canaries.suite import looks_like_suite

    try:
        from router.safeio import read_regular_bytes

        text = read_regular_bytes(file_path).decode("utf-8", errors="replace")
    except OSError:
        return None
    if not looks_like_suite(text):
        return None
    return CanarySuiteFile.from_parent(parent, path=file_path)


def _settings(config):
    cached = getattr(config, "_memory_router_canary_settings", None)
    if cached is None:
        from router.config import settings_of
        from router.configfile import load_config

        found = load_config(config.getoption("canary_config"))
        cached = settings_of(found)
        config._memory_router_canary_settings = cached
    return cached


class CanarySuiteFile(pytest.File):
    def collect(self):
        from canaries.suite import load_suite
        from router.providers.provider import build_table

        suite = load_suite(self.path, cluster_path=self.config.getoption("canary_clusters"))
        settings = _settings(self.config)
        table = build_table(suite.index)
        for case in suite.cases:
            item = CanaryItem.from_parent(self, name=case.id, case=case, table=table, settings=settings)
            reason = case.xfail_for(settings["provider"])
            if reason:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
            item.extra_keyword_matches.update(case.tags)
            yield item
        for case in suite.sessions:
            item = CanaryItem.from_parent(self, name=case.id, case=case, table=table, settings=settings)
            if case.xfail:
                item.add_marker(pytest.mark.xfail(reason=case.xfail, strict=True))
            item.extra_keyword_matches.update(case.tags)
            yield item

    def repr_failure(self, excinfo):
        from router.errors import MemoryRouterError

        if isinstance(excinfo.value, MemoryRouterError):
            return f"invalid canary suite:\n{excinfo.value}"
        return super().repr_failure(excinfo)


class CanaryFailure(Exception):
    """A case whose expectations did not hold; carries the exact differences."""


class CanaryItem(pytest.Item):
    def __init__(self, *, case, table, settings, **kwargs):
        super().__init__(**kwargs)
        self.case = case
        self.table = table
        self.settings = settings

    def runtest(self):
        from canaries.runner import differences, run_session
        from router.hooks.session import route_fresh

        if hasattr(self.case, "steps"):
            # A session case: its steps run in order in one simulated session.
            result = run_session(self.case, self.table, self.settings)
            found = [] if result.verdict == "xpass" else list(result.differences)
        else:
            found = differences(self.case, route_fresh(self.case.prompt, self.table, self.settings))
        if found:
            raise CanaryFailure(found)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CanaryFailure):
            lines = [f"canary {self.case.id} failed ({self.path}:{self.case.line}):"]
            lines += [f"  {difference}" for difference in excinfo.value.args[0]]
            return "\n".join(lines)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, (self.case.line or 1) - 1, f"canary: {self.case.id}"
