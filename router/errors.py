"""The one error base class; the CLI turns it into a message and an exit code in one place."""


class MemoryRouterError(Exception):
    """An error a user can act on. ``str(err)`` is the one-line message shown to them.

    ``exit_code`` follows the README's table: 1 for a refused or failed action, 2 for
    invalid input (a file the tool cannot read or parse).
    """

    exit_code = 1

    def __init__(self, message, *, path=None, line=None, column=None, fix=None):
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.fix = fix
        super().__init__(self.format())

    def format(self):
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        text = where + self.message
        if self.fix:
            text += f" (fix: {self.fix})"
        return text


class InputError(MemoryRouterError):
    """A file or argument the tool cannot use: exit 2, never confused with a failed check."""

    exit_code = 2


class ClusterFileError(InputError):
    """A cluster file that breaks cluster-format.md."""


class ConfigError(InputError):
    """A configuration file with an unknown key or a value of the wrong type."""


class RefusedError(MemoryRouterError):
    """A write the tool refused in order not to lose data (exit 1, nothing written)."""

    exit_code = 1


def decode_utf8(data, path, what, error=InputError, fix="save it as UTF-8"):
    """``data`` as text (a leading BOM dropped), or ``error`` naming the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise error(f"{what} is not valid UTF-8", path=path, line=data[: err.start].count(b"\n") + 1,
                    fix=fix) from None


def read_utf8(path, what, fix, error=InputError, missing_ok=False):
    """The text of a UTF-8 file; an unreadable file or a bad byte is one ``error`` naming the file
    (and the line), with ``fix`` for the unreadable case. With ``missing_ok``, a file that does not
    exist is ``None`` (a companion file such as the learned terms or the utterances, not yet written)."""
    from router.safeio import read_regular_bytes

    try:
        data = read_regular_bytes(path)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise error(f"cannot read {what}: no such file", path=path, fix=fix) from None
    except OSError as err:
        raise error(f"cannot read {what}: {err.strerror or err}", path=path, fix=fix) from None
    return decode_utf8(data, path, what, error)
