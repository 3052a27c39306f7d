"""Find a project's session transcripts where Claude Code writes them.

``$CLAUDE_CONFIG_DIR/projects/<key>/<session-id>.jsonl`` (default config dir ``~/.claude``), where
``<key>`` is the absolute working directory with every character that is not an ASCII letter or
digit replaced by ``-`` (``/Users/me/proj`` -> ``-Users-me-proj``). Claude Code truncates keys
longer than 200 characters and appends a hash (spec claude-code-formats.md §2.1); the hash
function is not documented, so for such paths this module matches, best effort, any project
directory whose name starts with the first 200 characters of the key, and says so.
"""

import os
import pathlib
from dataclasses import dataclass

from router.store.memorystore import project_key  # noqa: F401 - one key rule for the locator and the citation gate

MAX_KEY_CHARS = 200
# What a command says when handed an empty transcript path: the usual cause is
# "$(memory-router transcript locate)" finding no session, which printed why on stderr.
EMPTY_PATH_MESSAGE = "the transcript path is empty, so there is nothing to read"
EMPTY_PATH_FIX = ("pass a session .jsonl; from \"$(memory-router transcript locate)\", the message above "
                  "says why no session was found")


def config_dir(env=None):
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return pathlib.Path(configured).expanduser()
    home = env.get("HOME") or os.path.expanduser("~")
    return pathlib.Path(home) / ".claude"


@dataclass(frozen=True)
class Located:
    project: str
    projects_dir: str
    key: str
    rule: str                    # "exact", or "prefix" for keys over 200 characters
    directory: str | None        # the matching project directory, if any
    transcript: str | None       # the newest session transcript, if any
    mtime: float | None
    sessions: int                # session transcripts found in that directory


def session_files(directory):
    """Top-level ``*.jsonl`` files of a project directory (subagent files live deeper)."""
    try:
        return [p for p in pathlib.Path(directory).glob("*.jsonl") if p.is_file()]
    except OSError:
        return []


def subagent_files(transcript):
    """``<session>/subagents/*.jsonl`` beside a session transcript, sorted."""
    path = pathlib.Path(transcript)
    folder = path.with_suffix("") / "subagents"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file())


def locate(project_dir, env=None):
    """Where the project's transcripts are, and the newest session transcript (by mtime)."""
    project = os.path.abspath(str(project_dir))
    projects = config_dir(env) / "projects"
    key = project_key(project)
    rule = "exact"
    candidates = [projects / key]
    if len(key) > MAX_KEY_CHARS:
        rule = "prefix"
        prefix = key[:MAX_KEY_CHARS]
        try:
            candidates = sorted(p for p in projects.iterdir() if p.is_dir() and p.name.startswith(prefix))
        except OSError:
            candidates = []
    directory, newest, newest_mtime, count = None, None, None, 0
    for candidate in candidates:
        if not candidate.is_dir():
            continue
        directory = directory or candidate
        for path in session_files(candidate):
            count += 1
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            if newest_mtime is None or (mtime, path.name) > (newest_mtime, newest.name):
                newest, newest_mtime, directory = path, mtime, candidate
    return Located(project, str(projects), key, rule, str(directory) if directory else None,
                   str(newest) if newest else None, newest_mtime, count)
