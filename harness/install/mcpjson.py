"""``memory-router install --mcp`` / ``uninstall --mcp``: the server in Claude Code's project MCP
file, ``<project>/.mcp.json`` (doctor's check that it starts is ``harness.doctor.mcp``)::

    {"mcpServers": {"memory-router": {"type": "stdio", "command": "/abs/memory-router",
                                      "args": ["mcp"], "env": {}}}}

The same safety as the settings installer (harness.install.cli), applied to this file: parse first
(invalid JSON or a wrongly shaped ``mcpServers`` is refused, exit 2, file untouched), back up the
current bytes to ``.claude/memory-router/backups/mcp-<stamp>.json``, refuse if the file changed
since it was read, write atomically as a minimal edit (every other server keeps its bytes), and
record what was written in ``.claude/memory-router/mcp.json`` so uninstall gives back the exact
original bytes (or deletes a file install created and nobody changed since).

Which entry is ours: the one named ``memory-router`` that runs ``memory-router mcp`` (or
``python -m router mcp``). JSON has no comments to carry a mark, so the name and the command
together say it; an entry of that name running anything else is someone else's and is never
touched (install refuses, exit 1), and a server of another name that already runs
``memory-router mcp`` makes install refuse rather than serve the same tools twice.
"""

import json
import os
import re
import sys
import time

from harness.install import settings as inst
from harness.install import hookcommand, jsonedit
from router.errors import InputError, RefusedError

MCP_FILENAME = ".mcp.json"
SERVER_KEY = "memory-router"
ROLE = "mcp"
BACKUP_STEM = "mcp"

_ROUTER_EXE_RE = re.compile(r"(^|[\\/])memory-router(\.exe)?$", re.I)
_PYTHON_RE = re.compile(r"(^|[\\/])(python[0-9.]*|py)(\.exe)?$", re.I)


class McpJsonError(InputError):
    """A .mcp.json that is not valid JSON, or not shaped as Claude Code documents it."""


def mcp_json_path(project_dir):
    return os.path.join(os.path.abspath(project_dir), MCP_FILENAME)


def state_dir(project_dir):
    """Where install keeps the backups and the record: beside the settings installer's."""
    return inst.state_dir_for(inst.project_settings_path(project_dir))


# --------------------------------------------------------------------------- pure transforms


def server_entry(exe_argv, clusters=None, config=None):
    """Our .mcp.json entry: ``exe_argv`` (e.g. ``['/abs/memory-router']``) + ``mcp`` + options."""
    args = list(exe_argv[1:]) + ["mcp"]
    if clusters:
        args += ["--clusters", os.path.abspath(clusters)]
    if config:
        args += ["--config", os.path.abspath(config)]
    return {"type": "stdio", "command": exe_argv[0], "args": args, "env": {}}


def runs_our_server(entry):
    """True when an .mcp.json server entry runs ``memory-router mcp`` (or ``python -m router mcp``)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    if _ROUTER_EXE_RE.search(entry["command"]):
        return args[:1] == ["mcp"]
    if _PYTHON_RE.search(entry["command"]):
        flags = 0
        while flags < len(args) and isinstance(args[flags], str) and args[flags].startswith("-") \
                and args[flags] != "-m":
            flags += 1
        return args[flags:flags + 3] == ["-m", "router", "mcp"]
    return False


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


def _record_path(project_dir):
    return os.path.join(state_dir(project_dir), ROLE + ".json")


def _read_record(project_dir, path):
    try:
        with open(_record_path(project_dir), encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None  # a missing or damaged record only costs the byte-exact restore
    if not isinstance(record, dict) or record.get("settings") != os.path.abspath(path):
        return None
    return record


def _write_record(project_dir, record):
    from harness.fileops import atomic_write

    path = _record_path(project_dir)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, json.dumps(record, indent=2) + "\n")


def _backup_dir(project_dir):
    return os.path.join(state_dir(project_dir), "backups")


def _backups(project_dir):
    """``[(path, bytes)]`` of earlier .mcp.json versions, newest first."""
    directory = _backup_dir(project_dir)
    try:
        names = [n for n in os.listdir(directory) if n.startswith(BACKUP_STEM + "-") and n.endswith(".json")]
    except OSError:
        return []
    found = []
    for name in sorted(names, key=lambda n: (os.path.getmtime(os.path.join(directory, n)), n), reverse=True):
        try:
            with open(os.path.join(directory, name), "rb") as handle:
                found.append((os.path.join(directory, name), handle.read()))
        except OSError:
            continue
    return found


def _backup(project_dir, data):
    from harness.archives import write_archive

    directory = _backup_dir(project_dir)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as err:
        raise RefusedError(f"cannot create {directory}: {err.strerror or err}; nothing was written",
                           fix="make the project directory writable") from None
    return write_archive(directory, BACKUP_STEM, ".json", data)


def _utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def install(project_dir, entry, dry_run=False, out=None):
    """Add (or update) our server in ``project_dir``/.mcp.json: ``(action, detail, backup)``."""
    out = out or sys.stdout
    path = mcp_json_path(project_dir)
    snap, doc = read_mcp_json(path)
    new_doc, action, detail = add_server(doc, entry)
    if action == "conflict":
        raise RefusedError(f"{path}: {detail}. Nothing was written",
                           fix="remove or rename that entry by hand, then run memory-router install --mcp again")
    if action == "unchanged":
        return action, detail, None
    if snap.exists:
        data = jsonedit.render_change(snap.data, doc, new_doc)
    else:
        data = jsonedit.render_settings(new_doc, jsonedit.JsonStyle())
    if dry_run:
        out.write(inst.unified_diff(snap.data, data, path))
        return "dry-run", detail, None
    backup = _backup(project_dir, snap.data) if snap.exists else None
    previous = _read_record(project_dir, path)
    snap.replace(data)
    record = inst.new_record(path, ROLE, snap.data if snap.exists else None, data, backup, json.dumps(entry))
    record["installed_at"] = _utc_now()
    if action == "updated" and previous and not previous.get("uninstalled_at"):
        from harness.fileops import sha256_bytes

        if previous.get("written_sha256") == sha256_bytes(snap.data):
            # Only our own entry changed since our last write: the pre-install original still holds.
            for key in ("original_existed", "original_sha256", "backup"):
                record[key] = previous.get(key)
        else:
            record["backup"] = None  # edited by hand since: restore structurally, never from a stale copy
    _write_record(project_dir, record)
    return action, detail, backup


def uninstall(project_dir, dry_run=False, out=None):
    """Remove our server from ``project_dir``/.mcp.json: ``(action, backup)``."""
    out = out or sys.stdout
    path = mcp_json_path(project_dir)
    snap, doc = read_mcp_json(path)
    if not snap.exists:
        return "absent", None
    record = _read_record(project_dir, path)
    action, data = plan_uninstall(snap.data, doc, record, _backups(project_dir))
    if action == "absent":
        return action, None
    if dry_run:
        out.write(inst.unified_diff(snap.data, b"" if action == "delete" else data, path))
        if action == "delete":
            out.write("(the file would be deleted: memory-router created it and it is unchanged since)\n")
        return "dry-run", None
    backup = _backup(project_dir, snap.data)
    if action == "delete":
        snap.require_unchanged()
        os.unlink(path)
    else:
        snap.replace(data)
    if record is not None:
        record.update(uninstalled_at=_utc_now(), uninstall_action=action, written_sha256=None)
        _write_record(project_dir, record)
    return action, backup


# --------------------------------------------------------------------------- commands


_MESSAGES = {
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


def _project(args):
    if getattr(args, "user", False):
        raise InputError("--mcp writes the project's .mcp.json; there is no user-level file for it",
                         fix="drop --user and pass --project DIR (or run in the project)")
    project = os.path.abspath(os.path.expanduser(getattr(args, "project", None) or os.getcwd()))
    if not os.path.isdir(project):
        raise InputError("project directory does not exist", path=project, fix="pass --project with an existing "
                                                                               "directory")
    return project


def cmd_install_mcp(args):
    from harness.install.settingsfile import router_executable

    project = _project(args)
    for option in ("clusters", "config"):
        value = getattr(args, option, None)
        if value and not os.path.isfile(value):
            raise InputError(f"--{option} file does not exist", path=value, fix="pass an existing file")
    if args.clusters:
        from router.clusterfile import load_cluster_file

        load_cluster_file(args.clusters)  # refuse to wire a server that could only report errors
    entry = server_entry(router_executable(), clusters=args.clusters, config=args.config)
    path = mcp_json_path(project)
    action, detail, backup = install(project, entry, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {path} not changed)", file=sys.stderr)
        return 0
    print(_MESSAGES[action].format(path=path, detail=detail))
    if backup:
        print(f"backup of the previous file: {backup}")
    if action in ("added", "updated"):
        print("server: " + " ".join([entry["command"]] + entry["args"]))
        print("Claude Code asks once whether to trust a project's .mcp.json servers; check it with: "
              f"memory-router doctor --project {hookcommand.quote_for_shell(project)}")
    return 0


def cmd_uninstall_mcp(args):
    project = _project(args)
    path = mcp_json_path(project)
    action, backup = uninstall(project, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {path} not changed)", file=sys.stderr)
        return 0
    print(_MESSAGES[action].format(path=path, detail=""))
    if backup:
        print(f"backup of the previous file: {backup}")
    if action == "absent" and os.path.isfile(path):
        _snap, doc = read_mcp_json(path)
        existing = (doc.get("mcpServers") or {}).get(SERVER_KEY)
        if existing is not None:
            print(f"note: mcpServers.{SERVER_KEY} does not run memory-router mcp, so it is not ours; left as is")
    return 0
