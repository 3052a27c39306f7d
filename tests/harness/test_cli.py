"""The one entry point: every command module registers, --help shows the defaults, bad commands exit 2."""

import os

import pytest

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


@pytest.mark.parametrize("raised,words", [
    (RecursionError("maximum recursion depth exceeded"), "nests too deep"),
    (IsADirectoryError(21, "Is a directory", "/some/MEMORY.md"), "/some/MEMORY.md: Is a directory"),
    (OSError(40, "Too many levels of symbolic links", "/some/loop"), "/some/loop: Too many levels"),
])
def test_an_unexpected_recursion_or_os_error_is_one_line_and_exit_2(monkeypatch, capsys, raised, words):
    import harness.route

    def handler(_args):
        raise raised

    monkeypatch.setattr(harness.route, "cmd_route", handler)
    assert main(["route", "anything"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memory-router: error: ") and words in err and err.count("\n") == 1


def test_a_broken_pipe_is_still_a_quiet_exit_0(monkeypatch, capsys):
    import harness.route

    def handler(_args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(harness.route, "cmd_route", handler)
    assert main(["route", "anything"]) == 0
    assert capsys.readouterr().err == ""


def _memory_md_directory(tmp_path):
    (tmp_path / "mem" / "MEMORY.md").mkdir(parents=True)
    return tmp_path / "mem"


def _memory_md_symlink_loop(tmp_path):
    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / "MEMORY.md").symlink_to(tmp_path / "mem" / "loop")
    (tmp_path / "mem" / "loop").symlink_to(tmp_path / "mem" / "MEMORY.md")
    return tmp_path / "mem"


def _settings(tmp_path, text):
    (tmp_path / "p" / ".claude").mkdir(parents=True)
    (tmp_path / "p" / ".claude" / "settings.json").write_text(text)
    return tmp_path / "p"


DEEP_SETTINGS = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("make,command,named", [
    (_memory_md_directory, ["slim", "render", "--memory-dir", "{}"], "MEMORY.md"),
    (_memory_md_symlink_loop, ["slim", "render", "--memory-dir", "{}"], "MEMORY.md"),
    (lambda t: _settings(t, DEEP_SETTINGS), ["install", "--project", "{}"], "settings.json:1:"),
    (lambda t: _settings(t, DEEP_SETTINGS), ["uninstall", "--project", "{}"], "settings.json:1:"),
    (lambda t: _settings(t, DEEP_SETTINGS), ["sentinel", "install", "--project", "{}"], "settings.json:1:"),
    (lambda t: _settings(t, '{\n  "x": NaN\n}\n'), ["install", "--project", "{}"], "settings.json:2:8"),
    (lambda t: _settings(t, '{"hooks": {"UserPromptSubmit": Infinity}}'), ["install", "--project", "{}"],
     "settings.json:1:32"),
    (lambda t: _settings(t, '{"x": -Infinity}'), ["sentinel", "uninstall", "--project", "{}"], "settings.json:1:7"),
    (lambda t: (t / "outdir").mkdir() or t / "outdir",
     ["clusters", "convert", "{clusters}", "--to", "tsv", "--out", "{}"], "outdir"),
])
def test_issue_11_tracebacks_are_one_line_errors_exit_2(run_cli, tmp_path, example_cluster_file, make, command,
                                                       named):
    target = make(tmp_path)
    argv = [part.format(target, clusters=example_cluster_file) for part in command]
    if argv[:2] == ["slim", "render"]:
        argv += ["--clusters", str(example_cluster_file)]
    result = run_cli(*argv, cwd=tmp_path)
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert "Traceback" not in err and err.startswith("memory-router: error: ") and err.count("\n") == 1, err
    assert named in err


BROKEN_CONFIG_COMMANDS = [
    ["doctor"],                                   # exited 1 (a failed check) before issue 11
    ["tokens", "report", "--flat", "{flat}", "--slim", "{flat}"],  # exited 0: it read no config
    ["install", "--project", "."],
    ["uninstall", "--project", "."],
    ["sentinel", "install", "--project", "."],
    ["transcript", "locate"],
    ["clusters", "check", "{clusters}"],
    ["route", "setx"],
    ["canary", "run"],
    ["checklist"],
    ["slim", "rollback", "--memory-dir", "."],
]


def _takes_config(argv):
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            build_parser().parse_args([*argv, "--config", "x"])
        except SystemExit:
            return False
    return True


BROKEN_CONFIG_CASES = [(where, command) for command in BROKEN_CONFIG_COMMANDS for where in ("cwd", "project", "explicit")
                       if where == "cwd" or (where == "project" and "--project" in command)
                       or (where == "explicit" and _takes_config(command))]


@pytest.mark.parametrize("where,command", BROKEN_CONFIG_CASES, ids=lambda v: v if isinstance(v, str) else " ".join(v[:2]))
def test_a_broken_config_makes_every_command_exit_2_naming_file_and_line(tmp_path, monkeypatch, capsys,
                                                                        example_cluster_file, example_flat_index,
                                                                        command, where):
    project = tmp_path / "project"
    project.mkdir()
    config = project / "memory-router.toml"
    config.write_text("score_floor = 3\nline_cap = \n")
    argv = [part.format(flat=example_flat_index, clusters=example_cluster_file) for part in command]
    if where == "cwd":
        monkeypatch.chdir(project)
    elif where == "project":
        argv[argv.index("--project") + 1] = str(project)
    else:
        argv += ["--config", str(config)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{config}:2:" in err and "invalid TOML" in err


def _walk(parser, path):
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, [*path, name])


def test_every_command_has_a_description_and_every_positional_a_help():
    # Issue 11: clusters, clusters check, tokens, sentinel uninstall had no description, and no
    # positional argument said what it takes.
    import argparse

    missing = []
    for path, parser in _walk(build_parser(), ["memory-router"]):
        if not parser.description:
            missing.append(f"{' '.join(path)}: no description")
        for action in parser._actions:
            if not action.option_strings and not isinstance(action, argparse._SubParsersAction) and not action.help:
                missing.append(f"{' '.join(path)}: positional {action.metavar or action.dest} has no help")
    assert missing == []
    assert len(list(_walk(build_parser(), ["memory-router"]))) > 20  # the walk reached the subcommands
