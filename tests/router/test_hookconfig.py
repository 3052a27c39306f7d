"""The files both hooks read before they decide (router/hookconfig.py): the config lookup they
share and the size limit they refuse past."""

import os

import pytest

from router import hookconfig
from router.errors import ConfigError


def test_a_file_over_the_limit_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "clusters.md"
    path.write_text("x" * 100, encoding="utf-8")
    hookconfig.check_size(str(path), 100, "cluster file")
    with pytest.raises(ValueError, match="over the hook's limit of 99"):
        hookconfig.check_size(str(path), 99, "cluster file")


def test_memory_router_toml_comes_before_pyproject_and_the_first_directory_wins(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
    (first / "pyproject.toml").write_text("[tool.memory-router]\nline_cap = 3\n", encoding="utf-8")
    (first / "memory-router.toml").write_text("line_cap = 5\n", encoding="utf-8")
    (second / "memory-router.toml").write_text("line_cap = 7\n", encoding="utf-8")
    assert hookconfig.find_config([None, str(first), str(second)])["settings"]["line_cap"] == 5
    os.remove(first / "memory-router.toml")
    assert hookconfig.find_config([str(first), str(second)])["settings"]["line_cap"] == 3


def test_a_pyproject_without_our_table_is_passed_over(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "theirs"\n', encoding="utf-8")
    assert hookconfig.find_config([str(tmp_path)]) is None


def test_the_named_config_wins_over_the_directories(tmp_path):
    (tmp_path / "memory-router.toml").write_text("line_cap = 5\n", encoding="utf-8")
    named = tmp_path / "named.toml"
    named.write_text("line_cap = 9\n", encoding="utf-8")
    assert hookconfig.hook_config(str(named), [str(tmp_path)])["settings"]["line_cap"] == 9
    assert hookconfig.hook_config(None, [str(tmp_path)])["settings"]["line_cap"] == 5


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_config_that_is_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "memory-router.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="named pipe"):
        hookconfig.parse_config(str(fifo))


def test_an_oversized_config_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "memory-router.toml"
    path.write_text("line_cap = 5\n", encoding="utf-8")
    monkeypatch.setattr(hookconfig, "MAX_CONFIG_FILE_BYTES", 4)
    with pytest.raises(ValueError, match="config file .* over the hook's limit of 4"):
        hookconfig.parse_config(str(path))
