"""Giving a file its name without a window in which the name is missing or wrong: two names
swapped in one step (Linux ``renameat2(RENAME_EXCHANGE)``), and a name given only if it is free
(a hard link, or a checked rename where the file system has none). ``harness.fileops`` replaces a
user's file with them; ``harness.archives`` names each archive with them.
"""

import errno
import os
import sys

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2 = None


def exchange_names(first, second):
    """Atomically swap what the names ``first`` and ``second`` point to (Linux
    ``renameat2(RENAME_EXCHANGE)``). False, with nothing changed, where the kernel, C library or
    file system cannot; an ``OSError`` for any other failure."""
    global _renameat2
    if _renameat2 is None:
        _renameat2 = _load_renameat2()
    if not _renameat2:
        return False
    import ctypes

    if _renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), second)


def _load_renameat2():
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        function = ctypes.CDLL(None, use_errno=True).renameat2  # glibc >= 2.28, musl >= 1.2.2
    except (OSError, AttributeError, ImportError):
        return False
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    return function


def link_no_clobber(source, target):
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
