"""Output for people (rich tables), for machines (--json) and for review (unified diffs), shared by every command."""

import json
import sys


def print_json(obj, stream=None):
    stream = stream or sys.stdout
    stream.write(json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False, default=_default) + "\n")


def _default(value):
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if hasattr(value, "_asdict"):
        return value._asdict()
    import dataclasses

    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    return str(value)


def console(stderr=False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def table(title, columns, rows):
    """A rich Table with ``columns`` (names) and ``rows`` (sequences of str-able cells)."""
    from rich.table import Table

    result = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        result.add_column(column, overflow="fold")
    for row in rows:
        result.add_row(*[cell if hasattr(cell, "__rich__") else str(cell) for cell in row])
    return result


def unified_diff(before, after, from_name, to_name):
    """A unified diff of two texts as one string (empty when they are equal), for every
    ``--dry-run``. ``before``/``after`` are ``str``, bytes (decoded as UTF-8, bad bytes replaced)
    or ``None`` for a file that does not exist (diffed as empty, named ``/dev/null``); a last line
    without its newline is marked as diff(1) marks it, so such a diff still applies as a patch."""
    import difflib

    if before is None:
        from_name = "/dev/null"
    if after is None:
        to_name = "/dev/null"
    return "".join(difflib.unified_diff(_diff_lines(before), _diff_lines(after), fromfile=from_name, tofile=to_name))


def _diff_lines(text):
    if text is None:
        return []
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
