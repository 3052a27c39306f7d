import os
import stat

import pytest

from harness import fileops, renames
from router.errors import RefusedError
from support.late_edit import HAS_PROC_FD, edit_during_fsync_of_temp_for


def test_atomic_write_replaces_whole_and_keeps_mode(tmp_path):
    path = tmp_path / "f.md"
    path.write_text("old")
    os.chmod(path, 0o640)
    fileops.atomic_write(path, "new text")
    assert path.read_text() == "new text"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["f.md"]  # no temp file left behind


def test_atomic_write_new_file_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        fileops.atomic_write(tmp_path / "new.md", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o644


def test_failed_rename_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "f.md"
    path.write_bytes(b"precious")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileops.os, "replace", broken_replace)
    with pytest.raises(OSError):
        fileops.atomic_write(path, b"new")
    assert path.read_bytes() == b"precious"
    assert [p.name for p in tmp_path.iterdir()] == ["f.md"]


@pytest.mark.parametrize("change", ["content", "delete", "create"])
def test_snapshot_detects_changes(tmp_path, change):
    path = tmp_path / "f.md"
    if change != "create":
        path.write_bytes(b"one")
    snap = fileops.Snapshot(path)
    assert snap.unchanged()
    if change == "content":
        path.write_bytes(b"two")
    elif change == "delete":
        path.unlink()
    else:
        path.write_bytes(b"appeared")
    assert not snap.unchanged()
    with pytest.raises(RefusedError):
        snap.require_unchanged()


def test_snapshot_same_size_same_mtime_rewrite_is_still_detected(tmp_path):
    path = tmp_path / "f.md"
    path.write_bytes(b"aaaa")
    st = path.stat()
    snap = fileops.Snapshot(path)
    path.write_bytes(b"bbbb")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not snap.unchanged()


def test_atomic_write_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    # A file kept in a dotfiles repository and linked into place: renaming over the link would
    # leave the real file stale and the link gone.
    (tmp_path / "dotfiles").mkdir()
    target = tmp_path / "dotfiles" / "f.md"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / "f.md"
    link.symlink_to(target)
    fileops.atomic_write(link, b"new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dotfiles", "f.md"]
    assert [p.name for p in (tmp_path / "dotfiles").iterdir()] == ["f.md"]


def test_snapshot_replace_writes_and_reads_back(tmp_path):
    path = tmp_path / "sub" / "f.md"
    snap = fileops.Snapshot(path)
    snap.replace("new")  # creates the directory and the file
    assert path.read_text() == "new"


def test_snapshot_replace_refuses_a_file_changed_since_read(tmp_path):
    path = tmp_path / "f.md"
    path.write_bytes(b"one")
    snap = fileops.Snapshot(path)
    path.write_bytes(b"edited by someone else")
    with pytest.raises(RefusedError) as info:
        snap.replace(b"mine", note="; the archive A is kept")
    assert "changed since it was read; it was not overwritten; the archive A is kept" in str(info.value)
    assert path.read_bytes() == b"edited by someone else"


def test_snapshot_replace_turns_os_errors_into_refusals(tmp_path, monkeypatch):
    path = tmp_path / "f.md"
    path.write_bytes(b"precious")
    snap = fileops.Snapshot(path)

    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileops, "synced_temp_beside", full_disk)
    with pytest.raises(RefusedError) as info:
        snap.replace(b"new")
    assert "could not replace" in str(info.value) and "it is unchanged" in str(info.value)
    assert path.read_bytes() == b"precious"


def test_snapshot_replace_through_a_symlink_keeps_the_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_bytes(b"{}")
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    fileops.Snapshot(link).replace(b'{"a": 1}')
    assert link.is_symlink() and target.read_bytes() == b'{"a": 1}'


# --------------------------------------------------------------------------- lost updates (class 2)


def run_before(monkeypatch, function, path, action, argument):
    """Run ``action`` once, just before ``os.<function>`` is called with ``path`` as its
    ``argument``-th argument: a user's save landing at that exact step."""
    real = getattr(os, function)
    done = []

    def wrapped(*args):
        if not done and os.path.abspath(args[argument]) == str(path):
            done.append(function)
            action()
        return real(*args)

    monkeypatch.setattr(fileops.os, function, wrapped)
    return done


def save_as_user(path, data, style):
    """A user's save: ``in place`` (same inode, as ``>`` in a shell) or ``by rename`` (a new file
    renamed over it, as most editors do)."""
    if style == "in place":
        with open(path, "r+b") as handle:
            handle.write(data)
            handle.truncate()
    else:
        swap = path.with_name(path.name + ".editor-swp")
        swap.write_bytes(data)
        os.rename(swap, path)


def _append(path, data):
    with open(path, "ab") as handle:
        handle.write(data)


def _overwrite_start(path, data):
    with open(path, "r+b") as handle:
        handle.write(data)


def require_exchange(directory):
    """The real ``exchange_names``, or a skip where names cannot be swapped atomically here (the
    fallback's limit is in docs/safety.md)."""
    (directory / "probe-a").write_bytes(b"a")
    (directory / "probe-b").write_bytes(b"b")
    if not renames.exchange_names(directory / "probe-a", directory / "probe-b"):
        pytest.skip("no atomic name exchange on this file system")
    return renames.exchange_names


def no_exchange(monkeypatch):
    monkeypatch.setattr(renames, "exchange_names", lambda first, second: False)


@pytest.mark.skipif(not HAS_PROC_FD, reason="needs /proc to name the fsynced file")
@pytest.mark.parametrize("swap", ["exchange", "rename"])
@pytest.mark.parametrize("style", ["in place", "by rename"])
def test_an_edit_while_the_new_bytes_are_fsynced_is_refused_and_kept(tmp_path, monkeypatch, swap, style):
    """Issue 11, class 2: an edit after the last check and before the rename was lost, exit 0."""
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"original\n")
    snap = fileops.Snapshot(path)

    def users_save():
        save_as_user(path, b"original\nthe user's late line\n", style)

    if swap == "rename":
        no_exchange(monkeypatch)
    done = edit_during_fsync_of_temp_for(monkeypatch, path, users_save)
    with pytest.raises(RefusedError, match="changed"):
        snap.replace(b"the tool's new text\n")
    assert done
    assert path.read_bytes() == b"original\nthe user's late line\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("style", ["in place", "by rename"])
def test_an_edit_after_the_last_check_is_found_in_the_swapped_out_file_and_put_back(tmp_path, monkeypatch, style):
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"a": 1}\n')
    snap = fileops.Snapshot(path)
    real_exchange = require_exchange(tmp_path)

    def edit_then_exchange(first, second):
        if os.path.samefile(second, path) and not getattr(edit_then_exchange, "done", False):
            edit_then_exchange.done = True
            save_as_user(path, b'{"a": 2}\n', style)
        return real_exchange(first, second)

    monkeypatch.setattr(renames, "exchange_names", edit_then_exchange)
    with pytest.raises(RefusedError, match="changed while it was being replaced; your version was put back"):
        snap.replace(b'{"a": 1, "hooks": {}}\n')
    assert path.read_bytes() == b'{"a": 2}\n'


def test_without_exchange_an_in_place_edit_during_the_rename_is_put_back(tmp_path, monkeypatch):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"original\n")
    snap = fileops.Snapshot(path)
    no_exchange(monkeypatch)
    run_before(monkeypatch, "replace", path, lambda: _overwrite_start(path, b"ORIGINAL\n"), argument=1)
    with pytest.raises(RefusedError, match="your version was put back"):
        snap.replace(b"new\n")
    monkeypatch.undo()
    assert path.read_bytes() == b"ORIGINAL\n"


@pytest.mark.skipif(not HAS_PROC_FD, reason="needs /proc to name the fsynced file")
def test_a_file_created_while_ours_is_written_is_not_overwritten(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    snap = fileops.Snapshot(path)
    assert not snap.exists
    edit_during_fsync_of_temp_for(monkeypatch, path, lambda: path.write_bytes(b'{"theirs": true}\n'))
    with pytest.raises(RefusedError, match="changed since it was read|was created"):
        snap.replace(b'{"ours": true}\n')
    assert path.read_bytes() == b'{"theirs": true}\n'


def test_a_creation_racing_the_final_link_is_not_overwritten(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    snap = fileops.Snapshot(path)
    run_before(monkeypatch, "link", path, lambda: path.write_bytes(b"theirs\n"), argument=1)
    with pytest.raises(RefusedError, match="was created while it was being written"):
        snap.replace(b"ours\n")
    assert path.read_bytes() == b"theirs\n"


def _hold_lock(path, ready, release, edit=None):
    import fcntl

    with open(fileops.lock_path_for(path), "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        ready.set()
        release.wait(10)
        if edit:
            edit()


@pytest.mark.skipif(os.name == "nt", reason="no flock on Windows")
def test_a_cooperating_writer_holding_the_lock_is_waited_for_and_its_edit_kept(tmp_path):
    import threading

    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"original\n")
    snap = fileops.Snapshot(path)
    ready, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(path, ready, release,
                                                       lambda: path.write_bytes(b"cooperating edit\n")))
    holder.start()
    assert ready.wait(10)
    threading.Timer(0.5, release.set).start()
    with pytest.raises(RefusedError, match="changed since it was read"):
        snap.replace(b"new\n")  # blocks until the holder has written and let go
    holder.join(10)
    assert path.read_bytes() == b"cooperating edit\n"
    assert fileops.lock_path_for(path) == str(tmp_path / ".MEMORY.md.memory-router.lock")


@pytest.mark.skipif(os.name == "nt", reason="no flock on Windows")
def test_a_lock_held_too_long_is_a_refusal_naming_it(tmp_path, monkeypatch):
    import threading

    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"original\n")
    snap = fileops.Snapshot(path)
    monkeypatch.setattr(fileops, "LOCK_TIMEOUT_SECONDS", 0.3)
    ready, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(path, ready, release))
    holder.start()
    assert ready.wait(10)
    try:
        with pytest.raises(RefusedError, match=r"being written by another program .*\.MEMORY\.md\.memory-router\.lock"):
            snap.replace(b"new\n")
    finally:
        release.set()
        holder.join(10)
    assert path.read_bytes() == b"original\n"


def test_remove_puts_back_a_file_changed_after_the_check(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    path.write_bytes(b"{}\n")
    snap = fileops.Snapshot(path)
    run_before(monkeypatch, "rename", path, lambda: _append(path, b"// added\n"), argument=0)
    with pytest.raises(RefusedError, match="changed while it was being removed; it was put back"):
        snap.remove()
    assert path.read_bytes() == b"{}\n// added\n"
    monkeypatch.undo()
    fileops.Snapshot(path).remove()
    assert not path.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_displaced_file_that_cannot_be_read_is_swapped_back(tmp_path, monkeypatch):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"original\n")
    snap = fileops.Snapshot(path)
    real_exchange = require_exchange(tmp_path)

    def fifo_then_exchange(first, second):
        if not (tmp_path / "pipe").exists():
            os.mkfifo(tmp_path / "pipe")
            os.rename(tmp_path / "pipe", path)  # whatever is there now, it is not what was read
        return real_exchange(first, second)

    monkeypatch.setattr(renames, "exchange_names", fifo_then_exchange)
    with pytest.raises(RefusedError, match="your version was put back"):
        snap.replace(b"new\n")
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_without_exchange_a_second_writer_after_the_put_back_check_keeps_theirs(tmp_path, monkeypatch):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"original\n")
    snap = fileops.Snapshot(path)
    no_exchange(monkeypatch)
    real_replace = os.replace

    def in_place_edit_then_replace_then_another_save(src, dst):
        if os.path.abspath(dst) == str(path) and src.endswith(".tmp") and not (tmp_path / "done").exists():
            (tmp_path / "done").write_bytes(b"")
            _overwrite_start(path, b"ORIGINAL\n")
            result = real_replace(src, dst)
            (tmp_path / "third").write_bytes(b"third writer\n")
            real_replace(tmp_path / "third", path)
            return result
        return real_replace(src, dst)

    monkeypatch.setattr(fileops.os, "replace", in_place_edit_then_replace_then_another_save)
    with pytest.raises(RefusedError, match="twice; it holds the last writer's version"):
        snap.replace(b"new\n")
    monkeypatch.undo()
    assert path.read_bytes() == b"third writer\n"


# --------------------------------------------------------------------------- where the locks are (issue 22 item 4)


@pytest.mark.parametrize("relative, lock", [
    ("MEMORY.md", ".MEMORY.md.memory-router.lock"),
    (".mcp.json", ".mcp.json.memory-router.lock"),  # one dot, not "..mcp.json"
    ("sub/.settings.json", "sub/.settings.json.memory-router.lock"),
])
def test_outside_a_git_work_tree_the_lock_is_a_hidden_file_beside_it(tmp_path, relative, lock):
    assert fileops.lock_path_for(tmp_path / relative) == str(tmp_path / lock)


@pytest.mark.parametrize("relative, lock", [
    ("brain/memory-layer1-clusters.md", "brain%2Fmemory-layer1-clusters.md.lock"),
    (".mcp.json", ".mcp.json.lock"),
    (".claude/settings.json", ".claude%2Fsettings.json.lock"),
])
def test_in_a_git_work_tree_every_lock_is_in_the_folder_memory_router_owns(tmp_path, relative, lock):
    (tmp_path / ".git").mkdir()
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"old\n")
    assert fileops.lock_path_for(path) == str(tmp_path / ".claude" / "memory-router" / "locks" / lock)
    fileops.Snapshot(path).replace(b"new\n")
    state = tmp_path / ".claude" / "memory-router"
    assert (state / "locks" / lock).is_file()
    assert (state / ".gitignore").read_text() == fileops.STATE_GITIGNORE
    # Nothing but the file itself beside it: no lock, no temp file.
    assert sorted(p.name for p in path.parent.iterdir() if p.name not in (".git", ".claude", "memory-router")) \
        == [path.name]


def test_two_paths_never_share_a_lock_in_a_work_tree(tmp_path):
    (tmp_path / ".git").mkdir()
    locks = {fileops.lock_path_for(tmp_path / p) for p in ("a/b.md", "a%2Fb.md", "a_b.md", "a/b.md.lock")}
    assert len(locks) == 4


def test_the_state_folder_keeps_a_gitignore_someone_edited(tmp_path):
    state = tmp_path / "memory-router"
    state.mkdir()
    (state / ".gitignore").write_text("backups/\n")
    fileops.ensure_state_dir(state)
    assert (state / ".gitignore").read_text() == "backups/\n"
    fresh = tmp_path / "other" / "memory-router"
    fileops.ensure_state_dir(fresh)
    assert (fresh / ".gitignore").read_text().splitlines()[-1] == "*"
