"""Where a project's files are: its directory, its config, Claude Code's settings files for it,
memory-router's own state beside them, and its memory directory. Every command finds them here,
so each finds them the same way (install, doctor, checklist, verdict, mcp, slim, tokens, build).
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
    from router.memorystore import claude_config_dir as config_dir

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
    from router.memorystore import default_memory_dir as claude_default

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
