"""Output for people (rich) and machines (--json), shared by every report command."""

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
