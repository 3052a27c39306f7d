"""``memory-router uninstall``'s model beyond the hook removal itself (``harness.install.hooks``):

- the guard: a slim MEMORY.md moves most memories out of the always-loaded index and leaves them
  to the router, so taking away the last router hook (``harness.install.routes``) while the live
  index is slim would strand them; refused unless rolled back first (``--rollback``) or forced;
- the rollback ``--rollback`` and ``--all`` do first (``slim rollback``'s: the newest render
  archive, checked against its record, the current file archived before it is replaced);
- ``--all``'s undo of init (``harness.setuprecord``): each file init wrote and nobody
  changed since is deleted (or its original restored), a changed one is kept and named; the
  directories init created, when empty; the project's state folder, ``.claude/memory-router/``.
"""

import os
import re

from harness import printedcommands
from harness import project as proj
from router.errors import MemoryRouterError, RefusedError
from router.removal import remove_owned
from router.safeio import open_regular


def live_index(project, memory_dir=None):
    """``{"memory_dir", "path", "slim"}``: the MEMORY.md Claude Code loads for ``project`` (the
    config's memory_dir, else its default location) and whether it is a slim index."""
    from canaries.memoryindex import is_slim_index
    from harness.memorydir import read_memory_index

    try:
        config = proj.project_config(project)
    except MemoryRouterError:
        config = None  # a broken config must not block taking the hooks out
    directory, _how = proj.resolve_memory_dir(memory_dir, config, project)
    path, text = read_memory_index(directory)
    return {"memory_dir": directory, "path": path, "slim": text is not None and is_slim_index(text)}


def stranded(project, scopes, memory_dir=None):
    """The live index (``live_index``) when it is slim and an uninstall of ``scopes`` would leave
    no router hook for ``project`` (in another scope, by hand, or by an enabled plugin); else
    ``None``."""
    from harness.install import routes

    live = live_index(project, memory_dir)
    if not live["slim"]:
        return None
    # a hook whose program is gone, or disableAllHooks, is no router (routes.working_routes)
    if routes.left_after_uninstall(routes.working_routes(project)[0], scopes):
        return None
    return live


def refuse_stranding(live, what):
    raise RefusedError(f"{live['path']} is a slim index: most memories reach a prompt only through the router, and "
                       f"{what} would leave no router hook for this project (no other scope, no plugin); "
                       "nothing was written",
                       fix="pass --rollback to restore the flat MEMORY.md first (slim rollback), or --force to "
                           "uninstall anyway (those memories then reach no prompt until slim rollback)")


def rollback(memory_dir):
    """``slim rollback`` of the live index in ``memory_dir``: the newest render archive, refused
    when it has no integrity record. Returns ``(restored from, archive of the slim file)``."""
    from harness.archives import read_verified_archive
    from harness.fileops import Snapshot, require_not_read_only
    from harness.memorydir import index_path
    from harness.slim import index as slim
    from harness.slim import live

    live_path = index_path(memory_dir)
    archive_path = live.resolve_archive(None, memory_dir, live_path)
    restored, verified = read_verified_archive(archive_path)
    if not verified:
        raise RefusedError(f"the newest archive {archive_path} has no integrity record, so it cannot be checked; "
                           "nothing was written",
                           fix="restore it yourself: "
                               + printedcommands.memory_router("slim", "rollback", "--archive", archive_path)
                               + ", then uninstall")
    snapshot = Snapshot(live_path, "MEMORY.md")
    require_not_read_only(live_path, "MEMORY.md")
    saved = live.archive(memory_dir, slim.PRE_ROLLBACK_STEM, snapshot.data) if snapshot.exists else None
    live.replace_live(snapshot, restored, saved)
    return archive_path, saved


# --------------------------------------------------------------------------- --all

STATE_DIRS = ("backups", "locks", "init-originals")  # what memory-router writes in its state folder


def undo_files(project, record, dry_run=False):
    """Undo the files init wrote (``setuprecord.plan_undo``). Returns ``[(path, action, why)]``,
    action as planned (``keep`` and ``gone`` change nothing)."""
    from harness.fileops import Snapshot
    from harness import setuprecord

    if record is None:
        return []
    done = []
    for path, action, why in setuprecord.plan_undo(record, project):
        try:
            if not dry_run and action == "delete":
                # under the lock, hash-checked, put back if it changed meanwhile; never outside the project
                Snapshot(path, "file").remove(within=[project])
            elif not dry_run and action == "restore":
                entry = next(e for e in record["files"] if e.get("path") == path)
                with open_regular(entry["original"], "rb") as handle:
                    Snapshot(path, "file").replace(handle.read())
        except (MemoryRouterError, OSError) as err:
            # swapped for a FIFO, changed, unreadable: named and kept, and the rest still undone
            action, why = "keep", str(err)
        done.append((path, action, why))
    return done


def remove_recorded_dirs(project, record, dry_run=False):
    """The directories init recorded creating, deepest first, each removed only when it is empty
    and inside the project (``router.removal``: an absolute or ``..`` entry elsewhere, a symlink,
    a FIFO stay). Returns ``[(directory, why kept)]``; a directory that still holds files (yours)
    is not listed."""
    kept = []
    for directory in reversed((record or {}).get("dirs") or []):
        if not isinstance(directory, str):
            continue
        full = os.path.join(project, directory)
        if dry_run:
            continue
        why = remove_owned(full, [project], directory=True)
        if why is not None and not why.startswith("it is not empty"):
            kept.append((directory, str(why)))
    return kept


def remove_state_dir(project, dry_run=False, removed_roles=("router",)):
    """Delete the project's ``.claude/memory-router/``: its records (``*.json``), backups, lock
    files and .gitignore, which memory-router wrote; anything else in it is kept. Returns
    ``(state dir, [kept names])``; ``.claude/`` itself goes too when that leaves it empty and init
    created it (``uninstall --all`` removes it after the records are read)."""
    from harness.fileops import STATE_GITIGNORE

    state = proj.project_state_dir(project)
    kept = []
    try:
        names = sorted(os.listdir(state))
    except OSError:
        return state, kept
    needed = still_needed_records(state, removed_roles if dry_run else ())
    ours = []
    for name in names:
        path = os.path.join(state, name)
        if path in needed:
            kept.append(f"{name} (the install record uninstall --gate or --mcp still needs)")
            continue
        if (name.endswith(".json") and os.path.isfile(path) and not os.path.islink(path)) or (
                name in STATE_DIRS and os.path.isdir(path) and not os.path.islink(path)) or (
                name == ".gitignore" and _reads(path) == STATE_GITIGNORE):
            ours.append(path)
        else:
            kept.append(name)
    for path in ours:
        if os.path.isdir(path):
            # Inside backups/, locks/ and init-originals/ only the regular files named as
            # memory-router names them go; anything else (a user's file) stays and is named.
            kept += [os.path.join(os.path.basename(path), name) for name in _ours_in(path, dry_run, needed)]
    for path in ours:
        if dry_run or (kept and os.path.basename(path) == ".gitignore"):
            continue  # a file kept there stays out of git status
        why = remove_owned(path, [state], directory=os.path.isdir(path) and not os.path.islink(path))
        if why is not None and not why.startswith("it is not empty"):
            kept.append(f"{os.path.basename(path)} ({why})")
    if not dry_run and not kept:
        remove_owned(state, [project], directory=True)
    return state, kept


# What memory-router names the files of its state folders: settings backups <stem>-<stamp>.json,
# locks <quoted path>.lock, init's originals <n>-<file name>.
_STATE_FILE_NAMES = {"backups": re.compile(r"[^/]+-[0-9TZ:.-]+\.json\Z"), "locks": re.compile(r"[^/]+\.lock\Z"),
                     "init-originals": re.compile(r"[0-9]+-[^/]+\Z")}


def still_needed_records(state, removed_roles=()):
    """The install records (and the backups they name) in ``state`` that a later uninstall still
    needs: those of a settings file or .mcp.json that still holds an install of ours (the gate, an
    MCP server: ``uninstall --all`` leaves them), every record naming that file included (the
    router's says whether memory-router created it). Without them that uninstall would leave the
    file memory-router created behind as ``{}``. ``removed_roles``: the installs this run takes out
    (a dry run has not marked their records yet)."""
    import json

    records = {}
    try:
        names = sorted(os.listdir(state))
    except OSError:
        return set()
    for name in names:
        path = os.path.join(state, name)
        if not name.endswith(".json") or name == "init.json":
            continue
        text = _reads(path)
        try:
            record = json.loads(text) if text is not None else None
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("settings"), str):
            records[path] = record
    live = {r["settings"] for path, r in records.items()
            if r.get("written_sha256") and not r.get("uninstalled_at") and os.path.lexists(r["settings"])
            and os.path.basename(path)[:-len(".json")] not in removed_roles}
    needed = {path for path, r in records.items() if r["settings"] in live}
    return needed | {records[path]["backup"] for path in list(needed) if isinstance(records[path].get("backup"), str)}


def _ours_in(directory, dry_run, needed=frozenset()):
    """Delete (unless ``dry_run``) the regular files of a state folder named as memory-router names
    them, except the ``needed`` ones; return the names of everything else, which stays."""
    pattern = _STATE_FILE_NAMES[os.path.basename(directory)]
    others = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if path in needed:
            others.append(f"{name} (a backup an install record still names)")
        elif pattern.fullmatch(name) and os.path.isfile(path) and not os.path.islink(path):
            why = None if dry_run else remove_owned(path, [directory])
            if why is not None:
                others.append(f"{name} ({why})")
        else:
            others.append(name)
    return others


def undo_init(project, record, dry_run=False, gate=False):
    """``--all`` after the hooks are out: the files init wrote, the state folder, the directories
    init created (deepest first, each only when empty). Returns ``{"files", "state_dir",
    "state_kept", "state_removed"}``."""
    files = undo_files(project, record, dry_run)
    existed = os.path.isdir(proj.project_state_dir(project))
    state, kept = remove_state_dir(project, dry_run, ("router", "gate") if gate else ("router",))
    dirs_kept = remove_recorded_dirs(project, record, dry_run)
    return {"files": files, "state_dir": state, "state_kept": kept, "state_removed": existed and not kept,
            "dirs_kept": dirs_kept}


def _reads(path):
    try:
        with open_regular(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None
