"""A run directory of the real-client lab: the private HOME and project one session runs in
(cluster file copied in, this project's hook installed, MEMORY.md placed flat, slim or not at
all), and the environment that keeps the client inside it.

Apart from ``harness.lab.runner`` because laying out a run needs no client: it runs only this
project's own ``memory-router`` (install, slim render), so it is tested, and used by
tests/fixtures/regenerate.py, without Claude Code."""

import os
import shutil
import subprocess
from dataclasses import dataclass

from router.errors import InputError, MemoryRouterError
from router.safeio import open_regular

MEMORY_MODES = ("flat", "slim", "none")
REQUEST_LOG = "requests.jsonl"
CLUSTER_RELPATH = os.path.join("brain", "memory-layer1-clusters.md")


@dataclass(frozen=True)
class RunPaths:
    run_dir: str
    home: str
    project: str
    memory_dir: str
    cluster_file: str
    memory_file: str


def router_argv():
    """How to run this project's own ``memory-router`` (the installer, slim render)."""
    from harness.install.hookcommand import router_executable

    return router_executable()


def munged(path):
    from router.store.memorystore import project_key

    return project_key(path)


def make_paths(run_dir):
    run_dir = os.path.abspath(run_dir)
    home = os.path.join(run_dir, "home")
    project = os.path.join(run_dir, "project")
    memory_dir = os.path.join(home, ".claude", "projects", munged(project), "memory")
    return RunPaths(run_dir, home, project, memory_dir, os.path.join(project, CLUSTER_RELPATH),
                    os.path.join(memory_dir, "MEMORY.md"))


def lab_path():
    """PATH for the run's tools and client: the caller's, with this memory-router's own console
    script directory first when it has one, so the portable ``memory-router mcp`` that
    ``install --mcp`` writes into the run's ``.mcp.json`` starts this very memory-router (a test
    run from ``.venv/bin/python -m pytest`` does not have the venv's bin on PATH)."""
    path = os.environ.get("PATH", "/usr/bin:/bin")
    program = router_argv()[0]
    if os.path.basename(program) == "memory-router":
        path = os.pathsep.join([os.path.dirname(os.path.abspath(program)), path])
    return path


def client_env(paths, base_url, extra=None):
    """The client's whole environment: nothing of the caller's beyond PATH and the locale."""
    env = {
        "PATH": lab_path(),
        "HOME": paths.home,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "memory-router-lab",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "MEMORY_ROUTER_LOG": os.path.join(paths.run_dir, "hook.log"),
        "XDG_CONFIG_HOME": os.path.join(paths.home, ".config"),
        "XDG_CACHE_HOME": os.path.join(paths.home, ".cache"),
        "XDG_DATA_HOME": os.path.join(paths.home, ".local", "share"),
        "TMPDIR": os.path.join(paths.run_dir, "tmp"),
    }
    env.update(extra or {})
    return env


def _run_tool(argv, env, what, timeout=120):
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise MemoryRouterError(f"{what} did not finish within {timeout} s") from None
    except OSError as err:
        raise MemoryRouterError(f"{what} could not start: {err.strerror or err}") from None
    if done.returncode != 0:
        raise MemoryRouterError(f"{what} failed (exit {done.returncode}): "
                                f"{(done.stderr or done.stdout).strip()[:400]}")
    return done


def _tool_env(paths):
    env = dict(os.environ)
    env["PATH"] = lab_path()
    env["HOME"] = paths.home
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "MEMORY_ROUTER_CLUSTERS", "MEMORY_ROUTER_LOG"):
        env.pop(name, None)
    return env


# Where the lab's install writes the hooks (the local scope: not committed, this machine's paths).
SETTINGS_FILE = os.path.join(".claude", "settings.local.json")


def copy_utterances(clusters, paths):
    """Put the utterances file of ``clusters`` (``<stem>.utterances.tsv``, when there is one) beside
    the run's cluster file, so the run routes on it as a user's project would; returns whether it did."""
    from router.config import utterances_path

    source = utterances_path(clusters)
    if not os.path.isfile(source):
        return False
    shutil.copyfile(source, utterances_path(paths.cluster_file))
    return True


# The files beside a cluster file that the hook reads with it: a run routes as the user's own hook
# does only with them (each is named by its function in router.config, the one place the hook finds it).
STORE_FILES = (("utterances", "utterances_path"), ("learned terms", "learned_path"),
               ("near misses", "nearmisses_path"))


def store_files(clusters):
    """``[(what, path)]`` of the files beside the cluster file ``clusters`` that the hook reads
    with it, those that exist, in ``STORE_FILES`` order."""
    import router.config

    found = []
    for what, name in STORE_FILES:
        path = getattr(router.config, name)(clusters)
        if os.path.isfile(path):
            found.append((what, path))
    return found


def copy_store_files(clusters, paths):
    """Copy the files ``store_files`` finds beside ``clusters`` beside the run's cluster file, each
    under the name the hook looks for there; returns ``[(what, source path)]`` of those copied."""
    import router.config

    copied = []
    for what, source in store_files(clusters):
        name = dict(STORE_FILES)[what]
        shutil.copyfile(source, getattr(router.config, name)(paths.cluster_file))
        copied.append((what, source))
    return copied


def prepare_run_dir(run_dir, memory="slim", clusters=None, flat_index=None, config=None, hook=True, gate=False,
                    mcp=False, utterances=False, with_store_files=False):
    """Lay out a run directory (HOME, project, cluster file, hook, MEMORY.md); returns
    ``(RunPaths, memory_text)``. ``memory_text`` is what was placed as MEMORY.md (None for none).
    ``gate`` installs with ``--gate`` (the citation gate beside the router: it needs ``hook``);
    ``mcp`` runs ``memory-router install --mcp`` (the server in ``project/.mcp.json``);
    ``utterances`` copies the store's utterances file beside the cluster file too (``copy_utterances``;
    off by default: the lab's recorded sessions route on the cluster file alone); ``with_store_files``
    copies every file ``store_files`` finds (utterances, learned terms, near misses), as ``lab run``
    does unless told not to."""
    from router.config import bundled_cluster_file, bundled_example_dir, bundled_flat_index

    if memory not in MEMORY_MODES:
        raise InputError(f"unknown memory mode {memory!r}", fix=f"use one of {', '.join(MEMORY_MODES)}")
    if gate and not hook:
        raise InputError("the citation gate is installed beside the router hook", fix="pass hook=True with gate=True")
    run_dir = os.path.abspath(run_dir)
    if os.path.exists(run_dir) and os.listdir(run_dir):
        raise InputError("the run directory is not empty", path=run_dir,
                         fix="pass a new directory; a run never overwrites another")
    paths = make_paths(run_dir)
    for directory in (paths.home, paths.project, paths.memory_dir, os.path.dirname(paths.cluster_file),
                      os.path.join(run_dir, "tmp")):
        os.makedirs(directory, exist_ok=True)
    clusters = clusters or bundled_cluster_file()
    flat_index = flat_index or bundled_flat_index()
    config = config or os.path.join(bundled_example_dir(), "memory-router.toml")
    shutil.copyfile(clusters, paths.cluster_file)
    if with_store_files:
        copy_store_files(clusters, paths)
    elif utterances:
        copy_utterances(clusters, paths)
    env = _tool_env(paths)
    exe = router_argv()
    if hook:
        # local scope, said outright: the command names this checkout's virtualenv, which is
        # personal (install's own default for such a command; Claude Code reads both files alike).
        _run_tool(exe + ["install", "--project", paths.project, "--scope", "local"] + (["--gate"] if gate else []),
                  env, "memory-router install")
    if mcp:
        _run_tool(exe + ["install", "--mcp", "--project", paths.project], env, "memory-router install --mcp")
    memory_text = None
    if memory in ("flat", "slim"):
        shutil.copyfile(flat_index, paths.memory_file)
        if memory == "slim":
            # the run's project, whose hook (installed above) slim render trial-runs before it renders; a
            # slim run without the hook is a measurement the lab makes on purpose (--force)
            _run_tool(exe + ["slim", "render", "--memory-dir", paths.memory_dir, "--clusters", paths.cluster_file,
                             "--config", config, "--project", paths.project] + ([] if hook else ["--force"]),
                      env, "memory-router slim render")
            # The render archives the flat index beside MEMORY.md; the client reads only MEMORY.md,
            # but the archive is moved out so the memory directory holds exactly what a user's would.
            for name in os.listdir(paths.memory_dir):
                if name != "MEMORY.md":
                    shutil.move(os.path.join(paths.memory_dir, name), os.path.join(run_dir, name))
        with open_regular(paths.memory_file, encoding="utf-8") as handle:
            memory_text = handle.read()
    return paths, memory_text
