"""The one entry point: every command module registers, --help shows the defaults, bad commands exit 2."""

from harness.cli import COMMAND_MODULES, build_parser, main


def test_every_command_module_exists():
    import importlib

    for name in COMMAND_MODULES:
        assert hasattr(importlib.import_module(name), "register"), name
    build_parser()


def test_help_shows_every_default(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for text in ("score_floor = 3", "tag_weight = 3", "member_weight = 1", "line_cap = 12", "exit codes"):
        assert text in out


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2


# --------------------------------------------------------------------------- inputs that are FIFOs

import os  # noqa: E402

import pytest  # noqa: E402

from router.config import bundled_cluster_file  # noqa: E402

EXAMPLE_INDEX = os.path.join(os.path.dirname(bundled_cluster_file()), "MEMORY.md")


def _memory_dir_with_fifo_index(tmp):
    os.makedirs(tmp / "mem")
    os.mkfifo(tmp / "mem" / "MEMORY.md")
    return tmp / "mem"


def _memory_dir_with_fifo_archive(tmp):
    os.makedirs(tmp / "mem")
    (tmp / "mem" / "MEMORY.md").write_bytes(open(EXAMPLE_INDEX, "rb").read())
    os.mkfifo(tmp / "mem" / "MEMORY.archive-2026-01-01T00-00-00-000Z.md")
    return tmp / "mem"


def _project_with_fifo_settings(tmp):
    os.makedirs(tmp / "proj" / ".claude")
    os.mkfifo(tmp / "proj" / ".claude" / "settings.json")
    return tmp / "proj"


def _fifo(tmp, name="input.fifo"):
    os.mkfifo(tmp / name)
    return tmp / name


# Each: the command line for a tmp dir (creating the FIFO), and the FIFO's name as the error shows it.
FIFO_INPUTS = {
    "route --clusters": lambda tmp: (["route", "--clusters", _fifo(tmp), "setx bash"], "input.fifo"),
    "route --config": lambda tmp: (["route", "--config", _fifo(tmp), "setx bash"], "input.fifo"),
    "clusters check": lambda tmp: (["clusters", "check", _fifo(tmp)], "input.fifo"),
    "clusters convert": lambda tmp: (["clusters", "convert", "--to", "tsv", _fifo(tmp)], "input.fifo"),
    "clusters build --index": lambda tmp: (["clusters", "build", "--index", _fifo(tmp), "--out", tmp / "o.md"],
                                           "input.fifo"),
    "clusters build --memory-dir": lambda tmp: (
        ["clusters", "build", "--memory-dir", _memory_dir_with_fifo_index(tmp), "--out", tmp / "o.md"], "MEMORY.md"),
    "clusters build --labels": lambda tmp: (
        ["clusters", "build", "--index", EXAMPLE_INDEX, "--labels", _fifo(tmp), "--out", tmp / "o.md"], "input.fifo"),
    "canary run": lambda tmp: (["canary", "run", _fifo(tmp, "suite.yaml")], "suite.yaml"),
    "transcript audit": lambda tmp: (["transcript", "audit", _fifo(tmp, "s.jsonl")], "s.jsonl"),
    "transcript census": lambda tmp: (["transcript", "census", _fifo(tmp, "s.jsonl")], "s.jsonl"),
    "slim render": lambda tmp: (["slim", "render", "--memory-dir", _memory_dir_with_fifo_index(tmp), "--clusters",
                                 bundled_cluster_file()], "MEMORY.md"),
    "slim rollback (newest archive)": lambda tmp: (
        ["slim", "rollback", "--memory-dir", _memory_dir_with_fifo_archive(tmp)], "MEMORY.archive-"),
    "slim rollback --archive": lambda tmp: (
        ["slim", "rollback", "--memory-dir", _memory_dir_with_fifo_archive(tmp), "--archive",
         tmp / "mem" / "MEMORY.archive-2026-01-01T00-00-00-000Z.md"], "MEMORY.archive-"),
    "slim rollback (MEMORY.md)": lambda tmp: (
        ["slim", "rollback", "--memory-dir", _memory_dir_with_fifo_index(tmp), "--archive", EXAMPLE_INDEX],
        "MEMORY.md"),
    "tokens report --flat": lambda tmp: (["tokens", "report", "--flat", _fifo(tmp), "--slim", EXAMPLE_INDEX,
                                          "--tokenizer", "estimate"], "input.fifo"),
    "tokens report --slim": lambda tmp: (["tokens", "report", "--flat", EXAMPLE_INDEX, "--slim", _fifo(tmp),
                                          "--tokenizer", "estimate"], "input.fifo"),
    "install": lambda tmp: (["install", "--project", _project_with_fifo_settings(tmp)], "settings.json"),
    "uninstall": lambda tmp: (["uninstall", "--project", _project_with_fifo_settings(tmp)], "settings.json"),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("case", sorted(FIFO_INPUTS))
def test_an_input_that_is_a_fifo_is_one_line_error_not_a_hang(run_cli, tmp_path, case):
    """Issue 11, class 3: every command blocked for ever on a FIFO named as its input."""
    args, name = FIFO_INPUTS[case](tmp_path)
    result = run_cli(*args, cwd=tmp_path, timeout=30)
    errors = [line for line in result.stderr.decode().splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(errors) == 1 and errors[0].startswith("memory-router: error: "), errors
    assert name in errors[0] and "named pipe (FIFO)" in errors[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_doctor_reports_a_fifo_settings_file_instead_of_hanging(run_cli, tmp_path):
    result = run_cli("doctor", "--project", _project_with_fifo_settings(tmp_path), "--json", cwd=tmp_path,
                     timeout=60)
    assert result.returncode == 1
    assert "named pipe (FIFO)" in result.stdout.decode()
