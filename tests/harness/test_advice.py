"""Advice that does what it says (issue 36, item 3): a first week's commands are run in a temporary
project, every command they advise is collected (what ``harness.printedcommands`` built while they
ran, a line that is one command, a command after "fix:", "run", "with:", "or", "then", a --json
fix that starts with one) and each one that can run here is run in that project: it must parse,
and run to an exit code without a traceback.

Skipped, by rule: commands with a placeholder (``DIR``, ``FILE``, ``SLUG``: the user fills them
in), with a ``"$(...)"`` word (a shell feature; its parts are collected on their own), those that
need a model login or the network (``NEEDS_LOGIN``), and the programs other than memory-router."""

import os
import pathlib
import re
import shlex
import shutil

import pytest

from harness import printedcommands
from harness.cli import build_parser, main
from harness.install import hookcommand
from router.store.memorystore import default_memory_dir
from support.git_repo import git_project  # noqa: F401 - a fixture

REPO = pathlib.Path(__file__).resolve().parents[2]
HELDOUT2_MEMORY = REPO / "benchmarks" / "heldout2" / "memory"
EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])

# A first week, in order; each step may print advice.
FIRST_WEEK = [
    ["doctor", "--json"],                      # --json: each fix whole (a table wraps them)
    ["slim", "render"],                        # before install: refused, with the way on
    ["init", "--yes"],
    ["doctor", "--json"],
    ["route", "what did we decide about this project?"],
    ["canary", "run", "-k", "setx"],           # the bundled example's: says so, names replay --suite
    ["install", "--mcp"],
    ["replay", "{history}", "--suite", "{project}/canaries/history.yaml"],  # no evidence: says so
    ["slim", "render"],
    ["checklist"],
    ["tokens", "report"],
    ["uninstall"],
    ["uninstall", "--all"],
]
# a line that is one command (init's next steps), not a heading ("memory-router doctor: 2 of 5 ...")
ON_ITS_OWN = re.compile(r"^\s*(memory-router (?![a-z -]*:)[^#\n]+?)\s*(?:#.*)?$", re.M)
# in prose: "fix: memory-router init (or ...)", "run memory-router doctor", "with: memory-router ..."
_COMMAND = (r"(memory-router(?: [a-z][a-z-]*(?![^\s;,()`'\"]))+"
            r"(?: --?[a-z][a-z-]*(?: (?!or\b|then\b|to\b|first\b)[^\s;,()`'\"]+)?)*)")
IN_PROSE = re.compile(r"(?:fix: |\brun:? |with:? |\bor |\bthen )" + _COMMAND)
# a string of a --json report that starts with its command (a fix: "memory-router init (or ...)")
AT_START = re.compile(r"^" + _COMMAND, re.M)
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z_]+|<[^>]+>|\.\.\.)$|[A-Z]{3,}")


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out + err


def _advised(text, built):
    """The memory-router commands advised in ``text`` and ``built``, as argv lists."""
    import json

    patterns = (ON_ITS_OWN, IN_PROSE)
    try:
        text = "\n".join(_strings(json.loads(text)))
        patterns = (AT_START, IN_PROSE)
    except ValueError:
        pass
    found = []
    for argv in built:
        if argv and argv[0] == printedcommands.PROGRAM:
            found.append(list(argv))
    for pattern in patterns:
        for match in pattern.finditer(text):
            try:
                found.append(shlex.split(match.group(1), comments=True))
            except ValueError:
                continue  # a fragment cut by the pattern; the builder's copy is in ``built``
    return found


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# Advice that must do what it says where it is given (exit 0): init's dry run of slim render, and a
# doctor (tokens report before a real render exits 2 by design, with its own hint: issue 36 leaves
# that hint for later).
MUST_SUCCEED = {("slim", "render", "--dry-run"), ("doctor",)}
# Need a model login or the network, so not run here: an engine (claude, anthropic) and the
# plugin's bootstrap (pip from the index or a git URL).
NEEDS_LOGIN = (("--engine", "claude"), ("--engine", "anthropic"), ("plugin", "bootstrap"))


def _runnable(argv):
    words = [str(word) for word in argv]
    if any(pair == tuple(words[i:i + 2]) for pair in NEEDS_LOGIN for i in range(len(words) - 1)):
        return False
    if any(isinstance(word, printedcommands.Substitution) or "$(" in word for word in argv):
        return False
    return not any(PLACEHOLDER.search(word) for word in argv[1:] if not word.startswith("-") or "=" not in word)


@pytest.fixture
def first_week_project(git_project, monkeypatch, tmp_path):
    shutil.copytree(HELDOUT2_MEMORY, default_memory_dir(str(git_project)))
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    monkeypatch.chdir(git_project)
    history = tmp_path / "history"
    history.mkdir()
    from support.replay_sessions import write_session

    write_session(history, "q", [("can you explain what a closure is in JavaScript?", [])])
    return git_project, history


def test_every_command_the_first_week_advises_runs_in_the_project(capsys, first_week_project):
    # Each piece of advice is followed where it was given, as a user would: run right after the step
    # that printed it, in the project as that step left it.
    project, history = first_week_project
    parser = build_parser()
    advised, seen, failures, ran = [], set(), [], []
    for step in FIRST_WEEK:
        argv = [word.format(project=project, history=history) for word in step]
        with printedcommands.recording() as built:
            _code, text = _run(capsys, argv)
        for command in _advised(text, built):
            key = tuple(map(str, command))
            if key in seen:
                continue
            seen.add(key)
            advised.append((" ".join(step), [str(word) for word in command]))
            if not _runnable(command):
                continue
            try:
                parser.parse_args(command[1:])
            except SystemExit:
                failures.append(f"after `memory-router {' '.join(step)}`: {shlex.join(command)} does not parse")
                capsys.readouterr()
                continue
            code, output = _run(capsys, command[1:])
            ran.append((" ".join(step), shlex.join(command), code))
            if not isinstance(code, int) or "Traceback" in output:
                failures.append(f"after `memory-router {' '.join(step)}`: {shlex.join(command)} crashed: "
                                f"{output[-300:]}")
            elif code != 0 and any(key[1:1 + len(words)] == words for words in MUST_SUCCEED):
                failures.append(f"after `memory-router {' '.join(step)}`: {shlex.join(command)} exited {code}: "
                                f"{output[-300:]}")
    assert len(ran) >= 8, advised  # the week advises at least this much; a broken collector finds none
    assert not failures, "\n".join(failures)
    print("\n".join(f"{step}: exit {code}: {command}" for step, command, code in ran))


def test_the_collector_finds_a_broken_piece_of_advice(capsys):
    # the check above can fail: advice naming an option that does not exist is caught
    text = "fix: run memory-router doctor --no-such-option"
    [command] = _advised(text, [])
    with pytest.raises(SystemExit):
        build_parser().parse_args(command[1:])
    capsys.readouterr()
    assert _runnable(["memory-router", "slim", "render", "--hot", "SLUG"]) is False
    assert _runnable(["memory-router", "doctor", "--project", "/tmp/a b"]) is True
    assert _runnable(["memory-router", "clusters", "build", "--engine", "claude"]) is False
