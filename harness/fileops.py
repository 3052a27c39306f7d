"""Writes that cannot lose a user's data: temp file + fsync + rename, archive before overwrite,
and refusal when the file changed since it was read. Shared by every command that writes."""

import errno
import hashlib
import math
import os
import tempfile
import time

from router.errors import InputError, RefusedError
from router.safeio import read_regular_bytes


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


class Snapshot:
    """What a file held when it was read, to refuse overwriting a file that changed since."""

    __slots__ = ("path", "data", "exists", "stat_key")

    def __init__(self, path, what="file"):
        self.path = os.fspath(path)
        try:
            self.data = read_regular_bytes(self.path)
            self.exists = True
        except FileNotFoundError:
            self.data = b""
            self.exists = False
        except OSError as err:
            # A FIFO, device or directory is refused by read_regular_bytes, never waited on.
            raise InputError(f"cannot read {what}: {err.strerror or err}", path=self.path,
                             fix="pass a regular file") from None
        self.stat_key = _stat_key(self.path)

    def unchanged(self):
        """True while the file still holds exactly what was read (or still does not exist)."""
        if _stat_key(self.path) != self.stat_key:
            return False
        if not self.exists:
            return not os.path.exists(self.path)
        try:
            return read_regular_bytes(self.path) == self.data
        except OSError:
            return False

    def require_unchanged(self):
        if not self.unchanged():
            raise RefusedError(f"{self.path} changed since it was read; nothing was written",
                               fix="run the command again")

    def replace(self, data, note=""):
        """Write ``data`` over the file (or create it) atomically and read it back, refusing when it
        changed since it was read. Every failure is a ``RefusedError`` after which the file is as
        it was; ``note`` is added to its message (say, "; the archive X is kept")."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not self.unchanged():
            raise RefusedError(f"{self.path} changed since it was read; it was not overwritten{note}",
                               fix="look at the change, then run the command again")
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            atomic_write(self.path, data)
            read_back = read_regular_bytes(self.path)
        except OSError as err:
            raise RefusedError(f"could not replace {self.path}: {err.strerror or err}; it is unchanged{note}",
                               fix="check permissions and free space, then run again") from None
        if read_back != data:
            raise RefusedError(f"{self.path} did not read back as written{note}",
                               fix="look at the file; an archive of what it held is beside it")


def _stat_key(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def atomic_write(path, data, mode=None):
    """Write ``data`` (bytes or str) to ``path`` via a temp file in the same directory, fsync and
    rename, so a reader sees the old file or the new one, never a half-written one.

    Through a symlink the file it points to is replaced and the link kept: renaming over the
    link itself would leave the real file stale and turn the link into a copy."""
    path = os.path.realpath(os.fspath(path))
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            # Keep an existing file's mode; a new file gets what open() would give it, not
            # mkstemp's private 0600.
            mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o666 & ~_current_umask()
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


def _current_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def utc_stamp(now=None):
    """A filename-safe UTC timestamp with milliseconds, e.g. 2026-07-22T05-25-01-376Z."""
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
    base = os.path.join(directory, f"{stem}-{utc_stamp()}")
    candidate = base + suffix
    counter = 1
    tmp = linked = None
    try:
        tmp = _write_synced_temp(directory, os.path.basename(base), data)
        while True:
            try:
                _link_no_clobber(tmp, candidate)
                linked = candidate
                break
            except FileExistsError:
                counter += 1
                candidate = f"{base}-{counter}{suffix}"
        _remove_quietly(tmp)
        tmp = None
        _fsync_dir(directory)
        read_back = read_regular_bytes(candidate)
    except OSError as err:
        if tmp is not None:
            _remove_quietly(tmp)
        if linked is not None:
            _remove_quietly(linked)
        raise RefusedError(f"cannot write an archive in {directory}: {err.strerror or err}; nothing else was written",
                           fix="free space or fix permissions in that directory") from None
    if read_back != data:
        # A damaged archive left behind would be the newest one, the one rollback restores.
        _remove_quietly(candidate)
        raise RefusedError(f"archive {candidate} did not read back identically; nothing else was written")
    try:
        if record:
            write_archive_record(candidate, data)
    except OSError as err:
        _remove_quietly(candidate)
        raise RefusedError(f"cannot record the archive {candidate}: {err.strerror or err}; nothing else was "
                           "written", fix="free space or fix permissions in that directory") from None
    return candidate


def _write_synced_temp(directory, name, data):
    fd, tmp = tempfile.mkstemp(prefix="." + name + ".", suffix=".tmp", dir=directory)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o666 & ~_current_umask())  # what open() would give, not mkstemp's 0600
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _remove_quietly(tmp)
        raise
    os.close(fd)
    return tmp


def _link_no_clobber(source, target):
    """Give ``source`` the name ``target`` unless ``target`` exists (``FileExistsError``)."""
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        # A file system without hard links (FAT, some network shares): check, then rename. Two
        # archives in one millisecond racing here is the one case a name could be reused.
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "exists", target) from None
        os.replace(source, target)


# --------------------------------------------------------------------------- archive records

ARCHIVE_RECORD_SUFFIX = ".sha256.json"


def archive_record_path(archive_path):
    """Where the size and sha256 an archive was written with are kept: a hidden file beside it,
    ``.<archive name>.sha256.json`` (hidden, so listings of backups and memories never meet it)."""
    directory, name = os.path.split(os.path.abspath(archive_path))
    return os.path.join(directory, "." + name + ARCHIVE_RECORD_SUFFIX)


def write_archive_record(archive_path, data):
    import json

    record = {"archive": os.path.basename(archive_path), "bytes": len(data), "sha256": sha256_bytes(data)}
    atomic_write(archive_record_path(archive_path), json.dumps(record, indent=2) + "\n")


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
    actual_sha = sha256_bytes(data)
    if len(data) != expected_bytes or actual_sha != expected_sha:
        raise RefusedError(f"archive {archive_path} is damaged: it holds {len(data)} bytes (sha256 {actual_sha[:12]}) "
                           f"but was written with {expected_bytes} bytes (sha256 {expected_sha[:12]}); "
                           "nothing was written", fix="pass an older archive with --archive FILE")
    return data, True


def _remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass
