"""The shell commands our hooks run, written and recognised: quoting for the user's shell, the
router and sentinel hook commands with their trailing mark, and whether some command (however
written) runs ``memory-router hook``, ``gate`` or ``mcp``. See ``harness.install.settings`` for why
the mark is a comment."""

import os
import re
import shlex
import shutil
import sys

from router.providerbudget import INSTALLED_HOOK_TIMEOUT_S

ROUTER_MARK = "# memory-router install"
SENTINEL_MARK = "# memory-router sentinel install"
HOOK_TIMEOUT_SECONDS = INSTALLED_HOOK_TIMEOUT_S  # one definition, in router.providerbudget

# \Z, not $: a program named "memory-router" plus a newline is not ours.
_ROUTER_EXE_RE = re.compile(r"(^|[\\/])memory-router(\.exe)?\Z", re.I)


def quote_for_shell(word, windows=None):
    """One shell word. Claude Code runs hooks through bash (Git Bash on Windows), where a
    single-quoted word is literal; Windows paths get forward slashes, which Git Bash accepts."""
    windows = (os.name == "nt") if windows is None else windows
    if windows:
        word = word.replace("\\", "/")
    return shlex.quote(word)


def router_executable():
    """The argv that runs memory-router from anywhere, without an activated venv.

    The console script beside this interpreter (a venv's bin/ or Scripts\\), else the script this
    process was started as, else one on PATH, else this interpreter with ``-P -m harness`` (``-P``:
    a project's own ``harness/`` directory must not shadow ours). ``sys.executable`` is kept as
    is, never resolved: a venv's python is a symlink whose target has no access to the venv."""
    names = ("memory-router.exe", "memory-router") if os.name == "nt" else ("memory-router",)
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    for name in names:
        candidate = os.path.join(bindir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return [candidate]
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and os.path.basename(argv0).lower().startswith("memory-router") and os.path.isfile(argv0):
        return [os.path.abspath(argv0)]
    found = shutil.which("memory-router")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-P", "-m", "harness"]


def router_hook_command(exe_argv, clusters=None, config=None, mark=ROUTER_MARK, windows=None, as_written=(),
                        option_word=None):
    """The command string for the router hook: ``exe_argv`` (e.g. ``['/abs/memory-router']`` or
    ``['/abs/python', '-P', '-m', 'harness']``) + ``hook`` + options, then our mark. Option values
    are made absolute, except those named in ``as_written`` (kept from an existing entry), unless
    ``option_word(name, value)`` writes each one's shell word (``harness.install.scopes``: the
    project scope's ``"$CLAUDE_PROJECT_DIR"/path``)."""
    words = [quote_for_shell(w, windows) for w in exe_argv] + ["hook"]
    for name, value in (("clusters", clusters), ("config", config)):
        if value and option_word is not None:
            words += ["--" + name, option_word(name, value)]
        elif value:
            words += ["--" + name, quote_for_shell(value if name in as_written else os.path.abspath(value), windows)]
    return " ".join(words) + " " + mark


def expand_project_dir(value, project_dir):
    """``value`` (a path word of a hook command, as ``command_option`` reads it) with
    ``$CLAUDE_PROJECT_DIR`` / ``${CLAUDE_PROJECT_DIR}`` replaced by ``project_dir``, as Claude Code
    sets it for every hook."""
    if not isinstance(value, str):
        return value
    for ref in ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"):
        value = value.replace(ref, os.path.abspath(project_dir))
    return value


def session_start_command(exe_argv, mark=ROUTER_MARK, windows=None):
    """The SessionStart command that makes the router forget what a session holds after
    compaction or /clear: ``exe_argv`` + ``session-start``, then our mark."""
    return " ".join([quote_for_shell(w, windows) for w in exe_argv] + ["session-start"]) + " " + mark


def sentinel_hook_command(python, flag_path, text, mark=SENTINEL_MARK, windows=None):
    """The one-shot sentinel command: ``python -P -m harness.sentinel --flag F --text T``.

    ``-P`` keeps the project's own directory off ``sys.path``, so a project that has a
    ``harness/`` package of its own cannot shadow ours."""
    words = [quote_for_shell(python, windows), "-P", "-m", "harness.sentinel",
             "--flag", quote_for_shell(os.path.abspath(flag_path), windows),
             "--text", quote_for_shell(text, windows)]
    return " ".join(words) + " " + mark


def handler(command, timeout=HOOK_TIMEOUT_SECONDS):
    return {"type": "command", "command": command, "timeout": timeout}


def has_mark(command, mark):
    return isinstance(command, str) and command.rstrip().endswith(mark)


def command_words(command):
    """The shell words of ``command`` (comments dropped), or ``None`` if it does not split."""
    try:
        return shlex.split(command, comments=True, posix=True)
    except ValueError:
        return None


_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;"})
_PREFIX_WORDS = frozenset({"env", "exec", "nohup", "command", "time"})
_PYTHON_RE = re.compile(r"(^|[\\/])(python[0-9.]*|py)(\.exe)?$", re.I)


def _shell_tokens(command):
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return None


def runs_router_hook(command):
    """True when ``command`` runs ``memory-router hook`` (or ``python -m harness hook``,
    or ``python -m router hook`` as installs before the CLI moved to ``harness`` wrote it) as a
    command, however it was written (``cd x && memory-router hook``, ``env A=1 memory-router
    hook``): what doctor looks for, and what a second install must not duplicate."""
    return runs_subcommand(command, "hook")


def runs_session_start(command):
    """True when ``command`` runs ``memory-router session-start`` (however written, as above)."""
    return runs_subcommand(command, "session-start")


def runs_gate_hook(command):
    """True when ``command`` runs ``memory-router gate`` (however written, as above)."""
    return runs_subcommand(command, "gate")


def runs_subcommand(command, subcommand):
    """True when the shell ``command`` runs ``memory-router SUBCOMMAND`` at one of its command
    positions (after ``&&``, ``;``, ``|``..., past ``env``/``exec`` and ``VAR=value`` words)."""
    return router_program(command, subcommand) is not None


def router_program(command, subcommand):
    """The program word (the console script's path or name, or the Python interpreter) with which
    the shell ``command`` runs ``memory-router SUBCOMMAND``, as written; ``None`` when it does not."""
    if not isinstance(command, str):
        return None
    words = _shell_tokens(command)
    if not words:
        return None
    at_command = True
    for i, word in enumerate(words):
        if word in _OPERATORS:
            at_command = True
            continue
        if not at_command:
            continue
        if word in _PREFIX_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            continue
        at_command = False
        if runs_memory_router(words[i:], subcommand):
            return word
    return None


def runs_memory_router(argv, subcommand):
    """True when the argv ``argv`` (a program and its arguments, as an .mcp.json entry's
    ``command`` + ``args`` or one shell command's words) runs ``memory-router SUBCOMMAND``: the
    console script by any path, or a Python interpreter with ``-m harness`` (``-P`` and other
    flags before ``-m``, as ``router_executable`` writes it when no console script is found), or
    ``-m router`` (the CLI's module before it moved to ``harness``). The one recogniser of our
    commands: the settings installer, the gate's, the .mcp.json installer and doctor all use it."""
    if not argv or not all(isinstance(word, str) for word in argv):
        return False
    program, rest = argv[0], list(argv[1:])
    if _ROUTER_EXE_RE.search(program):
        return rest[:1] == [subcommand]
    if _PYTHON_RE.search(program):
        flags = 0
        while flags < len(rest) and rest[flags].startswith("-") and rest[flags] != "-m":
            flags += 1
        return rest[flags:flags + 1] == ["-m"] and rest[flags + 1:flags + 3] in (["harness", subcommand],
                                                                                  ["router", subcommand])
    return False


def command_option(command, name):
    """The value of ``--name VALUE`` / ``--name=VALUE`` in ``command``, or ``None``."""
    words = command_words(command) or []
    flag = "--" + name
    for i, word in enumerate(words):
        if word == flag and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(flag + "="):
            return word[len(flag) + 1:]
    return None
