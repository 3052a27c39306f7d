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


def table(title, columns, rows, no_wrap=()):
    """A rich table with ``columns`` (names) and ``rows`` (sequences of str-able cells or rich
    Text), sized when printed so that no word breaks: no header, id or slug is ever cut in two
    while every column's longest word fits the console (``fit_widths``). Columns named in
    ``no_wrap`` keep each line of a cell whole (ids, numbers)."""
    from rich.table import Table

    result = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        result.add_column(column, overflow="fold", no_wrap=column in no_wrap)
    cells = []
    for row in rows:
        row = [cell if hasattr(cell, "__rich__") or hasattr(cell, "plain") else str(cell) for cell in row]
        cells.append(row)
        result.add_row(*row)
    return FittedTable(result, [_plain(c) for c in columns], [[_plain(c) for c in row] for row in cells])


def _plain(cell):
    return cell.plain if hasattr(cell, "plain") else str(cell)


class FittedTable:
    """A rich Table whose column widths are chosen at print time, for the console's width.

    rich shrinks the widest columns first when a table is too wide, and so folds ids and headers
    mid-word although a layout keeping every word whole exists (an 80-column pipe cut
    ``layer1_project_memory_router`` in two). Here each column gets at least its longest word
    (its longest line when it does not wrap), and the room left goes to the columns in
    proportion to what they still lack; only when even the longest words cannot all fit is rich
    left to fold."""

    def __init__(self, table, headers, rows):
        self.table = table
        self.headers = headers
        self.rows = rows

    @property
    def columns(self):
        return self.table.columns

    @property
    def title(self):
        return self.table.title

    def __rich_console__(self, console, options):
        widths = fit_widths(self._ranges(), options.max_width - self._overhead())
        for column, width in zip(self.table.columns, widths or ()):
            column.width = width
        yield self.table

    def _overhead(self):
        table = self.table
        left, right = table.padding[3], table.padding[1]
        count = len(table.columns)
        borders = (count + 1 if table.show_edge else count - 1) if table.box else 0
        return borders + count * (left + right)

    def _ranges(self):
        """``[(min, max)]`` per column: the header whole or the longest word of a cell, whichever
        is wider (the longest line, for a no-wrap column), and the longest line."""
        from rich.cells import cell_len

        ranges = []
        for index, column in enumerate(self.table.columns):
            texts = [row[index] for row in self.rows if index < len(row)]
            lines = [self.headers[index]] + [line for text in texts for line in text.splitlines() or [""]]
            longest = max((cell_len(line) for line in lines), default=1)
            if column.no_wrap:
                ranges.append((longest, longest))
            else:
                word = max((cell_len(w) for line in lines[1:] for w in line.split()), default=1)
                header = max((cell_len(line) for line in self.headers[index].splitlines()), default=0)
                ranges.append((max(word, header, 1), longest))
        return ranges


def fit_widths(ranges, available):
    """Content widths for columns of ``ranges`` (``(min, max)`` each) within ``available`` cells,
    or ``None`` to let rich decide: when everything fits as it is, or when not even the minimums
    do. Pure, so the rule is tested apart from rich."""
    minimum = sum(low for low, _high in ranges)
    maximum = sum(high for _low, high in ranges)
    if maximum <= available or minimum > available:
        return None
    room = available - minimum
    wanted = [high - low for low, high in ranges]
    total = sum(wanted)
    widths = [low + room * want // total for (low, _high), want in zip(ranges, wanted)]
    # Integer shares leave a few cells over: give them to the columns still short, widest want first.
    spare = available - sum(widths)
    for index in sorted(range(len(ranges)), key=lambda i: -(ranges[i][1] - widths[i])):
        if spare <= 0:
            break
        if widths[index] < ranges[index][1]:
            widths[index] += 1
            spare -= 1
    return widths


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
