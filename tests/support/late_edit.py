"""Faults in the write path, shared by the tests of every writer: a user's save landing in the
lost-update window (issue 11, class 2: after the tool's checks have passed once, while the new
bytes are being fsynced, just before the rename), and a final rename that fails."""

import os

from harness import fileops, renames

HAS_PROC_FD = os.path.isdir("/proc/self/fd")


def _fd_name(fd):
    try:
        return os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return ""


def edit_during_fsync_of_temp_for(monkeypatch, target, edit):
    """Make the fsync of ``target``'s temp file (the step before the rename) run ``edit`` first.
    Returns a list that holds the temp file's name once the edit has run."""
    real_fsync = os.fsync
    done = []
    prefix = "." + os.path.basename(os.fspath(target)) + "."

    def slow_fsync(fd):
        name = _fd_name(fd)
        if not done and name.startswith(prefix) and name.endswith(".tmp"):
            done.append(name)
            edit()
        return real_fsync(fd)

    monkeypatch.setattr(fileops.os, "fsync", slow_fsync)
    return done


def fail_final_rename(monkeypatch, target, error=None):
    """Make the last step of every write of ``target`` fail with ``error`` (an ``OSError``; EIO by
    default): the rename onto it, and on Linux the swap ``exchange_names`` tries first. Every
    other file is written as usual, so only the target's replacement fails."""
    error = error or OSError(5, "Input/output error")
    real_replace = os.replace
    target = os.path.abspath(os.fspath(target))

    def failing_replace(src, dst, *args, **kwargs):
        if os.path.abspath(dst) == target:
            raise error
        return real_replace(src, dst, *args, **kwargs)

    def failing_exchange(first, second):
        if os.path.abspath(second) == target:
            raise OSError(5, "Input/output error")
        return False

    monkeypatch.setattr(fileops.os, "replace", failing_replace)
    monkeypatch.setattr(renames, "exchange_names", failing_exchange)  # the Linux path: a swap
