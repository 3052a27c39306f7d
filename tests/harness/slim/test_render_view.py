"""``slim render``'s before/after of the always-loaded index, and its warning when the hot strip
is empty (issue 22: a render with no hot strip moved every memory out without a word)."""

import json
import os
import shutil

import pytest

from harness.cli import main
from router.config import bundled_example_dir


@pytest.fixture
def memory_dir(tmp_path):
    directory = tmp_path / "memory"
    directory.mkdir()
    shutil.copy(os.path.join(bundled_example_dir(), "MEMORY.md"), directory)
    return directory


def render(memory_dir, *extra):
    return main(["slim", "render", "--memory-dir", str(memory_dir), "--config",
                 os.path.join(bundled_example_dir(), "memory-router.toml"), *extra])


def test_render_prints_the_always_loaded_index_before_and_after(memory_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert render(memory_dir, "--dry-run", "--json") == 0
    views = json.loads(capsys.readouterr().out)["always_loaded"]
    before, after = views["before"], views["after"]
    assert before["memory_lines"] == 126 and before["cluster_lines"] == 0
    assert after["cluster_lines"] == 26 and 0 < after["memory_lines"] < 20
    assert sum(before["by_type"].values()) == before["memory_lines"]
    assert render(memory_dir) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "before and after" in out
    for label, key in (("memory lines", "memory_lines"), ("cluster router lines", "cluster_lines")):
        (row,) = [line for line in out.splitlines() if line.startswith(f"│ {label} ")]
        assert row.split("│")[2].strip() == str(before[key]) and row.split("│")[3].strip() == str(after[key])
    for kind in before["by_type"]:
        assert any(line.startswith(f"│   {kind} ") for line in out.splitlines())
    moved = before["memory_lines"] - after["memory_lines"]
    assert (f"hot strip: {after['memory_lines']} slug(s) always loaded\nrouted on demand: {moved} memory line(s) "
            "leave the index, reached through 26 cluster(s)\n") in out
    assert max(len(line) for line in out.splitlines() if line[:1] in "┏┃┡│└") <= 80
    assert "hot strip is empty" not in captured.err


def test_an_empty_hot_strip_is_warned_about_with_the_fix(memory_dir, tmp_path, capsys):
    config = tmp_path / "memory-router.toml"
    config.write_text(f'clusters = "{os.path.join(bundled_example_dir(), "memory-layer1-clusters.md")}"\n')
    assert main(["slim", "render", "--memory-dir", str(memory_dir), "--config", str(config)]) == 0
    captured = capsys.readouterr()
    assert "memory-router: warning: the hot strip is empty, so none of the 126 memories stays always loaded" \
        in captured.err
    assert "hot strip: 0 slug(s) always loaded\nrouted on demand: 126 memory line(s) leave" in captured.out
    assert main(["slim", "rollback", "--memory-dir", str(memory_dir)]) == 0
    capsys.readouterr()
    assert main(["slim", "render", "--memory-dir", str(memory_dir), "--config", str(config), "--dry-run",
                 "--json"]) == 0
    assert any("hot strip is empty" in w for w in json.loads(capsys.readouterr().out)["warnings"])


def test_render_and_rollback_say_which_store_they_read(memory_dir, capsys):
    config = os.path.join(bundled_example_dir(), "memory-router.toml")
    assert render(memory_dir, "--dry-run", "--json") == 0
    store = json.loads(capsys.readouterr().out)["store"]
    assert store == {"cluster_file": os.path.join(bundled_example_dir(), "memory-layer1-clusters.md"),
                     "cluster_file_from": f"clusters in {config}", "memory_dir": str(memory_dir),
                     "memory_dir_from": "--memory-dir", "config_file": config}
    assert render(memory_dir) == 0
    out = capsys.readouterr().out
    assert f"cluster file: {store['cluster_file']} (clusters in {config})\n" in out
    assert f"memory directory: {memory_dir} (--memory-dir)\n" in out
    assert main(["slim", "rollback", "--memory-dir", str(memory_dir)]) == 0
    assert f"memory directory: {memory_dir} (--memory-dir)\n" in capsys.readouterr().out
