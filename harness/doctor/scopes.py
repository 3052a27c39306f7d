"""The doctor's scope checks: which of Claude Code's three settings files (project: shared,
local: this checkout's, user: every project) each router hook comes from, whether a hook in the
shared file runs a command every teammate has (``memory-router`` on PATH, paths under
``$CLAUDE_PROJECT_DIR``), and whether PATH finds memory-router for a portable one. The rule
itself is ``harness.install.scopes``."""

import os

from harness import printedcommands
from harness.doctor.probes import check
from harness.install import hookcommand, scopes


def scope_of(label):
    return scopes.SCOPE_OF_LABEL.get(label, label)


def _program(command):
    """The program word of a hook command (past ``VAR=value`` and ``env``), or ``None``."""
    for word in hookcommand.command_words(command) or []:
        if word == "env" or ("=" in word and not word.startswith(("/", "-"))):
            continue
        return word
    return None


def personal_words(command, project_dir):
    """``[(word, reason)]``: the words of ``command`` naming a path only this machine has."""
    found = []
    words = hookcommand.command_words(command) or []
    for i, word in enumerate(words):
        is_path = (i == 0 or words[i - 1] in ("--clusters", "--config")) and os.path.isabs(word)
        if is_path:
            reason = scopes.personal_reason(word) or "an absolute path"
            found.append((word, reason))
    return found


def scope_checks(entries, project_dir, environ=None):
    """Checks of the router hooks ``entries`` (``[(label, settings path, Entry)]``) by scope."""
    out = []
    for label, path, entry in entries:
        if scope_of(label) != "project":
            continue
        personal = personal_words(entry.command, project_dir)
        if personal:
            fix = (f"{printedcommands.memory_router('install', '--scope', 'project', '--project', project_dir)} "
                   "rewrites it portable (memory-router on PATH, paths under $CLAUDE_PROJECT_DIR), or move it "
                   "to .claude/settings.local.json: memory-router uninstall --scope project, then install "
                   "--scope local") if entry.marked else f"edit {entry.where} in {path}: a teammate has no such path"
            named = "; ".join(f"{word} ({reason})" for word, reason in personal)
            out.append(check("portable hook", "warn", f"the shared {path} ({entry.where}) names {named}: every "
                             "teammate who pulls it runs a command pointing where their machine has nothing",
                             fix=fix, settings=path))
            continue
        if _program(entry.command) == scopes.PORTABLE_EXE[0]:
            found = scopes.on_path(environ)
            if found is None:
                out.append(check("portable hook", "fail", f"{path} runs memory-router from PATH, but PATH finds "
                                 "none here, so the hook does nothing (it fails open: prompts go unrouted)",
                                 fix=f"{scopes.install_hint()}, or put its directory on PATH", settings=path))
            else:
                out.append(check("portable hook", "pass", f"{path} runs memory-router from PATH: {found} here; "
                                 + scopes.teammate_note(), settings=path, memory_router=found))
    return out
