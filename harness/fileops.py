"""Writes that cannot lose a user's data: temp file + fsync + rename, archive before overwrite,
and refusal when the file changed since it was read. Shared by every command that writes."""

import hashlib
import math
import os
import tempfile
import time

from router.errors import RefusedError


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


class Snapshot:
    """What a file held when it was read, to refuse overwriting a file that changed since."""

    __slots__ = ("path", "data", "exists", "stat_key")

    def __init__(self, path):
        self.path = os.fspath(path)
        try:
            with open(self.path, "rb") as handle:
                self.data = handle.read()
            self.exists = True
        except FileNotFoundError:
            self.data = b""
            self.exists = False
        self.stat_key = _stat_key(self.path)

    def unchanged(self):
        """True while the file still holds exactly what was read (or still does not exist)."""
        if _stat_key(self.path) != self.stat_key:
            return False
        if not self.exists:
            return not os.path.exists(self.path)
        try:
            with open(self.path, "rb") as handle:
                return handle.read() == self.data
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
            with open(self.path, "rb") as handle:
                read_back = handle.read()
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


def write_archive(directory, stem, suffix, data):
    """Write ``data`` to ``<directory>/<stem>-<UTC stamp><suffix>`` without ever overwriting an
    existing archive (a clash gets a counter), verify it reads back identically, return its path.
    Any OS error becomes a ``RefusedError``: the caller must write nothing else."""
    base = os.path.join(directory, f"{stem}-{utc_stamp()}")
    candidate = base + suffix
    counter = 1
    created = False
    try:
        while True:
            try:
                fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                counter += 1
                candidate = f"{base}-{counter}{suffix}"
        created = True
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with open(candidate, "rb") as handle:
            read_back = handle.read()
    except OSError as err:
        if created:
            _remove_quietly(candidate)
        raise RefusedError(f"cannot write an archive in {directory}: {err.strerror or err}; nothing else was written",
                           fix="free space or fix permissions in that directory") from None
    if read_back != data:
        # A truncated archive left behind would be the newest one, the one rollback restores.
        _remove_quietly(candidate)
        raise RefusedError(f"archive {candidate} did not read back identically; nothing else was written")
    return candidate


def _remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def require_not_read_only(path, what):
    """Refuse (``RefusedError``, nothing written) to replace a file whose mode has no write bit.

    ``rename`` over a 0444 file succeeds (it needs only the directory to be writable), and root
    ignores the mode anyway, so an atomic writer would silently replace a file its owner marked
    read-only: a frozen MEMORY.md, a settings.json locked against tools."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:
        return  # the read that follows names the problem
    if stat.S_ISREG(mode) and not mode & 0o222:
        raise RefusedError(f"{path} is read-only (mode {stat.S_IMODE(mode):04o}); the {what} was not replaced "
                           "and nothing was written",
                           fix=f"if memory-router should change it, make it writable first: chmod u+w {path}")
