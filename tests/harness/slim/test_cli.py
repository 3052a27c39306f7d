"""``memory-router slim render`` / ``slim rollback`` on a temp copy of the example store.

Every test works on a copy; the bundled files are never written."""

import hashlib
import json
import os
import re
import shutil

import pytest

from canaries.memoryindex import parse_slim_index
from harness import archives, fileops
from harness.slim import index as slim
from harness.cli import main
from router.store.clusterfile import load_cluster_file
from router.config import bundled_example_dir
from router.configfile import parse_config_file
from support.late_edit import HAS_PROC_FD, edit_during_fsync_of_temp_for, fail_final_rename


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def listing(directory):
    return sorted(os.listdir(directory))


@pytest.fixture
def store(tmp_path):
    """A temp copy of the example store: project dir with config + clusters, and a memory dir."""
    example = bundled_example_dir()
    project = tmp_path / "project"
    memory = tmp_path / "memory"
    project.mkdir()
    memory.mkdir()
    shutil.copy(os.path.join(example, "memory-layer1-clusters.md"), project)
    shutil.copy(os.path.join(example, "memory-router.toml"), project)
    shutil.copy(os.path.join(example, "MEMORY.md"), memory)

    class Store:
        config = project / "memory-router.toml"
        clusters = project / "memory-layer1-clusters.md"
        memory_dir = memory
        live = memory / "MEMORY.md"
        flat_sha = sha(memory / "MEMORY.md")

        def render(self, *extra):
            return main(["slim", "render", "--memory-dir", str(memory), "--config", str(project / "memory-router.toml"),
                         *extra])

        def rollback(self, *extra):
            return main(["slim", "rollback", "--memory-dir", str(memory), *extra])

        def archives(self, stem="MEMORY.archive-"):
            return [memory / n for n in listing(memory) if n.startswith(stem)]

    return Store()


def test_render_cuts_example_store_under_target_with_every_cluster_and_hot_slug(store, capsys):
    flat_bytes = store.live.read_bytes()
    assert store.render() == 0
    out = capsys.readouterr().out
    text = store.live.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 5500 < len(flat_bytes)
    index = load_cluster_file(store.clusters)
    hot = parse_config_file(str(store.config))["hot_strip"]
    assert re.findall(r"^- (\S+) \(\d+\) \u2014 ", text, re.M) == list(index.cluster_ids)
    assert len(index.cluster_ids) == 26
    for slug in hot:
        assert f"\n- {slug} \u2014 {index.find_member(slug)[1].hook}\n" in text
    [archive] = store.archives()
    assert re.fullmatch(r"MEMORY\.archive-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.md", archive.name)
    assert archive.read_bytes() == flat_bytes
    assert str(archive) in out and "18583" in out


def test_render_json_shape(store, capsys):
    assert store.render("--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["written"] is True and result["status"] == "written" and result["dry_run"] is False
    assert result["bytes_before"] == 18583
    assert result["bytes_after"] == os.path.getsize(store.live)
    assert result["lines_after"] == len(store.live.read_text(encoding="utf-8").splitlines())
    assert result["cut_percent"] == round(100 * (18583 - result["bytes_after"]) / 18583, 1)
    assert result["clusters"] == 26
    assert os.path.isfile(result["archive"])
    assert result["sha256_before"] == store.flat_sha and result["sha256_after"] == sha(store.live)
    # the example store's four user memories leave the index: said, never silently
    assert result["user_memories_leaving"] == [
        "user_role_solo_developer", "user_timezone_cet", "user_prefers_terse_answers", "user_hardware"]
    assert [w for w in result["warnings"] if "user memories" not in w] == []
    assert result["unrouted_slugs"] == []
    assert set(result["hot_strip_sources"]) == set(result["hot_strip"])
    assert result["router"]["ok"] and result["router"]["route"]["scope"] == "user"


def test_rollback_restores_byte_for_byte_and_keeps_the_slim_file(store, capsys):
    assert store.render() == 0
    slim_bytes = store.live.read_bytes()
    assert store.rollback() == 0
    assert sha(store.live) == store.flat_sha
    [pre] = store.archives("MEMORY.pre-rollback-")
    assert pre.read_bytes() == slim_bytes
    [archive] = store.archives()
    assert sha(archive) == store.flat_sha


def test_rollback_json(store, capsys):
    assert store.render() == 0
    capsys.readouterr()
    assert store.rollback("--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "restored" and result["written"] is True
    assert result["sha256_archive"] == store.flat_sha == result["sha256_after"] == sha(store.live)
    assert os.path.basename(result["pre_rollback_archive"]).startswith("MEMORY.pre-rollback-")
    assert result["restored_from"] == str(store.archives()[0])


def test_render_rollback_render_rollback_round_trips(store):
    assert store.render() == 0
    slim_sha = sha(store.live)
    assert store.rollback() == 0
    assert sha(store.live) == store.flat_sha
    assert store.render() == 0
    assert sha(store.live) == slim_sha
    assert store.rollback() == 0
    assert sha(store.live) == store.flat_sha
    assert len(store.archives()) == 2
    assert len(store.archives("MEMORY.pre-rollback-")) == 2
    assert all(sha(a) == store.flat_sha for a in store.archives())
    assert all(sha(a) == slim_sha for a in store.archives("MEMORY.pre-rollback-"))


def test_dry_run_says_the_verdict_and_sizes_first_and_the_diff_only_with_v(store, capsys):
    before = listing(store.memory_dir)
    assert store.render("--dry-run") == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "slim render (dry run, nothing written): would write the slim index"
    assert lines[1].startswith(f"{store.live}: 18583 -> ") and "% cut)" in lines[1]
    assert "--- " not in captured.out and lines[-1] == "-v shows the diff" and len(lines) < 10
    assert "4 user memories (your profile" in captured.err and "user_hardware" in captured.err
    assert store.render("--dry-run", "-v") == 0
    verbose = capsys.readouterr().out
    assert verbose.startswith(lines[0]) and "\n--- " in verbose and "+## Cluster router (routed on demand)\n" in verbose
    assert listing(store.memory_dir) == before and sha(store.live) == store.flat_sha


def test_the_profile_warning_advises_what_keeps_the_confirmed_strip(store, capsys):
    """Issue 36 item 3: the advice for a user memory leaving the index must not be ``--hot SLUG``
    alone (it replaces the whole strip init proposed and the user confirmed); it names hot_strip in
    the config file this render read, and following it keeps the strip and adds the memory."""
    assert store.render("--dry-run") == 0
    err = capsys.readouterr().err
    assert "keep one loaded with --hot SLUG" not in err
    assert f"add its slug to hot_strip in {store.config}" in err and "--hot replaces the whole strip" in err
    leaving = re.search(r"sends them: ([a-z0-9_]+)", err).group(1)
    confirmed = parse_config_file(str(store.config))["hot_strip"]
    text = store.config.read_text(encoding="utf-8")
    store.config.write_text(text.replace("hot_strip = [", f'hot_strip = [\n    "{leaving}",', 1), encoding="utf-8")
    assert store.render("--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["hot_strip"]) == {leaving, *confirmed} and leaving not in result["user_memories_leaving"]


def test_render_without_a_router_is_refused_naming_the_fix(store, capsys, no_router):
    code = store.render()
    err = capsys.readouterr().err
    assert code == 1 and "no memory-router prompt hook for this project" in err
    assert "116 memory line(s)" in err and "memory-router install" in err and "--force" in err
    assert store.archives() == [] and sha(store.live) == store.flat_sha


def test_a_dry_run_without_a_router_says_it_would_refuse(store, capsys, no_router):
    assert store.render("--dry-run") == 0
    assert capsys.readouterr().out.startswith("slim render (dry run, nothing written): would refuse: no memory-router")
    assert store.render("--dry-run", "--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["router"]["ok"] is False and "no router would send them" in result["would_refuse"]


def test_force_renders_without_a_router_and_says_what_it_risks(store, capsys, no_router):
    assert store.render("--force") == 0
    err = capsys.readouterr().err
    assert "--force: rendering without a router" in err and "reach no prompt" in err and "slim rollback" in err
    assert len(store.archives()) == 1


def test_a_router_hook_whose_trial_run_fails_does_not_count(store, capsys, user_router):
    settings = json.loads(open(user_router).read())
    handler = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    handler["command"] = "exit 3; " + handler["command"]  # still ours, by its mark and its words
    with open(user_router, "w") as handle:
        json.dump(settings, handle)
    code = store.render()
    err = capsys.readouterr().err
    assert code == 1 and "wired but its trial run failed" in err and "exited 3" in err
    assert store.archives() == []


def test_an_enabled_plugin_running_the_hook_is_a_router(store, capsys, no_router, monkeypatch):
    from harness.install import plugins as plugin_records
    from harness.install.plugins import PluginHook, RouterPlugin
    from harness.install.hookcommand import router_executable

    hook = PluginHook("prompt hook", "UserPromptSubmit", None,
                      (*router_executable(), "hook", "--clusters", str(store.clusters)))
    plugin = RouterPlugin("memory-router@memory-router", True, ("user", "settings.json"), "user", "/plugin", "0.1",
                          (hook,), True, None)
    monkeypatch.setattr(plugin_records, "router_plugins", lambda *_a, **_k: [plugin])
    assert store.render("--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["written"] and result["router"]["route"]["scope"] == "plugin"


def test_dry_run_json_carries_the_diff(store, capsys):
    assert store.render("--dry-run", "--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["written"] is False and result["archive"] is None and result["status"] == "dry-run"
    assert "+## Always-loaded (confabulation catchers)" in result["diff"]
    assert sha(store.live) == store.flat_sha


def test_failed_final_rename_leaves_live_file_whole_and_archive_present(store, monkeypatch, capsys):
    fail_final_rename(monkeypatch, store.live, OSError(28, "No space left on device"))
    assert store.render() == 1
    err = capsys.readouterr().err
    assert "could not replace" in err and "unchanged" in err and "Traceback" not in err
    assert sha(store.live) == store.flat_sha
    [archive] = store.archives()
    assert sha(archive) == store.flat_sha
    assert not [n for n in listing(store.memory_dir) if n.endswith(".tmp")]


def test_live_file_changed_while_planning_is_refused_with_nothing_written(store, monkeypatch, capsys):
    real_assemble = slim.assemble_slim_index

    def assemble_while_someone_edits(hot_strip, router):
        with open(store.live, "a", encoding="utf-8") as handle:
            handle.write("- new_memory \u2014 written by Claude Code meanwhile\n")
        return real_assemble(hot_strip, router)

    monkeypatch.setattr(slim, "assemble_slim_index", assemble_while_someone_edits)
    assert store.render() == 1
    assert "changed since it was read" in capsys.readouterr().err
    assert store.archives() == []
    assert store.live.read_text(encoding="utf-8").endswith("written by Claude Code meanwhile\n")


def test_live_file_changed_after_archiving_is_refused_and_not_overwritten(store, monkeypatch, capsys):
    real_write_archive = archives.write_archive

    def archive_then_edit(*args, **kwargs):
        path = real_write_archive(*args, **kwargs)
        with open(store.live, "a", encoding="utf-8") as handle:
            handle.write("- late_memory \u2014 appended after the archive\n")
        return path

    monkeypatch.setattr(archives, "write_archive", archive_then_edit)
    assert store.render() == 1
    err = capsys.readouterr().err
    assert "changed since it was read" in err and "archive" in err
    assert store.live.read_text(encoding="utf-8").endswith("appended after the archive\n")
    [archive] = store.archives()
    assert sha(archive) == store.flat_sha


@pytest.mark.parametrize("how", ["--hot", "config", "front matter"])
def test_unknown_hot_slug_is_refused_with_nothing_written(store, capsys, how):
    extra = []
    if how == "--hot":
        extra = ["--hot", "env_bash_tool_env_var_caching", "--hot", "no_such_memory"]
    elif how == "config":
        text = store.config.read_text(encoding="utf-8").replace('"feedback_hooks_fail_open",',
                                                               '"feedback_hooks_fail_open", "no_such_memory",')
        store.config.write_text(text, encoding="utf-8")
    else:
        (store.memory_dir / "no_such_memory.md").write_text(
            "---\nname: no-such-memory\ndescription: x\nhot: true\ntype: feedback\n---\nbody\n", encoding="utf-8")
    before = listing(store.memory_dir)
    assert store.render(*extra) == 1
    err = capsys.readouterr().err
    assert "no_such_memory" in err and "nothing was written" in err
    assert listing(store.memory_dir) == before and sha(store.live) == store.flat_sha


@pytest.mark.parametrize("front_matter", [
    "---\nname: x\ndescription: y\ntype: project\nhot: true\n---\n",
    "---\nname: x\ndescription: y\nmetadata:\n  type: project\n  hot: true\n---\n",
])
def test_hot_true_front_matter_adds_to_the_config_strip(store, capsys, front_matter):
    (store.memory_dir / "project_slim_index_hot_strip.md").write_text(front_matter + "body\n", encoding="utf-8")
    assert store.render("--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["hot_strip"][-1] == "project_slim_index_hot_strip"
    assert result["hot_strip"][:10] == parse_config_file(str(store.config))["hot_strip"]
    assert "\n- project_slim_index_hot_strip \u2014 " in store.live.read_text(encoding="utf-8")


def test_hot_option_replaces_configured_strip(store, capsys):
    assert store.render("--hot", "env_cloudflare_workers_build_secret_vs_text", "--json") == 0
    hot, _clusters = parse_slim_index(store.live.read_text(encoding="utf-8"))
    assert hot == ["env_cloudflare_workers_build_secret_vs_text"]


def test_unwritable_archive_directory_is_refused_simulated(store, monkeypatch, capsys):
    real_open = os.open

    def denying_open(path, flags, *args, **kwargs):
        if os.path.basename(str(path)).startswith("MEMORY.archive-"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(fileops.os, "open", denying_open)
    assert store.render() == 1
    err = capsys.readouterr().err
    assert "cannot write an archive" in err and "Permission denied" in err
    monkeypatch.undo()
    assert sha(store.live) == store.flat_sha
    assert store.archives() == []


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_archive_directory_is_refused_chmod(store, capsys):
    os.chmod(store.memory_dir, 0o555)
    try:
        assert store.render() == 1
        assert "cannot write an archive" in capsys.readouterr().err
    finally:
        os.chmod(store.memory_dir, 0o755)
    assert sha(store.live) == store.flat_sha and store.archives() == []


def test_render_over_a_slim_index_is_refused_unless_forced(store, capsys):
    assert store.render() == 0
    slim_sha = sha(store.live)
    capsys.readouterr()
    # Same input again: already up to date, nothing written.
    assert store.render("--json") == 0
    assert json.loads(capsys.readouterr().out)["status"] == "up-to-date"
    assert len(store.archives()) == 1
    # A different strip over a slim index: refused without --force.
    assert store.render("--hot", "env_bash_tool_env_var_caching") == 1
    assert "already a slim index" in capsys.readouterr().err
    assert sha(store.live) == slim_sha and len(store.archives()) == 1
    assert store.render("--hot", "env_bash_tool_env_var_caching", "--force") == 0
    assert len(store.archives()) == 2
    assert sha(store.archives()[-1]) == slim_sha


def test_render_never_falls_back_to_the_bundled_store(tmp_path, store, capsys):
    assert main(["slim", "render", "--memory-dir", str(store.memory_dir)]) == 2
    assert "no cluster file found" in capsys.readouterr().err
    assert sha(store.live) == store.flat_sha


@pytest.mark.parametrize("setup, code, message", [
    ("no-dir", 2, "memory directory does not exist"),
    ("no-memory-md", 2, "no MEMORY.md to slim"),
    ("no-dir-given", 2, "no memory directory given"),
])
def test_render_bad_input_exits_2(tmp_path, store, capsys, setup, code, message):
    args = ["slim", "render", "--clusters", str(store.clusters)]
    if setup == "no-dir":
        args += ["--memory-dir", str(tmp_path / "missing")]
    elif setup == "no-memory-md":
        empty = tmp_path / "empty"
        empty.mkdir()
        args += ["--memory-dir", str(empty)]
    assert main(args) == code
    assert message in capsys.readouterr().err


def test_memory_dir_from_config(store, capsys):
    with open(store.config, "a", encoding="utf-8") as handle:
        handle.write(f'\nmemory_dir = "{store.memory_dir.as_posix()}"\n')
    assert main(["slim", "render", "--config", str(store.config)]) == 0
    assert main(["slim", "rollback", "--config", str(store.config)]) == 0
    assert sha(store.live) == store.flat_sha


def test_render_warns_about_memories_no_route_reaches(store, capsys):
    with open(store.live, "a", encoding="utf-8") as handle:
        handle.write("- orphan_memory \u2014 in no cluster\n")
    assert store.render("--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["unrouted_slugs"] == ["orphan_memory"]
    assert any("orphan_memory" in w for w in result["warnings"])


def test_render_warns_over_the_size_target(store, capsys):
    index = load_cluster_file(store.clusters)
    every_slug = [m.slug for m in index.members]
    assert store.render("--hot", *[a for s in every_slug for a in ("--hot", s)][1:]) == 0
    err = capsys.readouterr().err
    assert "5500-byte target" in err
    assert os.path.getsize(store.live) > 5500


# --------------------------------------------------------------------------- rollback


def test_rollback_without_archive_is_refused(store, capsys):
    assert store.rollback() == 1
    assert "no MEMORY.archive-" in capsys.readouterr().err
    assert sha(store.live) == store.flat_sha


def test_rollback_picks_the_newest_archive_by_name(store, capsys):
    older = store.memory_dir / "MEMORY.archive-2026-01-01T00-00-00-000Z.md"
    newer = store.memory_dir / "MEMORY.archive-2026-02-01T00-00-00-000Z.md"
    newer_clash = store.memory_dir / "MEMORY.archive-2026-02-01T00-00-00-000Z-2.md"
    for path, data in ((older, b"older\n"), (newer, b"newer\n"),
                       (newer_clash, b"newer, second in the same millisecond\n")):
        path.write_bytes(data)
        archives.write_archive_record(path, data)  # as write_archive records it
    # A pre-rollback copy with a later stamp is never the default.
    (store.memory_dir / "MEMORY.pre-rollback-2027-01-01T00-00-00-000Z.md").write_bytes(b"pre\n")
    os.utime(older, None)  # mtime must not matter, only the stamp in the name
    assert store.rollback() == 0
    assert store.live.read_bytes() == b"newer, second in the same millisecond\n"


def test_rollback_named_archive_relative_to_memory_dir(store, capsys):
    (store.memory_dir / "MEMORY.archive-2026-01-01T00-00-00-000Z.md").write_bytes(b"chosen\n")
    (store.memory_dir / "MEMORY.archive-2026-02-01T00-00-00-000Z.md").write_bytes(b"newest\n")
    assert store.rollback("--archive", "MEMORY.archive-2026-01-01T00-00-00-000Z.md") == 0
    assert store.live.read_bytes() == b"chosen\n"
    [pre] = store.archives("MEMORY.pre-rollback-")
    assert sha(pre) == store.flat_sha


@pytest.mark.parametrize("archive, message", [
    ("missing.md", "archive not found"),
    ("MEMORY.md", "the live MEMORY.md itself"),
])
def test_rollback_bad_archive_exits_2(store, capsys, archive, message):
    assert store.rollback("--archive", archive) == 2
    assert message in capsys.readouterr().err
    assert sha(store.live) == store.flat_sha


def test_rollback_refuses_when_live_changes_after_archiving(store, monkeypatch, capsys):
    assert store.render() == 0
    slim_text = store.live.read_bytes()
    real_write_archive = archives.write_archive

    def archive_then_edit(*args, **kwargs):
        path = real_write_archive(*args, **kwargs)
        with open(store.live, "ab") as handle:
            handle.write(b"- edited \xe2\x80\x94 meanwhile\n")
        return path

    monkeypatch.setattr(archives, "write_archive", archive_then_edit)
    assert store.rollback() == 1
    assert "changed since it was read" in capsys.readouterr().err
    assert store.live.read_bytes() == slim_text + "- edited \u2014 meanwhile\n".encode()


def test_rollback_failed_rename_leaves_live_file_and_both_archives(store, monkeypatch, capsys):
    assert store.render() == 0
    slim_sha = sha(store.live)
    fail_final_rename(monkeypatch, store.live)
    assert store.rollback() == 1
    assert sha(store.live) == slim_sha
    [pre] = store.archives("MEMORY.pre-rollback-")
    assert sha(pre) == slim_sha


def test_rollback_when_already_equal_writes_nothing(store, capsys):
    assert store.render() == 0
    assert store.rollback() == 0
    capsys.readouterr()
    before = listing(store.memory_dir)
    assert store.rollback("--json") == 0
    assert json.loads(capsys.readouterr().out)["status"] == "up-to-date"
    assert listing(store.memory_dir) == before


def test_rollback_dry_run_writes_nothing(store, capsys):
    assert store.render() == 0
    slim_sha = sha(store.live)
    before = listing(store.memory_dir)
    capsys.readouterr()
    assert store.rollback("--dry-run") == 0
    assert "-## Cluster router (routed on demand)" in capsys.readouterr().out
    assert listing(store.memory_dir) == before and sha(store.live) == slim_sha


def test_rollback_recreates_a_deleted_live_file(store, capsys):
    assert store.render() == 0
    store.live.unlink()
    assert store.rollback() == 0
    assert sha(store.live) == store.flat_sha
    assert store.archives("MEMORY.pre-rollback-") == []


def test_installed_console_script_renders_and_rolls_back(store, run_cli):
    done = run_cli("slim", "render", "--memory-dir", store.memory_dir, "--config", store.config)
    assert done.returncode == 0, done.stderr
    assert os.path.getsize(store.live) <= 5500
    done = run_cli("slim", "rollback", "--memory-dir", store.memory_dir, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sha256_after"] == store.flat_sha == sha(store.live)


def test_symlinked_memory_md_is_written_through_the_link(store, tmp_path):
    real = tmp_path / "dotfiles" / "MEMORY.md"
    real.parent.mkdir()
    os.replace(store.live, real)
    os.symlink(real, store.live)
    assert store.render() == 0
    assert os.path.islink(store.live) and os.path.getsize(real) <= 5500
    assert sha(store.archives()[0]) == store.flat_sha
    assert store.rollback() == 0
    assert os.path.islink(store.live) and sha(real) == store.flat_sha


def test_rollback_after_a_render_late_in_a_second_restores_that_render_archive(store, monkeypatch, capsys):
    # An archive from earlier in the same second; the render's own archive, written at .9996 s,
    # must still be the newest by name (a rounded "-000Z" stamp sorted before "-500Z").
    import time
    import types

    second = 1_753_161_901
    stale = store.memory_dir / f"MEMORY.archive-{archives.archive_stamp(second + 0.5)}.md"
    stale.write_bytes(b"an older index\n")
    monkeypatch.setattr(archives, "time", types.SimpleNamespace(
        time=lambda: second + 0.9996, strftime=time.strftime, gmtime=time.gmtime, monotonic=time.monotonic,
        sleep=time.sleep))
    assert store.render() == 0
    monkeypatch.undo()
    assert store.rollback() == 0
    assert sha(store.live) == store.flat_sha


def test_archive_write_failing_midway_leaves_no_archive_a_rollback_could_pick(store, monkeypatch, capsys):
    assert store.render() == 0
    slim_sha = sha(store.live)
    capsys.readouterr()

    def no_space(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileops.os, "fsync", no_space)
    assert store.render("--hot", "env_bash_tool_env_var_caching", "--force") == 1
    assert "No space left on device" in capsys.readouterr().err
    monkeypatch.undo()
    assert sha(store.live) == slim_sha
    [archive] = store.archives()
    assert sha(archive) == store.flat_sha
    assert store.rollback() == 0
    assert sha(store.live) == store.flat_sha


def test_unknown_hot_slug_from_front_matter_names_the_memory_file(store, capsys):
    bad = store.memory_dir / "no-such-memory.md"
    bad.write_text("---\nname: no-such-memory\ndescription: x\nmetadata:\n  type: feedback\n  hot: true\n---\nbody\n",
                   encoding="utf-8")
    assert store.render() == 1
    err = capsys.readouterr().err
    assert f"no_such_memory (from hot: true in {bad})" in err
    assert sha(store.live) == store.flat_sha and store.archives() == []


# --------------------------------------------------------------------------- truncated archives

RENDER_UNDER_A_FILE_SIZE_LIMIT = """
import resource, signal, sys
sys.dont_write_bytecode = True
from harness.cli import main
import harness.slim.cli, harness.fileops, harness.archives, harness.slim.index, harness.output, router.store.clusterfile  # noqa: F401
# A real kill in the middle of a write: past RLIMIT_FSIZE the kernel sends SIGXFSZ, whose default
# action (Python ignores it; restored here) terminates the process.
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="no RLIMIT_FSIZE signal here")
@pytest.mark.parametrize("fraction", [0.001, 0.5, 0.999])
def test_render_killed_mid_archive_leaves_no_truncated_archive_for_rollback(store, capsys, fraction):
    """Issue 11, class 1: the killed render's archive must never appear under its final name
    incomplete, and the rollback that follows must never write a truncated MEMORY.md."""
    import signal
    import subprocess
    import sys

    flat = store.live.read_bytes()
    limit = max(1, int(len(flat) * fraction))
    result = subprocess.run([sys.executable, "-c", RENDER_UNDER_A_FILE_SIZE_LIMIT, str(limit), "slim", "render",
                             "--memory-dir", str(store.memory_dir), "--config", str(store.config)],
                            capture_output=True, timeout=60)
    assert result.returncode == -signal.SIGXFSZ, result.stderr
    assert store.live.read_bytes() == flat
    assert store.archives() == []  # only a hidden temp file may remain
    assert store.rollback() == 1
    assert "no MEMORY.archive-" in capsys.readouterr().err
    assert store.live.read_bytes() == flat


@pytest.mark.parametrize("damage", ["zero bytes", "truncated", "part rewritten", "appended"])
def test_rollback_refuses_an_archive_that_differs_from_its_record(store, capsys, damage):
    assert store.render() == 0
    slim_bytes = store.live.read_bytes()
    [archive] = store.archives()
    flat = archive.read_bytes()
    archive.write_bytes({"zero bytes": b"", "truncated": flat[: len(flat) // 3],
                         "part rewritten": flat[:100] + b"\0" * 50 + flat[150:],
                         "appended": flat + b"- extra \xe2\x80\x94 line\n"}[damage])
    capsys.readouterr()
    assert store.rollback() == 1
    err = capsys.readouterr().err
    assert str(archive) in err and "damaged" in err and err.count("\n") == 1
    assert store.live.read_bytes() == slim_bytes
    assert store.archives("MEMORY.pre-rollback-") == []
    assert store.rollback("--archive", str(archive)) == 1  # named explicitly, still checked
    assert store.live.read_bytes() == slim_bytes


def test_rollback_refuses_the_newest_archive_without_a_record_unless_named(store, capsys):
    """An archive from before records were kept (or a 0-byte one an old render left) is never
    picked by default; naming it restores it and says it was unchecked."""
    legacy = store.memory_dir / "MEMORY.archive-2026-01-01T00-00-00-000Z.md"
    legacy.write_bytes(b"")
    assert store.rollback() == 1
    err = capsys.readouterr().err
    assert str(legacy) in err and "no integrity record" in err
    assert store.live.read_bytes() != b""
    legacy.write_bytes(b"# Memory Index\n- restored_by_name \xe2\x80\x94 hand-made\n")
    assert store.rollback("--archive", str(legacy)) == 0
    assert "unchecked" in capsys.readouterr().out
    assert store.live.read_bytes() == legacy.read_bytes()


def test_rollback_json_says_whether_the_archive_was_verified(store, capsys):
    assert store.render() == 0
    capsys.readouterr()
    assert store.rollback("--json") == 0
    assert json.loads(capsys.readouterr().out)["archive_verified"] is True


# --------------------------------------------------------------------------- lost updates


@pytest.mark.skipif(not HAS_PROC_FD, reason="needs /proc to name the fsynced file")
@pytest.mark.parametrize("command", ["render", "rollback"])
def test_an_edit_while_the_new_index_is_fsynced_is_refused_and_kept(store, monkeypatch, capsys, command):
    """Issue 11, class 2: a save to MEMORY.md between the last check and the rename was lost."""
    if command == "rollback":
        assert store.render() == 0
    before = store.live.read_bytes()
    late = before + "- late_note \u2014 saved while memory-router was writing\n".encode()
    done = edit_during_fsync_of_temp_for(monkeypatch, store.live, lambda: store.live.write_bytes(late))
    capsys.readouterr()
    assert (store.render() if command == "render" else store.rollback()) == 1
    assert done
    assert "changed" in capsys.readouterr().err
    assert store.live.read_bytes() == late


def test_render_refuses_a_read_only_memory_md(store, capsys):
    os.chmod(store.live, 0o444)
    assert store.render() == 1
    err = capsys.readouterr().err
    assert f"{store.live} is read-only (mode 0444)" in err and "chmod u+w" in err
    assert sha(store.live) == store.flat_sha and store.archives() == []


def test_rollback_refuses_a_read_only_memory_md(store, capsys):
    assert store.render() == 0
    slim_sha = sha(store.live)
    os.chmod(store.live, 0o444)
    capsys.readouterr()
    assert store.rollback() == 1
    assert "is read-only" in capsys.readouterr().err
    assert sha(store.live) == slim_sha and store.archives("MEMORY.pre-rollback-") == []


def test_rollback_says_which_index_lines_added_after_the_render_it_drops(store, capsys):
    assert store.render() == 0
    with open(store.live, "a", encoding="utf-8") as handle:
        handle.write("- feedback_new_after_render \u2014 added by Claude Code after the render\n")
    capsys.readouterr()
    assert store.rollback() == 0
    out, err = capsys.readouterr()
    pre = store.archives("MEMORY.pre-rollback-")
    assert len(pre) == 1 and "feedback_new_after_render" in pre[0].read_text()
    assert "1 index line(s)" in err and "feedback_new_after_render" in err and str(pre[0]) in err
    assert sha(store.live) == store.flat_sha


def test_rollback_json_lists_dropped_index_lines(store, capsys):
    assert store.render() == 0
    with open(store.live, "a", encoding="utf-8") as handle:
        handle.write("- project_late \u2014 late\n")
    capsys.readouterr()
    assert store.rollback("--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["slug"] for d in data["dropped_index_lines"]] == ["project_late"]


def test_a_plain_rollback_warns_about_nothing(store, capsys):
    assert store.render() == 0
    capsys.readouterr()
    assert store.rollback() == 0
    assert "index line(s)" not in capsys.readouterr().err
