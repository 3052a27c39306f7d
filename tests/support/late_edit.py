"""A user's save landing in the lost-update window (issue 11, class 2): after the tool's checks
have passed once, while the new bytes are being fsynced, just before the rename."""

import os

from harness import fileops

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
