"""The doctor's check for Claude Code's own per-prompt memory selector ("relevant memories"), which
a user can have on beside the router: then each prompt pays for both (a model call per prompt
whose answer brings whole topic files after the first tool result, plus the router's lines), and
the client drops the MEMORY.md index the slim render wrote.

It is on when ``CLAUDE_MEMORY_STORES`` is set to anything (observed with 2.1.328), in the
environment or a settings file's ``env``, or by a server-side flag the doctor cannot read; that
one shows in transcripts as ``relevant_memories`` attachments, so the newest session of the
project is looked at too (its last ``TAIL_BYTES``)."""

import os

from harness.install.settingsfile import read_settings
from harness.project import settings_locations
from router.errors import MemoryRouterError
from router.safeio import open_regular

VARIABLE = "CLAUDE_MEMORY_STORES"
ATTACHMENT = b'"type":"relevant_memories"'
TAIL_BYTES = 4 * 1024 * 1024


def _check(name, status, message, **details):
    return {"name": name, "status": status, "message": message, **details}


def selector_sources(project_dir, environ=None):
    """Where the selector is switched on: ``[text]``, empty when nothing doctor can read does."""
    environ = os.environ if environ is None else environ
    found = []
    if environ.get(VARIABLE):
        found.append(f"{VARIABLE} is set in this environment")
    for label, path in settings_locations(project_dir):
        if not os.path.isfile(path):
            continue
        try:
            _snap, settings = read_settings(path)
        except MemoryRouterError:
            continue
        env = settings.get("env")
        if isinstance(env, dict) and env.get(VARIABLE):
            found.append(f"{VARIABLE} in the env of {label} settings {path}")
    return found


def recalled_in_newest_session(project_dir, environ=None):
    """The newest session transcript of the project when it holds a ``relevant_memories``
    attachment (the selector ran in it), else ``None``."""
    from transcripts.locate import locate

    newest = locate(project_dir, environ).transcript
    if not newest:
        return None
    try:
        with open_regular(newest, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return None
    return newest if ATTACHMENT in tail.replace(b'": "', b'":"') else None


def selector_check(project_dir, router_wired, environ=None):
    """One check: ``warn`` when the selector is on beside a wired router, ``info`` otherwise."""
    sources = selector_sources(project_dir, environ)
    recalled = recalled_in_newest_session(project_dir, environ)
    if recalled:
        sources.append(f"relevant_memories attachments in the newest session ({recalled})")
    if not sources:
        return _check("built-in memory selector", "info",
                      f"off as far as doctor can see ({VARIABLE} not set; no relevant_memories in the newest session)")
    on = "; ".join(sources)
    if not router_wired:
        return _check("built-in memory selector", "info", f"Claude Code's own memory selector is on ({on})",
                      sources=sources)
    return _check("built-in memory selector", "warn",
                  f"Claude Code's own memory selector is on beside the router ({on}): each prompt then costs a "
                  "model call that recalls whole topic files after the first tool result, on top of the routed "
                  "lines, and the MEMORY.md index is no longer loaded",
                  fix=f"turn one off: unset {VARIABLE} (and remove it from the settings' env), or remove the "
                      "router (memory-router uninstall, or claude plugin disable memory-router@memory-router)",
                  sources=sources)
