"""Writes that cannot lose a user's data: temp file + fsync + rename, and refusal when the file
changed since it was read. Shared by every command that writes; the copy kept before an
overwrite is ``harness.archives``."""

import contextlib
import hashlib
import os
import tempfile
import time

from harness import printedcommands, renames
from router.errors import InputError, RefusedError
from router.safeio import fsync_directory as _fsync_dir
from router.safeio import current_umask, open_regular_fd, read_regular_bytes, write_all_synced


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def sha256_file(path):
    """The sha256 of a regular file's bytes (a FIFO or directory is refused, not read)."""
    return sha256_bytes(read_regular_bytes(path))


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

    def _refuse_if_changed(self, note, when="since it was read"):
        if not self.unchanged():
            raise RefusedError(f"{self.path} changed {when}; it was not overwritten{note}",
                               fix="look at the change, then run the command again")

    def replace(self, data, note=""):
        """Write ``data`` over the file (or create it) atomically and read it back, refusing when it
        changed since it was read. Every failure is a ``RefusedError`` after which the file is as
        it was (or as someone else just wrote it); ``note`` is added to its message (say, "; the
        archive X is kept").

        The lost-update window is closed as far as the platform allows: the write happens under
        ``advisory_lock`` (honoured by cooperating writers); the file is compared with the snapshot
        under the lock, again after the new bytes are on disk, immediately before the rename; and
        where the kernel can swap two names atomically (Linux ``renameat2(RENAME_EXCHANGE)``) the
        file actually displaced is compared after the swap and swapped back if it is not the one
        read. Elsewhere a descriptor held on the old file catches an in-place write during the
        rename. What remains is in docs/safety.md."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        target = os.path.realpath(self.path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with advisory_lock(target):
                self._refuse_if_changed(note)
                tmp = synced_temp_beside(target, data, _mode_for(target))
                try:
                    # The bytes are on disk; anything written while they were is seen here.
                    self._refuse_if_changed(note)
                    if self.exists:
                        self._swap_in(tmp, target, data, note)
                    else:
                        try:
                            renames.link_no_clobber(tmp, target)  # never over a file created meanwhile
                        except FileExistsError:
                            raise RefusedError(f"{self.path} was created while it was being written; it was not "
                                               f"overwritten{note}", fix="look at it, then run the command again") \
                                from None
                finally:
                    remove_quietly(tmp)
                _fsync_dir(os.path.dirname(target))
                read_back = read_regular_bytes(target)
        except OSError as err:
            raise RefusedError(f"could not replace {self.path}: {err.strerror or err}; it is unchanged{note}",
                               fix="check permissions and free space, then run again") from None
        if read_back != data:
            raise RefusedError(f"{self.path} did not read back as written{note}",
                               fix="look at the file; an archive of what it held is beside it")

    def remove(self, note="", within=None):
        """Delete the file, refusing (``RefusedError``) when it is not exactly what was read, or
        (``within``: the folders it may be in, default its own) lies elsewhere once symlinks are
        resolved. ``router.removal.remove_owned`` deletes it under the lock, hash-checked: it is
        moved aside, compared, and moved back if someone changed it."""
        from router.removal import CHANGED, remove_owned

        target = os.path.realpath(self.path)
        try:
            with advisory_lock(target):
                self._refuse_if_changed(note)
                kept = remove_owned(target, within or os.path.dirname(target), sha256=sha256_bytes(self.data))
                if kept is not None and kept.error is not None:
                    raise kept.error
                if kept is not None:
                    what = "changed while it was being removed; it was put back" if kept == CHANGED else \
                        f"was not removed: {kept}"
                    raise RefusedError(f"{self.path} {what}{note}", fix="look at it, then run the command again")
                _fsync_dir(os.path.dirname(target))
        except OSError as err:
            raise RefusedError(f"could not remove {self.path}: {err.strerror or err}{note}",
                               fix="check permissions, then run again") from None

    def _matches(self, fd):
        """True when the open file ``fd`` is the inode that was read and still holds its bytes."""
        if os.fstat(fd).st_ino != self.stat_key[2]:
            return False
        return _pread_all(fd) == self.data

    def _swap_in(self, tmp, target, data, note):
        changed = RefusedError(f"{self.path} changed while it was being replaced; your version was put back and "
                               f"nothing was written{note}", fix="look at the change, then run the command again")
        if renames.exchange_names(tmp, target):
            # ``tmp`` now names exactly the file our bytes displaced.
            try:
                displaced = read_regular_bytes(tmp)
            except OSError:
                displaced = None  # unreadable is not "unchanged": swap back
            if displaced != self.data:
                renames.exchange_names(tmp, target)
                raise changed
            return
        old = open_regular_fd(target)
        try:
            if not self._matches(old):
                raise RefusedError(f"{self.path} changed since it was read; it was not overwritten{note}",
                                   fix="look at the change, then run the command again")
            os.replace(tmp, target)
            theirs = _pread_all(old)
            if theirs != self.data:
                # Written in place during the rename: put that version back, unless yet another
                # writer has replaced ours already (then theirs stays).
                if read_regular_bytes(target) != data:
                    raise RefusedError(f"{self.path} changed while it was being replaced, twice; it holds the "
                                       f"last writer's version{note}", fix="look at it, then run the command again")
                atomic_write(target, theirs)
                raise changed
        finally:
            os.close(old)


def _stat_key(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def atomic_write(path, data, mode=None):
    """Write ``data`` (bytes or str) to ``path`` via a temp file in the same directory, fsync and
    rename, so a reader sees the old file or the new one, never a half-written one. No check
    against a snapshot: for files only the tool writes (records, reports); a user's file goes
    through ``Snapshot.replace``.

    Through a symlink the file it points to is replaced and the link kept: renaming over the
    link itself would leave the real file stale and turn the link into a copy."""
    path = os.path.realpath(os.fspath(path))
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = os.path.dirname(os.path.abspath(path))
    tmp = synced_temp_beside(path, data, _mode_for(path) if mode is None else mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise
    _fsync_dir(directory)


def _mode_for(path):
    """An existing file's mode is kept; a new file gets what open() would give it, not mkstemp's
    private 0600."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~current_umask()


def synced_temp_beside(path, data, mode, name=None):
    """A hidden temp file in ``path``'s directory holding ``data`` with ``mode``, fsynced."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + (name or os.path.basename(path)) + ".", suffix=".tmp", dir=directory)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        write_all_synced(fd, data)
    except BaseException:
        os.close(fd)
        remove_quietly(tmp)
        raise
    os.close(fd)
    if not hasattr(os, "fchmod"):
        os.chmod(tmp, mode)
    return tmp


def _pread_all(fd):
    chunks, offset = [], 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


# --------------------------------------------------------------------------- advisory lock

LOCK_SUFFIX = ".memory-router.lock"
LOCK_TIMEOUT_SECONDS = 10.0
# The folder memory-router owns in a project (backups, install records, locks); its .gitignore
# keeps everything in it, itself too, out of git status.
STATE_DIRNAME = "memory-router"
STATE_GITIGNORE = "# memory-router's own files: backups, install records, locks (docs/safety.md)\n*\n"


def ensure_state_dir(directory):
    """Create memory-router's state folder ``directory`` (``.claude/memory-router/``) if needed,
    with a ``.gitignore`` ignoring all of it; an existing ``.gitignore`` is never rewritten."""
    os.makedirs(directory, exist_ok=True)
    try:
        fd = os.open(os.path.join(directory, ".gitignore"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return directory
    with os.fdopen(fd, "wb") as handle:
        handle.write(STATE_GITIGNORE.encode())
    return directory


def lock_path_for(path):
    """The advisory lock file of ``path`` (the real file, through any symlink). In a git work tree,
    ``<root>/.claude/memory-router/locks/<path from the root, "/" as %2F>.lock``: in the folder
    memory-router owns, which its .gitignore keeps out of ``git status``. Elsewhere (a memory
    directory under ~/.claude/projects/) ``.<name>.memory-router.lock`` beside it. Left in place
    after use: deleting a lock file races with a writer waiting on it."""
    return _lock_location(path)[0]


def _lock_location(path):
    """``(lock file, the state folder holding it or None)``."""
    from urllib.parse import quote

    from router.store.memorystore import git_root

    real = os.path.realpath(os.fspath(path))
    directory, name = os.path.split(real)
    root = git_root(directory)
    if root is None:
        return os.path.join(directory, ("" if name.startswith(".") else ".") + name + LOCK_SUFFIX), None
    state = os.path.join(root, ".claude", STATE_DIRNAME)
    return os.path.join(state, "locks", quote(os.path.relpath(real, root), safe="") + ".lock"), state


@contextlib.contextmanager
def advisory_lock(path, timeout=None):
    """Hold an exclusive ``flock`` on ``lock_path_for(path)`` while the block runs.

    A cooperating writer (a script, an editor hook) takes the same lock around its own
    read-modify-write (``flock LOCKFILE -c '...'``; docs/safety.md says where it is) and so never
    interleaves with ours. Waits up to ``timeout`` seconds (``LOCK_TIMEOUT_SECONDS``), then refuses. Where
    there is no ``fcntl`` (Windows) there is no lock; the checks in ``Snapshot.replace`` remain."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield None
        return
    timeout = LOCK_TIMEOUT_SECONDS if timeout is None else timeout
    lock, state = _lock_location(path)
    if state is not None:
        ensure_state_dir(state)
        os.makedirs(os.path.dirname(lock), exist_ok=True)
    fd = open_regular_fd(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RefusedError(f"{path} is being written by another program (it holds {lock} for more "
                                       f"than {timeout:g} s); nothing was written",
                                       fix="wait for it to finish, then run the command again") from None
                time.sleep(0.05)
        yield lock
    finally:
        os.close(fd)  # releases the lock


def remove_quietly(path):
    """Delete a temp file (or an aside) this module just wrote beside its target, if it is still
    a regular file there; ``router.removal`` does the deleting (the one place that does)."""
    from router.removal import remove_owned

    remove_owned(path, os.path.dirname(os.path.abspath(path)))


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
                           fix="if memory-router should change it, make it writable first: "
                               + printedcommands.command("chmod", "u+w", path))
