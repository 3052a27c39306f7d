"""Every command memory-router prints for the user to paste: ``fix:`` lines, "run ..." advice,
install hints. One owner, because a command built by hand with a path in it runs something else
when the path holds a space, ``;``, an apostrophe, ``$(...)`` or a newline (issue 35, item 5).

Each argument is one word, quoted with ``shlex.join`` (POSIX shells; Git Bash on Windows), so
``shlex.split`` of the printed text gives back exactly the arguments it was built from. A command
substitution (``"$(memory-router transcript locate ...)"``) is a ``Substitution`` word: its own
words are quoted the same way, inside double quotes.

``tests/harness/test_printedcommands.py`` walks the code (AST) and fails when a command is built
anywhere else; ``recording()`` lets a test collect what the tool built while it ran, and run it.
The hook commands written into settings files are not printed for pasting: they are
harness.install.hookcommand's.
"""

import contextlib
import os
import shlex

PROGRAM = "memory-router"

# The lists recording() hands out; every command built while one is open is appended to it.
_RECORDERS = []


class Substitution:
    """A ``"$(...)"`` word: the output of another command, itself built here."""

    def __init__(self, *words):
        self.words = tuple(_word(w) for w in words)

    def __str__(self):
        return '"$(' + shlex.join(self.words) + ')"'


def _word(word):
    if isinstance(word, Substitution):
        return word
    if isinstance(word, os.PathLike):
        word = os.fspath(word)
    if not isinstance(word, str):
        raise TypeError(f"a command word must be a str or a path, not {type(word).__name__}")
    return word


def _render(words):
    parts, plain = [], []
    for word in words:
        if isinstance(word, Substitution):
            if plain:
                parts.append(shlex.join(plain))
                plain = []
            parts.append(str(word))
        else:
            plain.append(word)
    if plain:
        parts.append(shlex.join(plain))
    return " ".join(parts)


def command(*words):
    """The text of the command ``words`` (the program first), each word quoted for the shell."""
    words = [_word(w) for w in words]
    if not words:
        raise ValueError("a command needs a program")
    for recorder in _RECORDERS:
        recorder.append(tuple(words))
    return _render(words)


def memory_router(*args):
    """``memory-router ARGS...``, quoted."""
    return command(PROGRAM, *args)


def word(text):
    """One argument quoted for the shell, for prose that names a value to paste (``install
    'memory-router[mcp] @ git+...' where ...``): not a command, so not recorded."""
    return shlex.quote(_word(text))


def substitution(*words):
    """A ``"$(WORDS...)"`` word for ``command``."""
    return Substitution(*words)


def option(name, value):
    """``[name, value]`` when ``value`` is set, else ``[]``: for optional ``--flag VALUE`` pairs."""
    return [name, value] if value not in (None, "") else []


@contextlib.contextmanager
def recording():
    """Collects the argv (a tuple of words; a substitution as its object) of every command built
    while it is open: what tests run to prove a printed command does what it says."""
    built = []
    _RECORDERS.append(built)
    try:
        yield built
    finally:
        _RECORDERS.remove(built)
