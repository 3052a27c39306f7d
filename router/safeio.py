"""Opening a path someone named (on the command line, in a config, in an environment variable)
without ever hanging on it.

``open()`` on a FIFO blocks until a writer (or reader) comes, and reading a character device
can block for ever, so a FIFO planted as MEMORY.md, a settings.json, a transcript or
``$MEMORY_ROUTER_LOG`` would hang the tool, or the hook (and with it the user's prompt). Every
open of such a path goes through ``open_regular``: it opens with ``O_NONBLOCK`` (which makes the
open itself return at once), refuses whatever ``fstat`` says is not a regular file with an
``OSError`` whose ``strerror`` says what it is, then clears ``O_NONBLOCK`` so reads and writes
behave as usual. Callers keep their ``except OSError`` and their message.

Standard library only: this is on the hook's start-up path.
"""

import errno
import os
import stat

# Opening for writing a FIFO that has no reader fails with ENXIO under O_NONBLOCK instead of
# blocking; O_NOCTTY: a terminal named as a log must not become our controlling terminal.
_OPEN_EXTRA = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(OSError):
    """The path names something other than a regular file (a FIFO, device, directory, socket)."""


def describe_kind(mode):
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def irregular_kind(path):
    """``None`` when ``path`` is a regular file (through symlinks) or does not exist; otherwise why
    a reader of a folder passes it over ("it is a named pipe (FIFO), not a regular file"). For
    listings: the kind is tested before anything is opened, and the open itself still refuses
    (``open_regular_fd``) what was swapped in meanwhile."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"it cannot be examined: {err.strerror or err}"
    if stat.S_ISREG(mode):
        return None
    return f"it is {describe_kind(mode)}, not a regular file"


def open_regular_fd(path, flags=os.O_RDONLY, mode=0o666):
    """An fd for ``path`` opened with ``flags``, or ``OSError``: it never blocks on the open, and
    anything but a regular file is ``NotRegularFileError``. The fd is blocking on return."""
    # O_RDONLY on a directory succeeds on POSIX; the fstat below says what it is.
    try:
        fd = os.open(path, flags | _OPEN_EXTRA, mode)
    except OSError as err:
        if err.errno == errno.ENXIO:
            # A FIFO opened for writing with no reader (or a device with none behind it).
            raise NotRegularFileError(errno.ENXIO, "it is a named pipe (FIFO) or device with nothing "
                                      "on the other end, not a regular file", path) from None
        raise
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            # IsADirectoryError, as open() would raise: callers that say "pass a file, or use the
            # directory form" keep working.
            raise IsADirectoryError(errno.EISDIR, "it is a directory, not a regular file", path)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, f"it is {describe_kind(st.st_mode)}, not a regular file", path)
        if _OPEN_EXTRA & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _opener(path, flags):
    return open_regular_fd(path, flags)


def open_regular(path, mode="r", encoding=None, errors=None, newline=None):
    """``open(path, mode, ...)`` that refuses (``OSError``) what is not a regular file instead of
    hanging on it. Works for reading, writing and appending."""
    return open(path, mode, encoding=encoding, errors=errors, newline=newline, opener=_opener)


def write_all_synced(fd, data):
    """Write all of ``data`` to ``fd`` (looping over short writes) and fsync it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def fsync_directory(directory):
    """Make a rename in ``directory`` durable; a no-op where a directory cannot be opened (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))  # a FIFO fails, never blocks
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_regular_bytes(path, limit=None):
    """The bytes of the regular file at ``path``; ``OSError`` for anything else, and (with
    ``limit``) for a file larger than ``limit`` bytes, checked before reading."""
    fd = open_regular_fd(path)
    try:
        if limit is not None:
            size = os.fstat(fd).st_size
            if size > limit:
                raise OSError(errno.EFBIG, f"it is {size} bytes, over the limit of {limit}", path)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def current_umask():
    """The process's umask (read by setting and restoring it: there is no other portable way),
    so a file written through a temp file gets the mode a plain open would have given it."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
