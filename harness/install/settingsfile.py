"""Reading and writing a Claude Code settings.json for install, uninstall and the sentinel.

Every write: parse first (invalid JSON is refused, exit 2, file untouched), back up the current
bytes to ``<dir>/memory-router/backups/`` (``harness.archives.write_archive``), refuse if the file
changed since it was read, write atomically, and keep a record of what was written in
``<dir>/memory-router/<role>.json`` so uninstall can give back the exact original bytes. The
transforms of the JSON itself are pure, in ``harness.install.settings``.
"""

import json
import os
import shutil
import sys
import time

from harness.install import hookcommand, jsonedit
from harness.install import settings as inst
from harness.project import project_dir_of
from router.errors import InputError, RefusedError
from router.safeio import read_regular_bytes

ROUTER_ROLE = "router"
SENTINEL_ROLE = "sentinel"
BACKUP_DIRNAME = "backups"


def target_settings(args):
    if getattr(args, "user", False):
        return inst.user_settings_path(), "user"
    project = project_dir_of(args)
    if not os.path.isdir(project):
        raise InputError("project directory does not exist", path=project,
                         fix="pass --project with an existing directory (or --user)")
    return inst.project_settings_path(project), "project"


def router_executable():
    """The argv that runs memory-router from anywhere, without an activated venv.

    The console script beside this interpreter (a venv's bin/ or Scripts\\), else the script this
    process was started as, else one on PATH, else this interpreter with ``-P -m harness`` (``-P``:
    a project's own ``harness/`` directory must not shadow ours). ``sys.executable`` is kept as
    is, never resolved: a venv's python is a symlink whose target has no access to the venv."""
    names = ("memory-router.exe", "memory-router") if os.name == "nt" else ("memory-router",)
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    for name in names:
        candidate = os.path.join(bindir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return [candidate]
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and os.path.basename(argv0).lower().startswith("memory-router") and os.path.isfile(argv0):
        return [os.path.abspath(argv0)]
    found = shutil.which("memory-router")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-P", "-m", "harness"]


def read_settings(path):
    """``(Snapshot, settings dict)``; a missing file reads as ``{}``."""
    from harness.fileops import Snapshot

    snap = Snapshot(path, "settings file")
    settings = inst.parse_settings(snap.data, path) if snap.exists else {}
    return snap, settings


def record_path(settings_path, role):
    return os.path.join(inst.state_dir_for(settings_path), f"{role}.json")


def read_record(settings_path, role):
    path = record_path(settings_path, role)
    try:
        record = json.loads(read_regular_bytes(path).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # a damaged record only costs the byte-exact restore; uninstall still works
    if not isinstance(record, dict) or record.get("settings") != os.path.abspath(settings_path):
        return None
    return record


def write_record(settings_path, role, record):
    from harness.fileops import atomic_write

    path = record_path(settings_path, role)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, json.dumps(record, indent=2) + "\n")


def _backup_dir(settings_path):
    return os.path.join(inst.state_dir_for(settings_path), BACKUP_DIRNAME)


def _backup_stem(settings_path):
    return os.path.splitext(os.path.basename(settings_path))[0]


def _backups(settings_path):
    """``[(path, bytes)]`` of this settings file's backups, newest first."""
    directory = _backup_dir(settings_path)
    stem = _backup_stem(settings_path) + "-"
    try:
        names = [n for n in os.listdir(directory) if n.startswith(stem) and n.endswith(".json")]
    except OSError:
        return []
    out = []
    for name in sorted(names, key=lambda n: (os.path.getmtime(os.path.join(directory, n)), n), reverse=True):
        path = os.path.join(directory, name)
        try:
            out.append((path, read_regular_bytes(path)))
        except OSError:
            continue
    return out


def _backup(settings_path, data):
    from harness.archives import write_archive

    directory = _backup_dir(settings_path)
    try:
        os.makedirs(directory, exist_ok=True)
        return write_archive(directory, _backup_stem(settings_path), ".json", data)
    except RefusedError:
        raise
    except OSError as err:
        raise RefusedError(f"cannot back up {settings_path} into {directory}: {err.strerror or err}; "
                           "nothing was written", fix="make that directory writable") from None


def _refuse_dangling_link(settings_path):
    """A settings.json that is a symlink to nothing (a dotfiles link whose file is not there yet):
    writing through it would create a file somewhere else, unasked. Refuse, naming both."""
    if os.path.islink(settings_path) and not os.path.exists(settings_path):
        target = os.path.realpath(settings_path)
        raise RefusedError(f"{settings_path} is a symlink to {target}, which does not exist; nothing was written",
                           fix=f"create {target} (even as {{}}) if the link is meant, or remove the link, then "
                               "run the command again")


def _replace(snap, data):
    """Atomically replace the settings file (or create it), refusing if it changed since read.
    Through a symlink (settings.json kept in a dotfiles repository) the file it points to is
    written and the link kept: ``atomic_write`` does that for every writer."""
    snap.replace(data)


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def apply_add(settings_path, role, mark, command, dry_run=False, conflicts=None, extra=None, out=None,
              timeout=hookcommand.HOOK_TIMEOUT_SECONDS, more=(), add=None):
    """Add (or update) our handler in ``settings_path``, and the handlers in ``more`` (tuples
    ``(event, command, matcher)``), in one write. Returns ``(action, detail, backup)``. ``add``
    replaces ``inst.add_entry`` for another event's handler (``harness.install.gate``)."""
    out = out or sys.stdout
    _refuse_dangling_link(settings_path)
    snap, settings = read_settings(settings_path)
    if add is not None:
        change = add(settings, command, mark, conflicts=conflicts)
    else:
        change = inst.add_entry(settings, command, mark, timeout=timeout, conflicts=conflicts)
    for event, other, matcher in more:
        change = inst.combine(change, inst.add_entry(change.settings, other, mark, event=event, matcher=matcher))
    if change.action == "conflict":
        raise RefusedError(f"{settings_path} already runs the router from a hook memory-router did not add "
                           f"({change.detail}); a second one would inject twice per prompt. Nothing was written",
                           fix="remove that entry by hand, then run memory-router install again")
    if change.action == "unchanged":
        return "unchanged", change.detail, None
    if snap.exists:
        new = jsonedit.render_change(snap.data, settings, change.settings)
    else:
        new = jsonedit.render_settings(change.settings, jsonedit.JsonStyle())
    if dry_run:
        out.write(inst.unified_diff(snap.data, new, settings_path))
        return "dry-run", change.detail, None
    from harness.fileops import require_not_read_only

    require_not_read_only(settings_path, "settings file")
    backup = _backup(settings_path, snap.data) if snap.exists else None
    previous = read_record(settings_path, role)
    _replace(snap, new)
    original = snap.data if snap.exists else None
    record = inst.new_record(settings_path, role, original, new, backup, command, extra)
    record["installed_at"] = utc_now()
    # Was any of our handlers already in the file? Then its bytes are not the pre-install original.
    had_ours = any(inst.find_entries(settings, mark, event=event) for event in inst.EVENTS)
    if had_ours:
        from harness.fileops import sha256_bytes

        if previous and not previous.get("uninstalled_at") and previous.get("written_sha256") == sha256_bytes(snap.data):
            # Only our own lines changed since our last write: the pre-install original still holds.
            for key in ("original_existed", "original_sha256", "backup"):
                record[key] = previous.get(key)
        else:
            record["backup"] = None  # edited by hand since: restore structurally, never from a stale copy
    write_record(settings_path, role, record)
    return change.action, change.detail, backup


def apply_remove(settings_path, role, mark, dry_run=False, out=None, remove=None):
    """Remove our handler. Returns ``(action, backup)``; action as in ``install.plan_uninstall``."""
    out = out or sys.stdout
    snap, settings = read_settings(settings_path)
    if not snap.exists:
        return "absent", None
    record = read_record(settings_path, role)
    action, data = inst.plan_uninstall(snap.data, settings, mark, record, _backups(settings_path), remove=remove)
    if action == "absent":
        return action, None
    if dry_run:
        out.write(inst.unified_diff(snap.data, b"" if action == "delete" else data, settings_path))
        if action == "delete":
            out.write("(the file would be deleted: memory-router created it and it is unchanged since)\n")
        return "dry-run", None
    from harness.fileops import require_not_read_only

    require_not_read_only(settings_path, "settings file")
    backup = _backup(settings_path, snap.data)
    if action == "delete":
        snap.remove()  # under the lock, moved aside and compared, put back if changed
    else:
        _replace(snap, data)
    if record is not None:
        record["uninstalled_at"] = utc_now()
        record["uninstall_action"] = action
        record["written_sha256"] = None
        write_record(settings_path, role, record)
    return action, backup


def report_write(action, detail, backup, settings_path, what):
    messages = {
        "added": f"installed {what} in {settings_path} ({detail})",
        "updated": f"updated {what} in {settings_path} ({detail})",
        "unchanged": f"{what} already installed in {settings_path} ({detail}); nothing changed",
        "restore": f"removed {what} from {settings_path}: restored, byte for byte, the file as it was before "
                   "memory-router changed it",
        "write": f"removed {what} from {settings_path}; every other key and hook kept",
        "delete": (f"removed {what}: deleted {os.path.realpath(settings_path)}, the file the link {settings_path} "
                   "points to, which memory-router had created and nobody changed; the link is kept"
                   if os.path.islink(settings_path) else
                   f"removed {what}: deleted {settings_path}, which memory-router had created and nobody changed"),
        "absent": f"{what} is not installed in {settings_path}; nothing changed",
    }
    if action in messages:
        print(messages[action])
    if backup:
        print(f"backup of the previous file: {backup}")
