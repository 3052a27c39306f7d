"""Where a project's Claude Code memory directory is, and which memory slugs it holds.

Standard library only: the citation gate (a PreToolUse hook) lists the slugs on every write that
cites a memory, so this must not pull in dataclasses, YAML or the transcript locator.
``harness.memorydir`` reads the memories themselves and takes ``normalise_slug`` and
``is_index_file`` from here, so the gate and the builder agree on what a slug is.
"""

import os
import re

_NON_SLUG = re.compile(r"[^a-z0-9_]+")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


def normalise_slug(text):
    """A member slug (``[a-z0-9_]+``) from a file stem or a kebab-case name."""
    slug = _NON_SLUG.sub("_", text.lower()).strip("_")
    return slug or "memory"


def is_index_file(name):
    """MEMORY.md and its archives (MEMORY.archive-<stamp>.md, MEMORY-<stamp>.md): not memories."""
    return name == "MEMORY.md" or name.startswith(("MEMORY.", "MEMORY-"))


def claude_config_dir(environ=None):
    """``$CLAUDE_CONFIG_DIR`` if set, else ``$HOME/.claude`` (absolute)."""
    env = os.environ if environ is None else environ
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.abspath(os.path.join(home, ".claude"))


def project_key(project_dir):
    """Claude Code's directory name for a project: non-alphanumerics of the absolute path -> ``-``.

    Claude Code does this in JavaScript, whose regular expressions (without the ``u`` flag) walk
    UTF-16 code units: a character outside the Basic Multilingual Plane (an emoji, say) is two
    units and so becomes ``--``."""
    return _NON_ALNUM.sub(lambda m: "--" if ord(m.group()) > 0xFFFF else "-", os.path.abspath(str(project_dir)))


def git_root(path):
    """The nearest directory at or above ``path`` holding ``.git`` (a directory or a worktree's file)."""
    current = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def default_memory_dir(project_dir, environ=None):
    """Claude Code's auto-memory directory for a project (claude-code-formats.md §4.1):
    ``<config dir>/projects/<key of the git root, else the project dir>/memory``."""
    root = git_root(project_dir) or os.path.abspath(project_dir)
    return os.path.join(claude_config_dir(environ), "projects", project_key(root), "memory")


def memory_dir_slugs(directory):
    """The slug of every ``*.md`` memory file in ``directory`` (MEMORY.md and archives excluded).

    Raises ``OSError`` when the directory cannot be listed."""
    slugs = set()
    for name in os.listdir(directory):
        if name.endswith(".md") and not is_index_file(name) and os.path.isfile(os.path.join(directory, name)):
            slugs.add(normalise_slug(name[:-3]))
    return slugs
