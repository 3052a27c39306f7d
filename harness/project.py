"""Where a project's files are: its directory (``--project``, else the current one), its config,
and its Claude Code memory directory with the MEMORY.md in it. Shared by install, doctor,
checklist and verdict, so each finds them the same way."""

import os

from harness.install import settings as inst
from router.errors import InputError


def project_dir_of(args):
    return os.path.abspath(os.path.expanduser(getattr(args, "project", None) or os.getcwd()))


def _git_root(path):
    from router.memorystore import git_root

    return git_root(path)


def default_memory_dir(project_dir):
    """Claude Code's auto-memory directory for a project (claude-code-formats.md §4.1):
    ``<config dir>/projects/<slug of the git root, else the project dir>/memory``."""
    from router.memorystore import project_key

    root = _git_root(project_dir) or os.path.abspath(project_dir)
    return os.path.join(inst.claude_config_dir(), "projects", project_key(root), "memory")


def resolve_memory_dir(explicit, config, project_dir):
    """``(directory, how)``: --memory-dir, then the config's memory_dir, then Claude Code's default."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit)), "--memory-dir"
    if config and config.get("memory_dir"):
        return config["memory_dir"], f"memory_dir in {config.get('source')}"
    return default_memory_dir(project_dir), "Claude Code's default location"


def project_config(project_dir, explicit=None):
    from router.configfile import load_config

    return load_config(explicit, dirs=[project_dir])


def read_memory_index(memory_dir):
    path = os.path.join(memory_dir, "MEMORY.md")
    from router.safeio import read_regular_bytes

    try:
        data = read_regular_bytes(path)
    except FileNotFoundError:
        return path, None
    except OSError as err:
        raise InputError(f"cannot read MEMORY.md: {err.strerror or err}", path=path) from None
    return path, data.decode("utf-8", errors="replace")
