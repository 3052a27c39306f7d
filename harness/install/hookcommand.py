"""The shell commands our hooks run, written and recognised: quoting for the user's shell, the
router and sentinel hook commands with their trailing mark, and whether some command (however
written) runs ``memory-router hook``. See ``harness.install.settings`` for why the mark is a comment."""

import os
import re
import shlex

ROUTER_MARK = "# memory-router install"
SENTINEL_MARK = "# memory-router sentinel install"
HOOK_TIMEOUT_SECONDS = 5

_ROUTER_EXE_RE = re.compile(r"(^|[\\/])memory-router(\.exe)?$", re.I)


def quote_for_shell(word, windows=None):
    """One shell word. Claude Code runs hooks through bash (Git Bash on Windows), where a
    single-quoted word is literal; Windows paths get forward slashes, which Git Bash accepts."""
    windows = (os.name == "nt") if windows is None else windows
    if windows:
        word = word.replace("\\", "/")
    return shlex.quote(word)


def router_hook_command(exe_argv, clusters=None, config=None, mark=ROUTER_MARK, windows=None, as_written=()):
    """The command string for the router hook: ``exe_argv`` (e.g. ``['/abs/memory-router']`` or
    ``['/abs/python', '-P', '-m', 'router']``) + ``hook`` + options, then our mark. Option values
    are made absolute, except those named in ``as_written`` (kept from an existing entry)."""
    words = [quote_for_shell(w, windows) for w in exe_argv] + ["hook"]
    for name, value in (("clusters", clusters), ("config", config)):
        if value:
            words += ["--" + name, quote_for_shell(value if name in as_written else os.path.abspath(value), windows)]
    return " ".join(words) + " " + mark


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
    return _runs_subcommand(command, "hook")


def runs_session_start(command):
    """True when ``command`` runs ``memory-router session-start`` (however written, as above)."""
    return _runs_subcommand(command, "session-start")


def _runs_subcommand(command, subcommand):
    if not isinstance(command, str):
        return False
    words = _shell_tokens(command)
    if not words:
        return False
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
        rest = words[i + 1:]
        if _ROUTER_EXE_RE.search(word) and rest[:1] == [subcommand]:
            return True
        if _PYTHON_RE.search(word):
            flags = 0
            while flags < len(rest) and rest[flags].startswith("-") and rest[flags] != "-m":
                flags += 1
            if rest[flags:flags + 1] == ["-m"] and rest[flags + 1:flags + 3] in (["harness", subcommand],
                                                                                   ["router", subcommand]):
                return True
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
