"""The canary suite schema: parse a YAML suite, validate it, report every problem as file:line.

A suite is a YAML mapping::

    clusters: ../brain/memory-layer1-clusters.md   # relative to this file; default: below
    description: free text                          # optional
    defaults: {max_chars: 9500, tags: [spec]}       # optional, see DEFAULT_KEYS
    cases:
      - id: setx-plain
        prompt: "why doesn't my setx variable show up in the Bash tool?"
        routes_to: layer1_project_memory_router     # a cluster id or a list (order-insensitive)
        injects: [env_bash_tool_env_var_caching]
        tags: [spec]
    behavioural:                                    # optional (fresh-session checklist cases)
      - id: setx-cold
        prompt: "..."
        fact: env_bash_tool_env_var_caching
        expect_any: ["reboot didn't fix", "user-opened terminal"]
        forbid: ["restart the session"]
    sessions:                                       # optional (prompts typed in one session)
      - id: setx-twice
        steps:
          - prompt: "why can't the Bash tool see my setx variable?"
            injects: [env_bash_tool_env_var_caching]
          - prompt: "why can't the Bash tool see my setx variable?"
            silent: true                            # the session already holds the fact
          - compact                                 # or clear; earlier injections are gone
          - prompt: "why can't the Bash tool see my setx variable?"
            injects: [env_bash_tool_env_var_caching]
            new_lines: 4                            # also: not_injects, max_chars

Validation is strict on purpose: an unknown key, a wrong type, an unknown cluster id or slug,
a duplicate id or a contradiction (``silent: true`` with ``routes_to``) would otherwise make a
case that can never fail or never pass, and a gate built from such cases proves nothing. Every
problem is collected and reported at once, each with the line it sits on.

Pure except for ``load_suite``/``suite_prompts``/``bundled_suites``, which read files.
"""

import os
import re

from canaries.cases import Problem, Suite, SuiteError
from canaries.checker import Checker
from canaries.schema import (
    SKIPPED,
    check_behavioural,
    check_case,
    check_defaults,
    check_session,
    list_section,
    parse_top,
)
from router.errors import InputError
from router.safeio import read_regular_bytes


def parse_suite_text(text, path, cluster_override=None, load_index=None, facts_only=False, default_clusters=None):
    """Validate a suite's ``text`` (read from ``path``) and return a ``Suite``.

    ``cluster_override`` replaces the suite's ``clusters:``. A suite without ``clusters:`` is
    checked against ``default_clusters``, ``(path, how it was found)``: the project's store as
    ``memory-router`` finds it (``harness.project.resolve_cluster_file``); without one, the
    bundled example store. Its problems name that file whole and say why it was used. ``load_index(cluster_path)`` returns a
    ClusterIndex (default: ``router.store.clusterfile.load_cluster_file``); pass ``False`` to skip the
    cluster cross-checks (``suite_prompts`` does). ``facts_only`` drops every ``routes_to`` (and
    the ``xfail`` marks recorded against those ids), to judge a cluster file with other ids, such
    as a built one, by what it injects. Raises ``SuiteError`` listing every problem.
    """
    from router.config import bundled_cluster_file

    problems = []
    checker = Checker(problems)
    data = parse_top(text, checker)
    if data is None:
        raise SuiteError(path, problems)

    cluster_path = None
    cluster_line = None
    cluster_label = None
    if cluster_override:
        cluster_path = os.fspath(cluster_override)
    elif "clusters" in data:
        value = checker.string(data, "clusters")
        cluster_line = data.value_lines["clusters"]
        if value is not None:
            base = os.path.dirname(os.path.abspath(path))
            cluster_path = os.path.normpath(os.path.join(base, os.path.expanduser(value)))
    else:
        cluster_path, how = default_clusters or (bundled_cluster_file(), "the bundled example store")
        cluster_label = f"{cluster_path}, {how}: the suite has no 'clusters:' line"

    index = None
    if cluster_label is None:
        cluster_label = os.path.basename(cluster_path) if cluster_path else "the cluster file"
    if cluster_path and load_index is not False:
        if not os.path.isfile(cluster_path):
            what = ("is a directory, not a cluster file" if os.path.isdir(cluster_path)
                    else "is not a regular file" if os.path.exists(cluster_path) else "does not exist")
            if cluster_line is not None:
                checker.add(cluster_line, f"cluster file {cluster_path} {what}",
                            "make 'clusters:' the path of a .md or .tsv cluster file, relative to this suite file")
            else:
                from router.errors import ClusterFileError

                raise ClusterFileError(f"cluster file {what}" + (f" ({cluster_label})" if cluster_override is None
                                                                 else ""), path=cluster_path,
                                       fix="pass an existing .md or .tsv file with --clusters")
        else:
            # A broken cluster file is its own error (ClusterFileError, exit 2), naming its own lines.
            if load_index is None:
                from router.store.clusterfile import load_cluster_file as load_index
            index = load_index(cluster_path)

    description = checker.string(data, "description")
    defaults = check_defaults(checker, data.get("defaults"), data.value_lines.get("defaults"))
    seen_ids = {}
    raw_cases = list_section(checker, data, "cases", required="sessions" not in data)
    raw_behavioural = list_section(checker, data, "behavioural", required=False)
    raw_sessions = list_section(checker, data, "sessions", required=False)
    cases = [check_case(checker, raw, line, defaults, seen_ids, index, cluster_label, facts_only)
             for raw, line in zip(raw_cases, raw_cases.item_lines)]
    cases = [case for case in cases if case is not SKIPPED]
    behavioural = [check_behavioural(checker, raw, line, seen_ids, index, cluster_label)
                   for raw, line in zip(raw_behavioural, raw_behavioural.item_lines)]
    sessions = [check_session(checker, raw, line, seen_ids, index, cluster_label)
                for raw, line in zip(raw_sessions, raw_sessions.item_lines)]
    if not raw_cases and not raw_behavioural and not raw_sessions and not problems:
        checker.add(data.key_lines.get("cases", 1), "the suite has no cases, so it could never fail",
                    "add at least one case")
    if problems:
        raise SuiteError(path, problems)
    return Suite(path=os.fspath(path), cluster_path=cluster_path, defaults=dict(defaults), cases=tuple(cases),
                 behavioural=tuple(behavioural), description=description, index=index,
                 sessions=tuple(sessions))


def read_suite_text(path):
    from router.errors import read_utf8

    try:
        return read_utf8(path, "suite file", "pass an existing YAML suite file")
    except InputError as err:
        raise SuiteError(path, [Problem(err.line, None, err.message, err.fix)]) from None


def load_suite(path, cluster_path=None, facts_only=False, default_clusters=None):
    """Read, validate and return the suite at ``path``; ``cluster_path`` overrides its ``clusters:``,
    ``default_clusters`` stands in for a missing one (``parse_suite_text``)."""
    path = os.fspath(path)
    return parse_suite_text(read_suite_text(path), path, cluster_override=cluster_path, facts_only=facts_only,
                            default_clusters=default_clusters)


def load_suite_unchecked(path):
    """The suite validated for structure but not against its cluster file, so a token report can
    use a suite's prompts with any store."""
    path = os.fspath(path)
    return parse_suite_text(read_suite_text(path), path, load_index=False)


def suite_prompts(path):
    """Every prompt of a suite (routing cases, then behavioural cases), in file order."""
    return load_suite_unchecked(path).prompts


def bundled_suite_dir():
    return os.path.dirname(os.path.abspath(__file__))


BUNDLED_SUITE_NAMES = ("spec.yaml", "example.yaml", "paraphrase.yaml")


def bundled_suites():
    """The suites shipped as package data (``canaries/spec.yaml``, ``example.yaml``, ``paraphrase.yaml``)."""
    base = bundled_suite_dir()
    return [os.path.join(base, name) for name in BUNDLED_SUITE_NAMES if os.path.isfile(os.path.join(base, name))]


_TOP_LEVEL_CASES_RE = re.compile(r"^(cases|sessions)\s*:", re.M)


def looks_like_suite(text):
    """A cheap test for a top-level ``cases:`` key (used to pick suites out of a directory)."""
    return _TOP_LEVEL_CASES_RE.search(text) is not None


def suite_files_in(directory):
    """YAML files directly in ``directory`` that look like canary suites, sorted by name."""
    found = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith((".yaml", ".yml")):
            continue
        full = os.path.join(directory, name)
        try:
            text = read_regular_bytes(full).decode("utf-8", errors="replace")
        except OSError:
            continue
        if looks_like_suite(text):
            found.append(full)
    return found
