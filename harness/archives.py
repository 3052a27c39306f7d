"""Archives of a user's file: the copy kept before memory-router overwrites it (``MEMORY.md``,
``settings.json``, ``.mcp.json``, a cluster file), named by a UTC stamp so the newest sorts last,
and the size-and-sha256 record that lets a later rollback refuse a damaged copy.

Apart from ``harness.fileops`` because an archive is a file memory-router names and keeps, not
an overwrite: it is never replaced, only added beside the others. Its temp files, no-clobber
link (``harness.renames``) and cleanup are the ones overwrites use, called through their modules so a
test that fails them fails archives and overwrites alike."""

import math
import os
import time

from harness import fileops, renames
from router.errors import RefusedError
from router.safeio import current_umask, fsync_directory, read_regular_bytes


def archive_stamp(now=None):
    """A filename-safe UTC timestamp with milliseconds, e.g. 2026-07-22T05-25-01-376Z: the name of
    an archive, fixed-width so archives sort by name in time order."""
    now = time.time() if now is None else now
    # Truncated, never rounded: rounding .9996 up to -000Z without carrying the second would
    # name a later archive as an earlier one, and rollback picks the newest by name.
    seconds, millis = divmod(math.floor(now * 1000), 1000)
    return time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(seconds)) + f"-{millis:03d}Z"


def write_archive(directory, stem, suffix, data, record=False):
    """Write ``data`` to ``<directory>/<stem>-<UTC stamp><suffix>`` without ever overwriting an
    existing archive (a clash gets a counter), verify it reads back identically, and return its
    path. With ``record``, its size and sha256 are written beside it (``archive_record_path``)
    for ``read_verified_archive``: archives the tool may restore later are recorded. Any OS error becomes a
    ``RefusedError``: the caller must write nothing else.

    The archive reaches its name only complete: it is written to a hidden temp file in the same
    directory and fsynced, then hard-linked to its final name (a link, unlike a rename, refuses
    to replace a name that exists). A kill at any point leaves either no archive or a whole one
    (at worst a hidden ``.<stem>-...tmp`` file, or a whole archive without its record)."""
    base = os.path.join(directory, f"{stem}-{archive_stamp()}")
    candidate = base + suffix
    counter = 1
    tmp = linked = None
    try:
        tmp = fileops.synced_temp_beside(base, data, 0o666 & ~current_umask())
        while True:
            try:
                renames.link_no_clobber(tmp, candidate)
                linked = candidate
                break
            except FileExistsError:
                counter += 1
                candidate = f"{base}-{counter}{suffix}"
        fileops.remove_quietly(tmp)
        tmp = None
        fsync_directory(directory)
        read_back = read_regular_bytes(candidate)
    except OSError as err:
        if tmp is not None:
            fileops.remove_quietly(tmp)
        if linked is not None:
            fileops.remove_quietly(linked)
        raise RefusedError(f"cannot write an archive in {directory}: {err.strerror or err}; nothing else was written",
                           fix="free space or fix permissions in that directory") from None
    if read_back != data:
        # A damaged archive left behind would be the newest one, the one rollback restores.
        fileops.remove_quietly(candidate)
        raise RefusedError(f"archive {candidate} did not read back identically; nothing else was written")
    try:
        if record:
            write_archive_record(candidate, data)
    except OSError as err:
        fileops.remove_quietly(candidate)
        raise RefusedError(f"cannot record the archive {candidate}: {err.strerror or err}; nothing else was "
                           "written", fix="free space or fix permissions in that directory") from None
    return candidate


# --------------------------------------------------------------------------- archive records

ARCHIVE_RECORD_SUFFIX = ".sha256.json"


def archive_record_path(archive_path):
    """Where the size and sha256 an archive was written with are kept: a hidden file beside it,
    ``.<archive name>.sha256.json`` (hidden, so listings of backups and memories never meet it)."""
    directory, name = os.path.split(os.path.abspath(archive_path))
    return os.path.join(directory, "." + name + ARCHIVE_RECORD_SUFFIX)


def write_archive_record(archive_path, data):
    import json

    record = {"archive": os.path.basename(archive_path), "bytes": len(data), "sha256": fileops.sha256_bytes(data)}
    fileops.atomic_write(archive_record_path(archive_path), json.dumps(record, indent=2) + "\n")


def read_verified_archive(archive_path):
    """``(data, verified)`` for an archive: ``verified`` is True when its record exists and its size
    and sha256 match, False when it has no record (written before records were kept, or by hand).
    A record that does not match, or cannot be read, is a ``RefusedError`` naming the archive."""
    import json

    data = read_regular_bytes(archive_path)
    record_path = archive_record_path(archive_path)
    try:
        raw = read_regular_bytes(record_path)
    except FileNotFoundError:
        return data, False
    except OSError as err:
        raise RefusedError(f"cannot read the integrity record {record_path} of {archive_path}: "
                           f"{err.strerror or err}; nothing was written",
                           fix="look at both files; pass another archive with --archive FILE") from None
    try:
        record = json.loads(raw.decode("utf-8"))
        expected_bytes, expected_sha = int(record["bytes"]), str(record["sha256"])
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise RefusedError(f"the integrity record {record_path} of {archive_path} is damaged; nothing was written",
                           fix="look at the archive; if it is whole, delete the record and pass --archive FILE") \
            from None
    actual_sha = fileops.sha256_bytes(data)
    if len(data) != expected_bytes or actual_sha != expected_sha:
        raise RefusedError(f"archive {archive_path} is damaged: it holds {len(data)} bytes (sha256 {actual_sha[:12]}) "
                           f"but was written with {expected_bytes} bytes (sha256 {expected_sha[:12]}); "
                           "nothing was written", fix="pass an older archive with --archive FILE")
    return data, True


# --------------------------------------------------------------------------- listing

_STAMP = r"(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z)(?:-(\d+))?"


def list_archives(directory, stem, suffix):
    """The names of the archives ``write_archive(directory, stem, suffix, ...)`` made, oldest
    first: by the UTC stamp in the name, then the counter a clash in one millisecond added (none
    is the first). Other files, names that only look alike and entries of the name that are not
    regular files (``scan_archives``' strays) are left out; a directory that cannot be listed has
    none. Prune deletes from this list and rollback restores from it."""
    return scan_archives(directory, stem, suffix)[0]


def scan_archives(directory, stem, suffix):
    """``(archives, strays)`` of ``directory``: ``archives`` as ``list_archives``; ``strays`` are
    ``(name, kind)`` for entries named exactly like an archive that are not regular files (a
    directory, a symbolic link, a FIFO: ``write_archive`` makes none of these), oldest first.

    The name must match whole (``fullmatch``): ``$`` also matched before a final newline, so a
    user's ``MEMORY.archive-<stamp>.md<newline>`` was listed as the oldest archive and pruned."""
    import re
    import stat

    pattern = re.compile(re.escape(stem) + "-" + _STAMP + re.escape(suffix))
    try:
        names = os.listdir(directory)
    except OSError:
        return [], []
    found, strays = [], []
    for name in names:
        match = pattern.fullmatch(name)
        if not match:
            continue
        key = (match.group(1), int(match.group(2) or 1))
        try:
            mode = os.lstat(os.path.join(directory, name)).st_mode
        except OSError:
            continue  # gone since the listing
        if stat.S_ISREG(mode):
            found.append((key, name))
        else:
            strays.append((key, name, file_kind(mode)))
    return [name for _key, name in sorted(found)], [(name, kind) for _key, name, kind in sorted(strays)]


def file_kind(mode):
    """What an entry that is not a regular file is, in words, from its ``st_mode``."""
    import stat

    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return kind
    return "not a regular file"
