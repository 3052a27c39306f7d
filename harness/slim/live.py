"""The live MEMORY.md that ``slim render`` and ``slim rollback`` write: which directory holds it,
the render's plan (everything read and the slim text built before anything is written), the
archive kept before every write, and the archive a rollback restores. The slim format itself is
``harness.slim.index``; ``harness.slim.cli`` is the face."""

import os

from canaries.memoryindex import is_slim_index
from harness.memorydir import index_path, require_memory_dir
from harness.slim import index as slim
from router.errors import InputError, RefusedError

# harness.fileops and harness.archives (hashlib, tempfile) are imported where they are used, so
# `memory-router --help` does not pay for them.


def resolve_live_dir(memory_dir, config):
    """The memory directory whose MEMORY.md is written: --memory-dir, else the config's
    memory_dir; never a guess (``harness.project.resolve_memory_dir``'s policy for writers)."""
    return resolve_live_store(memory_dir, config)[0]


def resolve_live_store(memory_dir, config, clusters=None, with_clusters=False):
    """``(memory directory, harness.project.Store)``: the directory as ``resolve_live_dir`` finds
    it, and, ``with_clusters``, the cluster file as the hook finds it (never the bundled example
    store: its router must never land in a live file), each with how it was found."""
    from harness.project import Store, resolve_cluster_file, resolve_memory_dir

    directory, how = resolve_memory_dir(memory_dir, config)
    directory = require_memory_dir(directory, fix="pass the directory that holds your MEMORY.md")
    cluster_file, cluster_from = (resolve_cluster_file(clusters, config) if with_clusters
                                  else (None, "not read"))
    return directory, Store(cluster_file, cluster_from, directory, how, config)


def archive(directory, stem, data):
    from harness import archives

    # Recorded (size, sha256): rollback checks an archive against its record before restoring it.
    return archives.write_archive(directory, stem, ".md", data, record=True)


def replace_live(snapshot, data, archive_path):
    """Re-check the snapshot, then write ``data`` atomically over the live file and read it back."""
    snapshot.replace(data, note=f"; the archive {archive_path} is kept" if archive_path else "")


def decode(data, path):
    from router.errors import decode_utf8

    return decode_utf8(data, path, "MEMORY.md")


def plan_render(memory_dir=None, clusters=None, config_path=None, hot=None):
    """Read everything and build the slim text; raises before anything could be written."""
    from harness.memorydir import parse_index_text, read_memory_files
    from router.configfile import load_config
    from router.store.clusterfile import load_cluster_file

    config = load_config(config_path)
    memory_dir, store = resolve_live_store(memory_dir, config, clusters, with_clusters=True)
    cluster_path = store.cluster_file
    if cluster_path is None:
        raise InputError("no cluster file found", fix="pass --clusters FILE or set clusters in memory-router.toml")
    index = load_cluster_file(cluster_path)

    from harness.fileops import Snapshot

    live_path = index_path(memory_dir)
    snapshot = Snapshot(live_path, "MEMORY.md")
    if not snapshot.exists:
        raise InputError("no MEMORY.md to slim", path=live_path, fix="pass the memory directory that holds MEMORY.md")
    before = decode(snapshot.data, live_path)

    files = read_memory_files(memory_dir)
    if hot:
        sources = [("--hot", hot)]
    else:
        config_label = f"hot_strip in {config['source']}" if config and config.get("source") else "hot_strip"
        # One source per memory file, so an unknown slug's error names the file to fix.
        sources = [(config_label, (config or {}).get("hot_strip") or [])]
        sources += [(f"hot: true in {found.path}", [found.slug]) for found in files if found.hot]
    hot, origin = slim.merge_hot_slugs(*sources)
    strip = slim.build_hot_strip(index, hot, origin)
    router = slim.render_layer0_router(index)
    after = slim.assemble_slim_index(strip, router)

    flat_slugs = [entry.slug for entry in parse_index_text(before)]
    return {
        "flat_slugs": flat_slugs,
        "memory_dir": memory_dir,
        "live_path": live_path,
        "cluster_path": os.path.abspath(cluster_path),
        "index": index,
        "snapshot": snapshot,
        "before": before,
        "after": after,
        "hot": hot,
        "origin": origin,
        "unrouted": slim.unrouted_slugs(flat_slugs, index, hot),
        "already_slim": is_slim_index(before),
        "types": {found.slug: found.type for found in files if found.type},
        "store": store,
        "config_source": (config or {}).get("source"),
    }


def profile_leaving(plan, memory_type):
    """The ``user`` memories (the profile: who the user is, how they want answers) of the current
    index that the slim index no longer loads on every prompt; ``memory_type(slug)`` gives a type."""
    return [slug for slug in plan["flat_slugs"] if slug not in plan["hot"] and memory_type(slug) == "user"]


def router_verdict(project_dir):
    """Whether a router would send what a slim index moves out of MEMORY.md: ``{"ok", "route",
    "message", "routes"}``. ``ok`` when our prompt hook is wired for ``project_dir`` in a settings
    scope or by an enabled plugin, and one of them passes a trial run (``harness.install.routes``)."""
    from harness.install import routes as routing

    wired = routing.project_routes(project_dir)
    if not wired:
        return {"ok": False, "route": None, "routes": [],
                "message": "no memory-router prompt hook for this project in its local, project or user settings, "
                           "and no enabled plugin runs one"}
    found, why = routing.working_routes(project_dir, routes=wired)
    listed = [{"scope": r.scope, "where": r.where, "command": r.command} for r in wired]
    if not found:
        # disableAllHooks, or every hook's program gone (its venv deleted): none would run
        return {"ok": False, "route": None, "routes": listed,
                "message": f"the router hook is wired but none runs: {why}"}
    route, message = routing.trial(found, project_dir)
    if route is None:
        return {"ok": False, "route": None, "routes": listed,
                "message": f"the router hook is wired but its trial run failed: {message}"}
    return {"ok": True, "route": {"scope": route.scope, "where": route.where, "command": route.command},
            "routes": listed, "message": f"{route.where} ({route.scope}): trial run {message}"}


def apply_render(plan):
    """Archive the live file, then replace it with the slim text. Returns the archive path."""
    snapshot = plan["snapshot"]
    if not snapshot.unchanged():
        raise RefusedError(f"{snapshot.path} changed since it was read; nothing was written",
                           fix="look at the change, then run the command again")
    from harness.fileops import require_not_read_only

    require_not_read_only(snapshot.path, "MEMORY.md")
    archive_path = archive(plan["memory_dir"], slim.ARCHIVE_STEM, snapshot.data)
    replace_live(snapshot, plan["after"].encode("utf-8"), archive_path)
    return archive_path


def resolve_archive(explicit, memory_dir, live_path):
    if explicit:
        candidates = [explicit]
        if not os.path.isabs(explicit):
            candidates.append(os.path.join(memory_dir, explicit))
        for candidate in candidates:
            # exists, not isfile: a FIFO or directory named here gets the reader's message.
            if os.path.exists(candidate):
                path = os.path.abspath(candidate)
                break
        else:
            raise InputError("archive not found", path=explicit,
                             fix="pass an existing archive file (e.g. MEMORY.archive-<stamp>.md)")
        if os.path.exists(live_path) and os.path.samefile(path, live_path):
            raise InputError("the archive named is the live MEMORY.md itself", path=path,
                             fix="pass an archive file")
        return path
    from harness.archives import scan_archives

    # Regular files only, named exactly (harness.archives): a directory or a symlink named like
    # the newest archive is nothing a render wrote.
    names, strays = scan_archives(memory_dir, slim.ARCHIVE_STEM, ".md")
    name = names[-1] if names else None
    if name is None and strays:
        stray, kind = strays[-1]
        kind = "a named pipe (FIFO)" if kind == "a FIFO" else kind
        raise InputError(f"{stray} is {kind}, not an archive a render wrote; nothing was written",
                         path=os.path.join(memory_dir, stray), fix="pass --archive FILE with a real archive")
    if name is None:
        raise RefusedError(f"no {slim.ARCHIVE_STEM}-<UTC stamp>.md archive in {memory_dir}; nothing was written",
                           fix="pass --archive FILE")
    return os.path.join(memory_dir, name)


def plan_prune(memory_dir, keep):
    """``[(archive path, record path or None)]`` that ``slim prune --keep keep`` deletes, oldest
    first per kind; each archive goes with its integrity record (``harness.archives``). Only
    regular files named exactly as ``write_archive`` names them are counted or listed; a record
    that is not a regular file stays (``prune_strays`` names both)."""
    import stat

    from harness.archives import archive_record_path, list_archives

    if keep < 1:
        raise ValueError("keep at least one archive")
    doomed = []
    for stem in (slim.ARCHIVE_STEM, slim.PRE_ROLLBACK_STEM):
        # write_archive's names, oldest first (harness.archives owns the naming)
        for name in list_archives(memory_dir, stem, ".md")[:-keep]:
            path = os.path.join(memory_dir, name)
            record = archive_record_path(path)
            try:
                regular = stat.S_ISREG(os.lstat(record).st_mode)
            except OSError:
                regular = False
            doomed.append((path, record if regular else None))
    return doomed


def prune_strays(memory_dir, doomed=()):
    """``[(path, kind)]`` prune leaves alone although named like what it deletes: entries named
    exactly like an archive that are not regular files, and the records of ``doomed`` archives
    that are not regular files. Named as skipped, so a directory called like an archive neither
    stops the run nor is mistaken for one."""
    from harness.archives import archive_record_path, file_kind, scan_archives

    strays = []
    for stem in (slim.ARCHIVE_STEM, slim.PRE_ROLLBACK_STEM):
        strays += [(os.path.join(memory_dir, name), kind) for name, kind in scan_archives(memory_dir, stem, ".md")[1]]
    for path, record in doomed:
        if record is None:
            record = archive_record_path(path)
            try:
                strays.append((record, file_kind(os.lstat(record).st_mode)))
            except OSError:
                pass
    return strays


def apply_prune(doomed, skipped=None):
    """Delete each archive, then its record (a record left without its archive is harmless; an
    archive left without its record would be refused by a later rollback). Returns the paths
    deleted. A target that is no longer a regular file (replaced since the plan) is not deleted
    but added to ``skipped`` as ``(path, kind)``; any other error stops at the file it names, with
    its real cause, keeping everything after it."""
    import stat

    from harness.archives import file_kind
    from router.removal import remove_owned

    def refuse(err):
        raise RefusedError(f"cannot delete {target}: {err.strerror or err}; {len(deleted)} file(s) were "
                           "deleted before it, the rest are kept", fix=deletion_fix(err)) from None

    deleted = []
    for path, record in doomed:
        for target in (path, record):
            if target is None:
                continue
            try:
                mode = os.lstat(target).st_mode
            except FileNotFoundError:
                continue
            except OSError as err:
                refuse(err)
            kept = remove_owned(target, os.path.dirname(os.path.abspath(target))) if stat.S_ISREG(mode) else None
            if not stat.S_ISREG(mode) or (kept is not None and kept.error is None):
                if skipped is not None:   # not a regular file (now): never memory-router's to delete
                    skipped.append((target, file_kind(mode) if not stat.S_ISREG(mode) else str(kept)))
                continue
            if kept is not None:
                refuse(kept.error)
            deleted.append(target)
    return deleted


def deletion_fix(err):
    """The fix for an ``OSError`` from deleting an archive, by its cause: it said "fix the
    permissions" for every error, a directory named like an archive included."""
    import errno

    if err.errno in (errno.EACCES, errno.EPERM):
        return "make the memory directory writable by you (deleting a file needs write permission on its directory), " \
               "then run prune again"
    if err.errno == errno.EROFS:
        return "the memory directory is on a read-only file system; remount it writable, then run prune again"
    if err.errno == errno.EBUSY:
        return "a program is using the file; close it, then run prune again"
    return "look at that file (prune deletes only the regular files slim render and rollback wrote), " \
           "then run prune again"
