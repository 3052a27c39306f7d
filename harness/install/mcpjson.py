"""``memory-router install --mcp`` / ``uninstall --mcp``: the server in Claude Code's project MCP
file, ``<project>/.mcp.json`` (the faces are ``harness.install.cli`` and ``harness.uninstall.cli``; doctor's check that it starts
is ``harness.doctor.mcp``)::

    {"mcpServers": {"memory-router": {"type": "stdio", "command": "/abs/memory-router",
                                      "args": ["mcp"], "env": {}}}}

The same safety as the settings installer, applied to this file: parse first
(invalid JSON or a wrongly shaped ``mcpServers`` is refused, exit 2, file untouched), back up the
current bytes to ``.claude/memory-router/backups/mcp-<stamp>.json``, refuse if the file changed
since it was read, write atomically as a minimal edit (every other server keeps its bytes), and
record what was written in ``.claude/memory-router/mcp.json`` so uninstall gives back the exact
original bytes (or deletes a file install created and nobody changed since).

Which entry is ours: the one named ``memory-router`` that runs ``memory-router mcp``, as the
hooks' recogniser reads a command (``harness.install.hookcommand.runs_memory_router``: the console
script, or ``python -P -m harness mcp``, which install writes when no console script is found).
JSON has no comments to carry a mark, so the name and the command together say it; an entry of
that name running anything else is someone else's and is never touched (install refuses, exit 1),
and a server of another name that already runs ``memory-router mcp`` makes install refuse rather
than serve the same tools twice. The records and backups are the settings installer's
(``harness.install.settingsfile``), kept in the project's ``.claude/memory-router/``.
"""

import json
import os

from harness import project as proj
from harness.install import hookcommand, settingsfile
from harness.install import settings as inst
from router.errors import InputError, RefusedError

MCP_FILENAME = ".mcp.json"
SERVER_KEY = "memory-router"
ROLE = "mcp"
BACKUP_STEM = "mcp"

# What install --mcp and uninstall --mcp print for each action ({path}, {detail}).
MESSAGES = {
    "added": "installed the memory-router MCP server in {path} ({detail})",
    "updated": "updated the memory-router MCP server in {path} ({detail})",
    "unchanged": "the memory-router MCP server is already in {path} ({detail}); nothing changed",
    "restore": "removed the memory-router MCP server from {path}: restored, byte for byte, the file as it was "
               "before memory-router changed it",
    "write": "removed the memory-router MCP server from {path}; every other server kept",
    "delete": "removed the memory-router MCP server: deleted {path}, which memory-router had created and nobody "
              "changed",
    "absent": "the memory-router MCP server is not in {path}; nothing changed",
}


def mcp_project(project, user=False, scope=None):
    """The project directory whose .mcp.json ``--mcp`` edits; ``--user``/``--scope`` refused."""
    if user or scope:
        raise InputError("--mcp writes the project's .mcp.json; there is no user-level file or other scope for it",
                         fix="drop --user/--scope and pass --project DIR (or run in the project)")
    directory = proj.project_dir(project)
    if not os.path.isdir(directory):
        raise InputError("project directory does not exist", path=directory,
                         fix="pass --project with an existing directory")
    return directory


class McpJsonError(InputError):
    """A .mcp.json that is not valid JSON, or not shaped as Claude Code documents it."""


def mcp_json_path(project_dir):
    return os.path.join(os.path.abspath(project_dir), MCP_FILENAME)


def state_dir(project_dir):
    """Where install keeps the backups and the record: beside the settings installer's."""
    return proj.project_state_dir(project_dir)


# --------------------------------------------------------------------------- pure transforms


# .mcp.json is shared (teams commit it), so a path in it is written from the project's root, which
# Claude Code expands (``${VAR:-default}``; it starts the server in the project either way).
PROJECT_DIR_REF = "${CLAUDE_PROJECT_DIR:-.}"


def shared_path(option, value, project_dir):
    """``value`` (a ``--clusters``/``--config`` path) as the shared .mcp.json writes it:
    ``${CLAUDE_PROJECT_DIR:-.}/<path in the project>``; a path outside the project is refused, since
    a teammate has no such path."""
    root = os.path.realpath(os.path.abspath(project_dir))
    path = os.path.realpath(os.path.abspath(value))
    relative = os.path.relpath(path, root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
        raise RefusedError(f"{option} {value} is outside the project, and .mcp.json is shared (teams commit it): "
                           "a teammate has no such path. Nothing was written",
                           fix=f"move the file into the project, or leave {option} out (the server finds the "
                               "project's memory-router.toml and brain/ itself)")
    return PROJECT_DIR_REF + "/" + relative.replace(os.sep, "/")


def shared_executable(here=None, found=None):
    """The command the shared .mcp.json names: the portable ``memory-router`` when PATH finds this
    same memory-router; else ``RefusedError``: the absolute path of this one is a path on this
    machine only (the hook installer's rule: ``harness.install.scopes.choose_scope``)."""
    from harness import printedcommands
    from harness.install import scopes

    here = here or hookcommand.router_executable()
    found = scopes.on_path() if found is None else found
    if found and os.path.realpath(found) == os.path.realpath(here[0]):
        return list(scopes.PORTABLE_EXE)
    where = f"PATH finds another one ({found})" if found else "PATH finds no memory-router here"
    personal = printedcommands.command("claude", "mcp", "add", "--scope", "local", SERVER_KEY, "--", *here, "mcp")
    raise RefusedError(f".mcp.json is shared (teams commit it), so the server it names must be the portable "
                       f"'memory-router mcp'; {where}, and {here[0]} is a path on this machine only. Nothing was "
                       "written",
                       fix=f"put memory-router on PATH ({scopes.install_hint()}), then run install --mcp again; "
                           f"or add the server for yourself only: {personal}")


def server_entry(exe_argv, clusters=None, config=None, path_word=os.path.abspath):
    """Our .mcp.json entry: ``exe_argv`` (``['memory-router']``, or ``['/abs/memory-router']``) +
    ``mcp`` + options, each path written by ``path_word(option, value)`` (default: absolute)."""
    args = list(exe_argv[1:]) + ["mcp"]
    if path_word is os.path.abspath:
        def path_word(_option, value):
            return os.path.abspath(value)
    if clusters:
        args += ["--clusters", path_word("--clusters", clusters)]
    if config:
        args += ["--config", path_word("--config", config)]
    return {"type": "stdio", "command": exe_argv[0], "args": args, "env": {}}


def runs_our_server(entry):
    """True when an .mcp.json server entry runs ``memory-router mcp`` (its ``command`` and
    ``args`` read as one argv by the recogniser the hooks use)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    return hookcommand.runs_memory_router([entry["command"], *args], "mcp")


def parse_mcp_json(data, path):
    """The object in ``data`` (bytes of a .mcp.json; empty reads as ``{}``). Anything Claude Code
    would not read as a project MCP file is a ``McpJsonError`` naming ``path:line:column``."""
    try:
        doc = inst.parse_settings(data, path)
    except inst.SettingsError as err:
        message = err.message.replace("settings must be", ".mcp.json must be").replace("settings file", ".mcp.json")
        raise McpJsonError(message, path=err.path,
                           line=err.line, column=err.column, fix=err.fix) from None
    servers = doc.get("mcpServers")
    if servers is None:
        return doc
    text = data.decode("utf-8-sig", errors="replace")
    line = text.count("\n", 0, max(0, text.find('"mcpServers"'))) + 1
    if not isinstance(servers, dict):
        raise McpJsonError('"mcpServers" must be an object of server names', path=path, line=line,
                           fix='write it as {"name": {"command": ...}}; nothing was changed')
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise McpJsonError(f'"mcpServers.{name}" must be an object', path=path, line=line,
                               fix='write it as {"command": ..., "args": [...]}; nothing was changed')
    return doc


def _copy(doc):
    return json.loads(json.dumps(doc))


def add_server(doc, entry):
    """``(new doc, action, detail)``; action is ``added``, ``updated``, ``unchanged`` or
    ``conflict`` (detail names the entry in the way; ``doc`` is returned unchanged)."""
    servers = doc.get("mcpServers") or {}
    others = [name for name, value in servers.items() if name != SERVER_KEY and runs_our_server(value)]
    if others:
        return doc, "conflict", (f"mcpServers.{others[0]} already runs memory-router mcp; a second server would "
                                 "offer the same tools twice")
    existing = servers.get(SERVER_KEY)
    if existing is not None and not runs_our_server(existing):
        return doc, "conflict", f"mcpServers.{SERVER_KEY} is an entry memory-router did not write: " \
                                f"{json.dumps(existing)[:200]}"
    if existing == entry:
        return doc, "unchanged", f"mcpServers.{SERVER_KEY}"
    result = _copy(doc)
    result.setdefault("mcpServers", {})[SERVER_KEY] = entry
    return result, ("updated" if existing is not None else "added"), f"mcpServers.{SERVER_KEY}"


def remove_server(doc):
    """``(new doc, action)``: ``removed`` (our entry gone; ``mcpServers`` too if that emptied
    it) or ``absent``."""
    servers = doc.get("mcpServers")
    if not isinstance(servers, dict) or not runs_our_server(servers.get(SERVER_KEY)):
        return doc, "absent"
    result = _copy(doc)
    del result["mcpServers"][SERVER_KEY]
    if not result["mcpServers"]:
        del result["mcpServers"]
    return result, "removed"


def plan_uninstall(current, doc, record, backups):
    """What uninstall writes, as ``install.plan_uninstall`` decides it for settings.json:
    ``("absent", None)``, ``("delete", None)`` (install created the file and nobody changed it),
    ``("restore", bytes)`` (a backup equal, key for key, to the file without our entry: its exact
    bytes) or ``("write", bytes)`` (our entry removed as a minimal edit of ``current``)."""
    removed, action = remove_server(doc)
    if action == "absent":
        return "absent", None
    return inst.plan_removal(current, doc, removed, record, backups, parse_mcp_json)


# --------------------------------------------------------------------------- reading and writing


def read_mcp_json(path):
    """``(Snapshot, parsed object)`` of a .mcp.json; a file that does not exist parses as ``{}``."""
    from harness.fileops import Snapshot

    try:
        snap = Snapshot(path)
    except IsADirectoryError:
        raise McpJsonError("is a directory, not an MCP config file", path=path) from None
    except OSError as err:
        raise McpJsonError(f"cannot read .mcp.json: {err.strerror or err}", path=path) from None
    return snap, (parse_mcp_json(snap.data, path) if snap.exists else {})


def install(project_dir, entry, dry_run=False, out=None):
    """Add (or update) our server in ``project_dir``/.mcp.json: ``(action, detail, backup)``."""
    path = mcp_json_path(project_dir)
    snap, doc = read_mcp_json(path)
    new_doc, action, detail = add_server(doc, entry)
    if action == "conflict":
        raise RefusedError(f"{path}: {detail}. Nothing was written",
                           fix="remove or rename that entry by hand, then run memory-router install --mcp again")
    if action == "unchanged":
        return action, detail, None
    saved = settingsfile.write_change(path, ROLE, snap, doc, new_doc, json.dumps(entry), action == "updated",
                                      dry_run, out, state_dir(project_dir), BACKUP_STEM, what=".mcp.json")
    if saved == "dry-run":
        return "dry-run", detail, None
    return action, detail, saved


def uninstall(project_dir, dry_run=False, out=None):
    """Remove our server from ``project_dir``/.mcp.json: ``(action, backup)``."""
    path = mcp_json_path(project_dir)
    snap, doc = read_mcp_json(path)
    if not snap.exists:
        return "absent", None
    record = settingsfile.read_record(path, ROLE, state_dir(project_dir))
    action, data = plan_uninstall(snap.data, doc, record,
                                  settingsfile.backups(path, state_dir(project_dir), BACKUP_STEM))
    if action == "absent":
        return action, None
    saved = settingsfile.write_removal(path, ROLE, snap, action, data, record, dry_run, out, state_dir(project_dir),
                                       BACKUP_STEM, what=".mcp.json")
    if saved == "dry-run":
        return "dry-run", None
    return action, saved
