"""What the ``canary`` and ``checklist`` commands share: the suites named on the command line
(files or directories, loaded together with every problem reported at once), the bundled suite,
the family of files a cluster file comes with, the settings, and the number formats of their
tables."""

import os

from router.errors import InputError


class SuiteLoadErrors(InputError):
    """Problems in several suite files at once (each already names its file and lines)."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("invalid suites")

    def format(self):
        return "\n".join(err.format() for err in getattr(self, "errors", ()))


def display_path(path):
    path = os.path.abspath(path)
    try:
        rel = os.path.relpath(path, os.getcwd())
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith(os.pardir) else rel


def settings_from(config_path=None):
    """``(config, routing settings)`` of ``--config`` (else the config found as the hook finds it)."""
    from router.configfile import load_config
    from router.config import settings_of

    config = load_config(config_path)
    return config, settings_of(config)


def default_suite_path():
    """The bundled canaries/spec.yaml, whose behavioural cases the checklist and verdict read."""
    from canaries.suite import bundled_suite_dir

    return os.path.join(bundled_suite_dir(), "spec.yaml")


def cluster_file_family(path):
    """The cluster file at ``path``, its other form (``clusters build`` writes the .md and the .tsv)
    and the archives ``build``/``convert`` keep beside them: all memory-router's, all naming slugs."""
    if not path:
        return []
    import glob

    stem = os.path.splitext(os.path.abspath(path))[0]
    return [path, stem + ".md", stem + ".tsv", *glob.glob(glob.escape(stem) + ".archive-*"),
            *glob.glob(glob.escape(stem) + "-[0-9]*")]


def expand_suite_args(paths):
    """SUITE arguments -> suite files; a directory stands for the suites directly inside it."""
    from canaries.suite import bundled_suites, suite_files_in

    if not paths:
        found = bundled_suites()
        if not found:
            raise InputError("no bundled canary suites found (the package data is missing)",
                             fix="reinstall memory-router, or pass a SUITE file")
        return found
    out = []
    for path in paths:
        if os.path.isdir(path):
            inside = suite_files_in(path)
            if not inside:
                raise InputError("no canary suite (a YAML file with top-level 'cases:') in this directory",
                                 path=path, fix="pass a suite file")
            out.extend(inside)
        else:
            out.append(path)
    return out


def project_store_default(config=None):
    """``(cluster file, how it was found)`` for a suite without ``clusters:``: the project's store,
    found as every command finds it (``harness.project.resolve_cluster_file``: $MEMORY_ROUTER_CLUSTERS,
    the config's ``clusters``, brain/ in $CLAUDE_PROJECT_DIR or the current directory), else the
    bundled example store. ``config``: the one the command read (default: the project's)."""
    from harness.project import resolve_cluster_file
    from router.configfile import load_config

    return resolve_cluster_file(None, load_config() if config is None else config, bundled=True)


def load_suites(paths, cluster_path=None, facts_only=False, config=None):
    """Load every suite, collecting the errors of all of them before failing (exit 2). A suite
    without ``clusters:`` reads ``project_store_default(config)``."""
    from canaries.suite import load_suite
    from router.errors import MemoryRouterError

    default = None if cluster_path else project_store_default(config)
    suites, errors = [], []
    for path in paths:
        try:
            suites.append(load_suite(path, cluster_path=cluster_path, facts_only=facts_only, default_clusters=default))
        except InputError as err:
            errors.append(err)
        except MemoryRouterError as err:  # pragma: no cover - every load error is an InputError today
            errors.append(err)
    if errors:
        if len(errors) == 1:
            raise errors[0]
        raise SuiteLoadErrors(errors)
    return suites


def table_for(suite, cache):
    """The table a suite's cases route on: the hook's compiled table of its cluster file (without
    learned terms: a suite is a gate on the cluster file a repository holds), so ``canary run``
    shows the hook's decisions (``router.hooks.compiled.hook_table``)."""
    from harness.context import say_on_stderr
    from router.hooks.compiled import hook_table

    key = os.path.abspath(suite.cluster_path)
    if key not in cache:
        cache[key] = hook_table(key, None, say_on_stderr("canary run"))
    return cache[key]


def fmt_num(value):
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.3f}"
    return str(value)


def fmt_chars(value):
    return "n/a" if value is None else f"{value:.1f}"


def fmt_ratio(value):
    return "n/a" if value is None else f"{value:.3f}"


def no_cases(pattern, suites):
    # Zero cases run is not a pass: a gate that checked nothing must not read as green.
    if pattern:
        raise InputError(f"-k {pattern!r} matched no case", fix="match a substring of a case id or tag")
    paths = [suite.path for suite in suites]
    raise InputError("no routing cases to run (the suite holds only behavioural cases)"
                     + (f"; nor do {', '.join(paths[1:])}" if len(paths) > 1 else ""),
                     path=paths[0] if paths else None, fix="add cases under 'cases:'")
