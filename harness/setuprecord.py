"""What ``memory-router init`` (and, beside the cluster file, ``clusters enrich`` and ``learn``)
wrote into a project, kept so ``uninstall --all`` can undo exactly that: each file it created or changed with the sha256 it left (a file whose bytes still match is
one nobody changed since; any other is the user's now and is kept), the original bytes of a file
it edited (backed up beside the record), the directories it created and the scopes it installed
the hooks in. The record is ``<project>/.claude/memory-router/init.json``, in the state folder
whose .gitignore keeps it out of ``git status``.

Pure reading and planning, plus the record's own write; ``harness.init``, ``harness.clusters``
and ``harness.learn`` record (``recording``), ``harness.uninstall`` undoes. Below the commands in
the layers, so each command that writes in a project can record it."""

import contextlib
import json
import os

from harness import project as proj
from router.errors import InputError
from router.safeio import irregular_kind, read_regular_bytes

RECORD_NAME = "init.json"
# the commands that record what they write (an edited record's other names are not printed)
WRITERS = ("init", "clusters build", "clusters enrich", "learn")
ORIGINALS_DIRNAME = "init-originals"


def record_path(project):
    return os.path.join(proj.project_state_dir(project), RECORD_NAME)


def file_state(path):
    """``(exists, sha256 or None)`` of ``path`` now."""
    from harness.fileops import sha256_bytes

    try:
        return True, sha256_bytes(read_regular_bytes(path))
    except FileNotFoundError:
        return False, None
    except OSError:
        return os.path.lexists(path), None


def before(paths, dirs):
    """What a project holds before init writes: ``{path: (exists, sha256, bytes or None)}`` for
    each file and ``{dir: exists}`` for each directory init may create."""
    files = {}
    for path in paths:
        try:
            data = read_regular_bytes(path)
        except OSError:
            data = None
        exists, digest = file_state(path)
        files[os.path.abspath(path)] = (exists, digest, data)
    return {"files": files, "dirs": {os.path.abspath(d): os.path.isdir(d) for d in dirs}}


def read(project):
    """The record of ``project``, or ``None`` (none, or one that cannot be read: uninstall --all
    then undoes only what needs no record, the hooks)."""
    try:
        text = read_regular_bytes(record_path(project)).decode("utf-8")
        record = json.loads(text)
    except (OSError, ValueError):
        return None
    if not (isinstance(record, dict) and isinstance(record.get("files"), list)):
        return None
    # a time that is not a real one: the record was edited, so it is refused by its file:line:col
    check_record_times(text, record, record_path(project), "uninstall --all then undoes only the hooks")
    return record


def write(project, snapshot, scope, by="init"):
    """Record what init changed since ``snapshot`` (``before``): every file whose bytes differ, the
    directories that now exist and did not, the scope of the hooks; merged with an earlier
    record, whose entries keep their originals (a second init must not make init's own output
    the "original"). An edited file's original bytes are kept under ``init-originals/``. ``by``
    names the command that wrote (one of ``WRITERS``), for uninstall's lines."""
    from router.store.learned import utc_stamp
    from harness.fileops import atomic_write, ensure_state_dir

    previous = read(project) or {"files": [], "dirs": [], "scopes": []}
    known = {entry["path"]: entry for entry in previous["files"] if isinstance(entry, dict) and "path" in entry}
    for path, (existed, digest, data) in snapshot["files"].items():
        exists, now = file_state(path)
        if not exists or now == digest:
            continue
        entry = known.get(path)
        if entry is not None and existed and digest != entry.get("sha256"):
            # changed by someone since memory-router last wrote it, then rewritten (enrich keeps
            # hand rows): the file is theirs now, kept by uninstall --all
            entry.update(created=False, original=None, original_sha256=None)
        if entry is None:
            entry = {"path": path, "created": not existed, "original_sha256": digest, "original": None, "by": by}
            if existed and data is not None:
                state = ensure_state_dir(proj.project_state_dir(project))
                os.makedirs(os.path.join(state, ORIGINALS_DIRNAME), exist_ok=True)
                keep = os.path.join(state, ORIGINALS_DIRNAME, f"{len(known)}-{os.path.basename(path)}")
                atomic_write(keep, data)
                entry["original"] = keep
            known[path] = entry
        entry["sha256"] = now
    dirs = list(previous.get("dirs") or [])
    dirs += [d for d, existed in snapshot["dirs"].items() if not existed and os.path.isdir(d) and d not in dirs]
    scopes = list(previous.get("scopes") or [])
    if scope and scope not in scopes:
        scopes.append(scope)
    record = {"project": os.path.abspath(project), "written_at": previous.get("written_at"),
              "files": list(known.values()), "dirs": dirs, "scopes": scopes}
    if record == previous:
        return record  # a second init that changed nothing writes nothing
    record["written_at"] = utc_stamp()
    ensure_state_dir(proj.project_state_dir(project))
    atomic_write(record_path(project), json.dumps(record, indent=2) + "\n")
    return record


@contextlib.contextmanager
def recording(project, paths, by, dirs=()):
    """Record in ``project``'s init record each of ``paths`` (inside the project) that the block
    creates or changes, with the sha256 it leaves, so ``uninstall --all`` undoes it when nobody
    changed it since: what ``clusters enrich`` and ``learn`` write beside the cluster file. The
    block gets the snapshot; a file it creates whose name it learns only then (an archive) is
    added as ``snapshot["files"][path] = (False, None, None)``; each of ``dirs`` the block creates
    is recorded too (removed by uninstall --all once empty). Recorded even when the block
    fails or is interrupted: what it wrote stays undoable."""
    paths = [os.path.abspath(p) for p in paths if _inside(p, project)]
    snapshot = before(paths, [d for d in dirs if _inside(d, project)])
    try:
        yield snapshot
    finally:
        if any(file_state(p) != snapshot["files"][p][:2] for p in snapshot["files"]) or any(
                not existed and os.path.isdir(d) for d, existed in snapshot["dirs"].items()):
            write(project, snapshot, None, by)


def _inside(path, directory):
    real, root = os.path.realpath(path), os.path.realpath(directory)
    return real != root and real.startswith(root.rstrip(os.sep) + os.sep)


def plan_undo(record, project=None):
    """``[(path, action, why)]`` for each recorded file (``why`` names the command that wrote it,
    init for a record older than the entry's ``by``): ``delete`` (init created it and nobody
    changed it), ``restore`` (init edited it, nobody changed it since, and its original is kept),
    ``keep`` (changed since: the user's now; or, with ``project``, a path outside it, which init
    never writes: an edited record must not make uninstall delete anything else), ``gone``
    (already removed)."""
    out = []
    for entry in record.get("files") or []:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str):
            continue
        by = entry.get("by") if entry.get("by") in WRITERS else "init"
        exists, now = file_state(path)
        kind = irregular_kind(path) if os.path.lexists(path) else None
        if project is not None and not _inside(path, project):
            out.append((path, "keep", "outside the project, where init writes nothing"))
        elif not exists:
            out.append((path, "gone", "no longer there"))
        elif kind is not None or os.path.islink(path) and not _inside(os.path.realpath(path), project or "/"):
            out.append((path, "keep", kind or "it is a symlink out of the project, not a file init wrote"))
        elif not isinstance(entry.get("sha256"), str):
            out.append((path, "keep", "the record holds no hash of it, so it cannot be told unchanged"))
        elif now != entry.get("sha256"):
            out.append((path, "keep", f"changed since {by} wrote it"))
        elif entry.get("created"):
            out.append((path, "delete", f"{by} created it and nobody changed it"))
        elif entry.get("original") and (project is None or _inside(entry["original"], proj.project_state_dir(project))) \
                and file_state(entry["original"])[1] == entry.get("original_sha256"):
            out.append((path, "restore", f"{by} edited it and nobody changed it since"))
        else:
            out.append((path, "keep", f"{by} edited it but its original is not kept"))
    return out


RECORD_TIME_KEYS = ("installed_at", "uninstalled_at", "written_at")


def check_record_times(text, record, path, without):
    """Refuse (``InputError`` at the value's ``file:line:col``, with the fix) a record whose time
    is not a real UTC time as ``router.store.learned.utc_stamp`` writes it: memory-router wrote
    none such, so the record was edited and is not trusted. ``without`` says what still works
    once the record is deleted."""
    import re

    from router.store.learned import utc_stamp_problem

    for key in RECORD_TIME_KEYS:
        value = record.get(key)
        problem = None if value is None else utc_stamp_problem(value)
        if problem is None:
            continue
        found = re.search(r'"' + key + r'"\s*:\s*', text)
        offset = found.end() if found else 0
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        raise InputError(f"{key} {value!r} {problem}", path=path, line=line, column=column,
                         fix=f"write a real UTC time like 2026-11-30T19:55:01Z there, or delete the record ({without})")
