"""Reading and writing the JSON files memory-router installs into: Claude Code's settings.json (the
router, session, gate and sentinel hooks) and a project's .mcp.json (``harness.install.mcpjson``).

Every write: parse first (invalid JSON is refused, exit 2, file untouched), back up the current
bytes to ``<state dir>/backups/`` (``harness.archives.write_archive``), refuse if the file
changed since it was read, write atomically as a minimal edit, and keep a record of what was
written in ``<state dir>/<role>.json`` so uninstall can give back the exact original bytes. The
state dir of a settings file is ``harness.project.state_dir_for`` it; .mcp.json shares its
project's. One set of records and backups for every file: the transforms of the JSON itself are
pure, in ``harness.install.settings`` (and ``mcpjson`` for its own shape).
"""

import json
import os
import sys

from harness import project as proj
from harness.install import hookcommand, jsonedit
from harness.setuprecord import check_record_times
from harness.install import settings as inst
from harness.output import unified_diff
from router.errors import InputError, RefusedError
from router.safeio import read_regular_bytes

ROUTER_ROLE = "router"
SENTINEL_ROLE = "sentinel"
GATE_ROLE = "gate"
BACKUP_DIRNAME = "backups"


def target_settings(user=False, project=None, scope=None):
    """``(settings path, scope)``: the user's settings.json (``user``, or scope ``user``), the
    project's .claude/settings.local.json (scope ``local``) or its .claude/settings.json."""
    if user or scope == "user":
        return proj.user_settings_path(), "user"
    directory = proj.project_dir(project)
    if not os.path.isdir(directory):
        raise InputError("project directory does not exist", path=directory,
                         fix="pass --project with an existing directory (or --user)")
    return proj.project_settings_path(directory, local=scope == "local"), scope or "project"


def read_settings(path):
    """``(Snapshot, settings dict)``; a missing file reads as ``{}``."""
    from harness.fileops import Snapshot

    snap = Snapshot(path, "settings file")
    settings = inst.parse_settings(snap.data, path) if snap.exists else {}
    return snap, settings


def scan_settings(project_dir):
    """Every settings file Claude Code would read for ``project_dir``: parsed, with our entries
    (what doctor reports and the checklist checks)."""
    found = []
    for label, path in proj.settings_locations(project_dir):
        item = {"label": label, "path": path, "exists": os.path.lexists(path), "error": None,
                "router": [], "sentinel": [], "session": [], "disable_all_hooks": False}
        if item["exists"]:
            try:
                _snap, settings = read_settings(path)
            except InputError as err:
                item["error"] = str(err)
            else:
                item["router"] = inst.find_entries(settings, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook)
                item["sentinel"] = inst.find_entries(settings, hookcommand.SENTINEL_MARK)
                item["session"] = inst.find_entries(settings, hookcommand.ROUTER_MARK,
                                                    also=hookcommand.runs_session_start, event=inst.SESSION_EVENT)
                item["disable_all_hooks"] = inst.disable_all_hooks(settings)
        found.append(item)
    return found


# --------------------------------------------------------------------------- a re-install


def existing_entry(settings_path):
    """Our entry already in ``settings_path`` (the first), or ``None``; an unreadable file is
    left for ``apply_add`` to report."""
    from router.errors import MemoryRouterError

    if not os.path.lexists(settings_path):
        return None
    try:
        _snap, settings = read_settings(settings_path)
    except MemoryRouterError:
        return None
    found = inst.find_entries(settings, hookcommand.ROUTER_MARK)
    return found[0] if found else None


def carry_over(settings_path, clusters=None, config=None):
    """What a re-install keeps from the entry it replaces, so it never silently reverts a hand
    edit: ``--clusters``/``--config`` not given again, and a timeout the user changed. Returns
    ``(options, timeout, notes)``; the notes say what was kept and what changes."""
    options = {"clusters": clusters, "config": config, "as_written": ()}
    timeout = hookcommand.HOOK_TIMEOUT_SECONDS
    notes = []
    existing = existing_entry(settings_path)
    if existing is None:
        return options, timeout, notes
    kept = []
    for name in ("clusters", "config"):
        old = hookcommand.command_option(existing.command, name)
        if old and not options[name]:
            options[name] = old
            kept.append(name)
            notes.append(f"kept --{name} {old} from the existing entry (pass --{name} to change it)")
        elif old and os.path.abspath(options[name]) != os.path.abspath(
                hookcommand.expand_project_dir(old, os.path.dirname(os.path.dirname(os.path.abspath(settings_path))))):
            notes.append(f"--{name} changes from {old} to {os.path.abspath(options[name])}")
    options["as_written"] = tuple(kept)
    if isinstance(existing.timeout, (int, float)) and not isinstance(existing.timeout, bool) \
            and existing.timeout > 0 and existing.timeout != timeout:
        timeout = existing.timeout
        notes.append(f"kept the entry's timeout of {existing.timeout} s (the default is {hookcommand.HOOK_TIMEOUT_SECONDS} s)")
    return options, timeout, notes


# --------------------------------------------------------------------------- records and backups


def record_path(path, role, state_dir=None):
    return os.path.join(state_dir or proj.state_dir_for(path), f"{role}.json")


def read_record(path, role, state_dir=None):
    """The install record of ``role`` for the file at ``path``, or ``None``. A time in it that is
    not a real one is refused (``check_record_times``)."""
    where = record_path(path, role, state_dir)
    try:
        text = read_regular_bytes(where).decode("utf-8")
        record = json.loads(text)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # a damaged record only costs the byte-exact restore; uninstall still works
    if not isinstance(record, dict) or record.get("settings") != os.path.abspath(path):
        return None
    check_record_times(text, record, where, "uninstall then takes our entry out without the byte-exact restore")
    return record


def write_record(path, role, record, state_dir=None):
    from harness.fileops import atomic_write, ensure_state_dir

    target = record_path(path, role, state_dir)
    ensure_state_dir(os.path.dirname(target))  # with its .gitignore: git status stays as it was
    atomic_write(target, json.dumps(record, indent=2) + "\n")


def _backup_dir(path, state_dir=None):
    return os.path.join(state_dir or proj.state_dir_for(path), BACKUP_DIRNAME)


def _backup_stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def backups(path, state_dir=None, stem=None):
    """``[(path, bytes)]`` of the file's backups, newest first."""
    directory = _backup_dir(path, state_dir)
    prefix = (stem or _backup_stem(path)) + "-"
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix) and n.endswith(".json")]
    except OSError:
        return []
    out = []
    for name in sorted(names, key=lambda n: (os.path.getmtime(os.path.join(directory, n)), n), reverse=True):
        found = os.path.join(directory, name)
        try:
            out.append((found, read_regular_bytes(found)))
        except OSError:
            continue
    return out


def backup(path, data, state_dir=None, stem=None):
    """Archive ``data`` (the file's bytes now) among its backups; returns the archive's path."""
    from harness.archives import write_archive
    from harness.fileops import ensure_state_dir

    directory = _backup_dir(path, state_dir)
    try:
        ensure_state_dir(os.path.dirname(directory))
        os.makedirs(directory, exist_ok=True)
        return write_archive(directory, stem or _backup_stem(path), ".json", data)
    except RefusedError:
        raise
    except OSError as err:
        raise RefusedError(f"cannot back up {path} into {directory}: {err.strerror or err}; "
                           "nothing was written", fix="make that directory writable") from None


def _refuse_dangling_link(path):
    """A settings.json that is a symlink to nothing (a dotfiles link whose file is not there yet):
    writing through it would create a file somewhere else, unasked. Refuse, naming both."""
    if os.path.islink(path) and not os.path.exists(path):
        target = os.path.realpath(path)
        raise RefusedError(f"{path} is a symlink to {target}, which does not exist; nothing was written",
                           fix=f"create {target} (even as {{}}) if the link is meant, or remove the link, then "
                               "run the command again")


# --------------------------------------------------------------------------- writes


def write_change(path, role, snap, before, after, command, had_ours, dry_run=False, out=None, state_dir=None,
                 stem=None, extra=None, what="settings file"):
    """Write ``after`` (the parsed file with our entry added or changed; ``before`` as read in
    ``snap``) as a minimal edit, backed up and recorded. Returns the backup's path, or
    ``"dry-run"`` after printing the diff. ``had_ours``: one of our entries was there already, so
    the bytes read are not the pre-install original (the record keeps the earlier one)."""
    from router.store.learned import utc_stamp
    from harness.fileops import require_not_read_only, sha256_bytes

    if snap.exists:
        new = jsonedit.render_change(snap.data, before, after)
    else:
        new = jsonedit.render_settings(after, jsonedit.JsonStyle())
    if dry_run:
        (out or sys.stdout).write(unified_diff(snap.data, new, f"{path} (now)", f"{path} (after)"))
        return "dry-run"
    require_not_read_only(path, what)
    saved = backup(path, snap.data, state_dir, stem) if snap.exists else None
    previous = read_record(path, role, state_dir)
    snap.replace(new)
    record = inst.new_record(path, role, snap.data if snap.exists else None, new, saved, command, extra)
    record["installed_at"] = utc_stamp()
    if had_ours:
        if previous and not previous.get("uninstalled_at") and previous.get("written_sha256") == sha256_bytes(snap.data):
            # Only our own lines changed since our last write: the pre-install original still holds.
            for key in ("original_existed", "original_sha256", "backup"):
                record[key] = previous.get(key)
        else:
            record["backup"] = None  # edited by hand since: restore structurally, never from a stale copy
    write_record(path, role, record, state_dir)
    return saved


def created_by_memory_router(settings_path):
    """True when an install record of any role (the router's, the gate's, the sentinel's) says
    memory-router created ``settings_path`` (it did not exist before that install)."""
    return any(record is not None and record.get("original_existed") is False
               for record in (read_record(settings_path, role) for role in (ROUTER_ROLE, GATE_ROLE, SENTINEL_ROLE)))


def write_removal(path, role, snap, action, data, record, dry_run=False, out=None, state_dir=None, stem=None,
                  what="settings file"):
    """Carry out ``plan_removal``'s ``action`` (``delete``, ``restore`` or ``write`` ``data``):
    back up, write or delete, and mark the record uninstalled. Returns the backup's path, or
    ``"dry-run"`` after printing the diff."""
    from router.store.learned import utc_stamp
    from harness.fileops import require_not_read_only

    if dry_run:
        out = out or sys.stdout
        out.write(unified_diff(snap.data, b"" if action == "delete" else data, f"{path} (now)", f"{path} (after)"))
        if action == "delete":
            out.write("(the file would be deleted: memory-router created it and it is unchanged since)\n")
        return "dry-run"
    require_not_read_only(path, what)
    saved = backup(path, snap.data, state_dir, stem)
    if action == "delete":
        snap.remove()  # under the lock, moved aside and compared, put back if changed
    else:
        snap.replace(data)
    if record is not None:
        record.update(uninstalled_at=utc_stamp(), uninstall_action=action, written_sha256=None)
        write_record(path, role, record, state_dir)
    return saved


def apply_add(settings_path, role, mark, command, dry_run=False, conflicts=None, extra=None, out=None,
              timeout=hookcommand.HOOK_TIMEOUT_SECONDS, more=(), add=None):
    """Add (or update) our handler in ``settings_path``, and the handlers in ``more`` (tuples
    ``(event, command, matcher)``), in one write. Returns ``(action, detail, backup)``. ``add``
    replaces ``inst.add_entry`` for another event's handler (``harness.install.gate``)."""
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
    had_ours = any(inst.find_entries(settings, mark, event=event) for event in inst.EVENTS)
    saved = write_change(settings_path, role, snap, settings, change.settings, command, had_ours, dry_run, out,
                         extra=extra)
    if saved == "dry-run":
        return "dry-run", change.detail, None
    return change.action, change.detail, saved


def apply_remove(settings_path, role, mark, dry_run=False, out=None, remove=None):
    """Remove our handler. Returns ``(action, backup)``; action as in ``install.plan_uninstall``."""
    snap, settings = read_settings(settings_path)
    if not snap.exists:
        return "absent", None
    record = read_record(settings_path, role)
    action, data = inst.plan_uninstall(snap.data, settings, mark, record, backups(settings_path), remove=remove)
    if action == "absent":
        return action, None
    left = inst.parse_settings(data, settings_path) if action != "delete" else None
    if left is not None and not {k: v for k, v in left.items() if not (k == "hooks" and v == {})} \
            and created_by_memory_router(settings_path):
        # Nothing is left in a file memory-router created (the router's and the gate's installs share
        # it, uninstalled in either order): it goes, rather than stay behind as {}.
        action, data = "delete", None
    saved = write_removal(settings_path, role, snap, action, data, record, dry_run, out)
    if saved == "dry-run":
        return "dry-run", None
    return action, saved


def report_write(action, detail, backup, settings_path, what):
    for line in write_lines(action, detail, backup, settings_path, what):
        print(line)


def write_lines(action, detail, backup, settings_path, what):
    """What ``report_write`` prints for one write (a list of lines)."""
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
        "absent": f"{what} is not installed in {settings_path}"
                  f"{'' if os.path.lexists(settings_path) else ' (there is no such file)'}; nothing changed",
    }
    lines = [messages[action]] if action in messages else []
    if backup:
        lines.append(f"backup of the previous file: {backup}")
    return lines
