"""Where a project's files are: its directory, its config, Claude Code's settings files for it,
memory-router's own state beside them, and its store (the cluster file and the memory directory).
Every command finds them here, so each finds them the same way (install, doctor, checklist,
verdict, mcp, slim, tokens, build, canary, route, init): ``resolve_store`` and the two
resolutions it is made of, ``resolve_cluster_file`` and ``resolve_memory_dir``, each with its
policy in its docstring.
"""

import os

from router.errors import InputError

SETTINGS_NAME = "settings.json"
LOCAL_SETTINGS_NAME = "settings.local.json"
NO_MEMORY_DIR_FIX = "pass --memory-dir DIR or set memory_dir in memory-router.toml"


def project_dir(value=None):
    """The project directory: ``value`` (``--project``), else the current directory; absolute."""
    return os.path.abspath(os.path.expanduser(value or os.getcwd()))


def project_config(directory, explicit=None):
    """The config that applies in ``directory``: ``explicit``, else the one found there."""
    from router.configfile import load_config

    return load_config(explicit, dirs=[directory])


# --------------------------------------------------------------------------- settings locations


def claude_config_dir(environ=None):
    """Claude Code's user directory: ``$CLAUDE_CONFIG_DIR`` if set, else ``~/.claude`` (the rule
    the transcript locator and the gate follow too)."""
    from router.store.memorystore import claude_config_dir as config_dir

    return config_dir(environ)


def user_settings_path(environ=None):
    return os.path.join(claude_config_dir(environ), SETTINGS_NAME)


def project_settings_path(directory, local=False):
    return os.path.join(os.path.abspath(directory), ".claude", LOCAL_SETTINGS_NAME if local else SETTINGS_NAME)


def settings_locations(directory):
    """``[(label, path)]`` in the order Claude Code documents them (claude-code-formats.md §1.1);
    managed settings and plugins are not read."""
    return [
        ("project", project_settings_path(directory)),
        ("project local", project_settings_path(directory, local=True)),
        ("user", user_settings_path()),
    ]


def state_dir_for(settings_path):
    """Where memory-router keeps its backups and install records for one settings file:
    ``<dir of settings.json>/memory-router/`` (``.claude/memory-router/`` or
    ``~/.claude/memory-router/``), on the same file system as the file it protects."""
    return os.path.join(os.path.dirname(os.path.abspath(settings_path)), "memory-router")


def project_state_dir(directory):
    """The project's ``.claude/memory-router/``: the state of its settings.json, its .mcp.json
    and the behavioural canary's records."""
    return state_dir_for(project_settings_path(directory))


# --------------------------------------------------------------------------- the memory directory


def default_memory_dir(directory):
    """Claude Code's auto-memory directory for a project (claude-code-formats.md §4.1):
    ``<config dir>/projects/<key of the git root, else the project dir>/memory``."""
    from router.store.memorystore import default_memory_dir as claude_default

    return claude_default(directory)


def resolve_memory_dir(explicit, config, directory=None, beside=None, required=True):
    """``(memory directory, how it was found)``: the one resolution every command uses.

    The policy, in order:

    1. ``explicit`` (``--memory-dir``), made absolute;
    2. ``memory_dir`` in the config;
    3. ``beside``, a ``memory/`` directory next to the input being judged, when it exists
       (``canary verdict``: Claude Code keeps a session's transcript and its memory under the
       same ``~/.claude/projects/<project>/``);
    4. Claude Code's default location for ``directory``, the project, when the caller passes one.
       Commands that only read (doctor, checklist, verdict, mcp) pass it; commands that write the
       memory directory or judge one file in it (slim render/rollback, clusters build, tokens
       report) pass none, so they never guess where to write or what to measure: they ask.

    With none of them: ``InputError`` (exit 2), or ``(None, reason)`` when not ``required``.
    Whether the directory exists is the caller's question (a missing one is a finding for doctor,
    an error for slim)."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit)), "--memory-dir"
    if config and config.get("memory_dir"):
        return os.path.abspath(os.path.expanduser(config["memory_dir"])), f"memory_dir in {config.get('source')}"
    if beside and os.path.isdir(beside):
        return os.path.abspath(beside), "beside the transcript"
    if directory:
        return default_memory_dir(directory), "Claude Code's default location"
    if required:
        raise InputError("no memory directory given", fix=NO_MEMORY_DIR_FIX)
    return None, "unknown"


# --------------------------------------------------------------------------- the cluster file

BUNDLED_STORE = "the bundled example store"


def resolve_cluster_file(explicit=None, config=None, dirs=None, bundled=False):
    """``(cluster file, how it was found)``: the one cluster-file resolution, the hook's own.

    The policy, in order (``router.config.resolve_cluster_path`` applies it; this names the step):

    1. ``explicit``: ``--clusters``, or the ``--clusters`` of the hook command a check reads;
    2. ``$MEMORY_ROUTER_CLUSTERS``;
    3. ``clusters`` in the config (the config of ``--config``, else the one found in ``dirs``);
    4. ``brain/memory-layer1-clusters.md``, then ``.tsv``, under each of ``dirs`` in turn (the
       hook's: ``$CLAUDE_PROJECT_DIR``, then the current directory; a command with ``--project``
       passes that directory);
    5. with ``bundled``, the bundled example store, for the commands that only read and have a
       use for an example (route, canary suites, the MCP server); the others get
       ``(None, "no cluster file found")`` and say what to set.

    A path is returned as found; whether it exists is the caller's question."""
    from router import config as config_mod

    dirs = config_mod.project_dirs() if dirs is None else list(dirs)
    path = config_mod.resolve_cluster_path(explicit, config, dirs)
    if path is None:
        if bundled:
            return config_mod.bundled_cluster_file(), BUNDLED_STORE
        return None, "no cluster file found"
    if explicit:
        return path, "--clusters"
    if os.environ.get("MEMORY_ROUTER_CLUSTERS"):
        return path, "$MEMORY_ROUTER_CLUSTERS"
    if config and config.get("clusters"):
        return path, f"clusters in {config.get('source')}"
    return path, "brain/ under " + os.path.dirname(os.path.dirname(os.path.abspath(path)))


# --------------------------------------------------------------------------- the store


class Store:
    """One project's store as a command reads it: the cluster file and the memory directory, each
    with how it was found, and the config they came from. ``to_json()`` is what a command's
    ``--json`` carries; ``lines()`` what its human output says (which files it read)."""

    __slots__ = ("cluster_file", "cluster_from", "memory_dir", "memory_from", "config")

    def __init__(self, cluster_file, cluster_from, memory_dir, memory_from, config):
        self.cluster_file = os.path.abspath(cluster_file) if cluster_file else None
        self.cluster_from = cluster_from
        self.memory_dir = memory_dir
        self.memory_from = memory_from
        self.config = config

    @property
    def config_file(self):
        return self.config.get("source") if self.config else None

    @property
    def bundled(self):
        return self.cluster_from == BUNDLED_STORE

    def to_json(self):
        return {"cluster_file": self.cluster_file, "cluster_file_from": self.cluster_from,
                "memory_dir": self.memory_dir, "memory_dir_from": self.memory_from, "config_file": self.config_file}

    def lines(self):
        return [f"cluster file: {self.cluster_file or 'none'} ({self.cluster_from})",
                f"memory directory: {self.memory_dir or 'none'} ({self.memory_from})"]


def resolve_store(clusters=None, memory_dir=None, config=None, directory=None, dirs=None, bundled=False,
                  guess_memory_dir=True):
    """The ``Store`` of one command: ``resolve_cluster_file(clusters, config, dirs, bundled)`` and
    ``resolve_memory_dir(memory_dir, config, directory)``, the project ``directory`` passed only
    when ``guess_memory_dir`` (a command that reads may look in Claude Code's default location;
    one that writes the memory directory never guesses). ``dirs`` defaults to ``[directory]``
    when a directory is given, else the hook's ($CLAUDE_PROJECT_DIR, then the current directory)."""
    if dirs is None and directory:
        dirs = [directory]
    cluster_file, cluster_from = resolve_cluster_file(clusters, config, dirs, bundled)
    found, how = resolve_memory_dir(memory_dir, config, directory if guess_memory_dir else None, required=False)
    return Store(cluster_file, cluster_from, found, how if found else "none found", config)
