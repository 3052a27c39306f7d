"""Deleting, in one place: only what memory-router wrote, never anything else.

``remove_owned`` is the one function that deletes a file or a directory (the AST test in
tests/test_dangerous_acts.py fails on an ``os.remove``/``os.unlink``/``Path.unlink``/``os.rmdir``/
``Path.rmdir``/``shutil.rmtree`` anywhere else). It deletes ``path`` only when

- ``path``, with every symlink of its folders resolved, is inside one of the folders ``within``
  (the project, its state folder, the cache folder; for a temp file, the folder the caller just
  wrote it in), and is not that folder itself;
- it is a regular file (with ``directory=True``: a directory, and only when it is empty); a
  symlink, FIFO, device or socket under the name is never memory-router's and stays;
- with ``sha256``: its bytes still hash to it. The file is first renamed aside under a hidden name
  and hashed there, so a write that lands between the check and the delete is never lost: a
  mismatch renames it back.

Anything else is kept and the reason returned, so a caller names it and goes on: a run that meets
something it may not delete completes. ``remove_built_tree`` removes a whole tree memory-router
built itself (the plugin's venv, the lab's npm install), again only inside ``within``.

Standard library only (the hook deletes its stale cache entries through it); hashlib is imported
only for a hash check.
"""

import os
import stat
import sys

from router.safeio import describe_kind, read_regular_bytes


CHANGED = "it changed since memory-router wrote it; it was put back"


class Kept(str):
    """Why a path was kept; ``error`` is the ``OSError`` when the file system refused (permissions,
    a read-only file system, a busy file), ``None`` when the rules did."""

    error = None


def _failed(what, err):
    kept = Kept(f"{what}: {err.strerror or err}")
    kept.error = err
    return kept


def _inside(real, roots):
    for root in roots:
        root = os.path.realpath(os.fspath(root))
        if real != root and os.path.commonpath([real, root]) == root:
            return True
    return False


def resolved(path):
    """``path`` with the symlinks of its folders resolved and its own name kept as it is (a
    symlink under the name is what would be deleted, so it is not followed)."""
    path = os.path.abspath(os.fspath(path))
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _examined(path, within):
    """``(resolved path, its lstat mode, None)`` when ``path`` lies inside one of ``within``;
    ``(resolved path, None, Kept)`` when it is outside (or cannot be examined); ``(..., None,
    None)`` when it is not there."""
    real = resolved(path)
    if isinstance(within, (str, bytes, os.PathLike)):
        within = [within]
    if not _inside(real, within):
        return real, None, Kept("it is outside " + " and ".join(os.fspath(w) for w in within)
                                + ", where memory-router deletes nothing")
    try:
        return real, os.lstat(real).st_mode, None
    except FileNotFoundError:
        return real, None, None
    except OSError as err:
        return real, None, _failed("it cannot be examined", err)


def remove_owned(path, within, sha256=None, directory=False):
    """Delete ``path`` when memory-router may (the module docstring); ``None`` when it is gone
    afterwards (deleted, or not there), else why it was kept ("it is a named pipe (FIFO), not a
    regular file memory-router wrote", a ``Kept``). Never raises."""
    real, mode, kept = _examined(path, within)
    if mode is None:
        return kept
    if directory:
        if not stat.S_ISDIR(mode):
            return Kept(f"it is {_kind(mode)}, not a directory")
        try:
            os.rmdir(real)
        except FileNotFoundError:
            return None
        except OSError as err:
            if os.path.isdir(real) and os.listdir(real):
                return Kept("it is not empty: it holds files memory-router did not write")
            return _failed("it could not be removed", err)
        return None
    if not stat.S_ISREG(mode):
        return Kept(f"it is {_kind(mode)}, not a regular file memory-router wrote")
    if sha256 is None:
        return _unlink(real)
    return _remove_if_hash(real, sha256)


def _kind(mode):
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a regular file" if stat.S_ISREG(mode) else describe_kind(mode)


def _unlink(real):
    try:
        os.unlink(real)
    except FileNotFoundError:
        return None
    except OSError as err:
        return _failed("it could not be deleted", err)
    return None


def _remove_if_hash(real, sha256):
    import hashlib

    folder, name = os.path.split(real)
    aside = os.path.join(folder, f".{name}.{os.getpid()}.removing")
    try:
        os.rename(real, aside)
    except FileNotFoundError:
        return None
    except OSError as err:
        return _failed("it could not be deleted", err)
    try:
        held = hashlib.sha256(read_regular_bytes(aside)).hexdigest()
    except OSError:
        held = None  # swapped for something that is not a regular file: put it back
    if held != sha256:
        try:
            os.link(aside, real)      # never over a file created under the name meanwhile
            os.unlink(aside)
        except OSError:
            os.rename(aside, real)
        return Kept(CHANGED if held is not None else "it is not a regular file memory-router wrote")
    return _unlink(aside)


def remove_built_tree(path, within):
    """Delete the directory tree at ``path`` that memory-router built itself (a venv, an npm
    install), when it is a real directory inside ``within``; symlinks in it are removed, never
    followed. ``None`` when it is gone afterwards, else why it was kept."""
    import shutil

    real, mode, kept = _examined(path, within)
    if mode is None:
        return kept
    if not stat.S_ISDIR(mode):
        return Kept("it is not a directory memory-router built")
    errors = []
    if sys.version_info >= (3, 12):
        shutil.rmtree(real, onexc=lambda _function, where, err: errors.append(f"{where}: {err}"))
    else:  # Python 3.11
        shutil.rmtree(real, onerror=lambda _function, where, info: errors.append(f"{where}: {info[1]}"))
    return Kept("some of it could not be deleted: " + "; ".join(errors[:3])) if errors else None
