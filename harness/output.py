"""Output for people (rich tables), for machines (--json) and for review (unified diffs), shared by every command."""

import json
import re
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


# An escape sequence (CSI ``ESC [ ... final``, OSC/DCS/APC/PM ``ESC ] ... BEL or ESC \``, and the
# two-character ones), the 8-bit CSI, then any other C0/C1 control, DEL, and the bidi controls
# (embeddings, overrides, isolates, marks) that reorder what a terminal shows.
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
                              r"|[\x1b\x9d\x90\x9e\x9f\x98][\]PX^_].*?(?:\x07|\x1b\\|\x9c)"
                              r"|\x1b[\]PX^_][^\x07\x1b]*|\x1b[@-Z\\-_ -/]?", re.S)
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_text(value):
    """``value`` (a string, or dicts and lists of them) as a terminal may show it: escape
    sequences removed whole, other control and bidi characters removed, tabs and line breaks
    made spaces. For text from the user's files (prompts, file names) on its way to a terminal;
    ``--json`` keeps the exact text (JSON escapes it)."""
    if isinstance(value, str):
        text = _ESCAPE_SEQUENCE.sub("", value)
        return _UNSHOWN.sub(lambda m: " " if m.group() in "\t\n\r\x0b\x0c" else "", text)
    if isinstance(value, dict):
        return {key: terminal_text(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [terminal_text(item) for item in value]
    return value


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
    return FittedTable(result, [_plain(c) for c in columns], [[_plain(c) for c in row] for row in cells], cells)


def _plain(cell):
    return cell.plain if hasattr(cell, "plain") else str(cell)


class FittedTable:
    """A rich Table whose column widths are chosen at print time, for the console's width.

    rich shrinks the widest columns first when a table is too wide, and so folds ids and headers
    mid-word although a layout keeping every word whole exists (an 80-column pipe cut
    ``layer1_project_memory_router`` in two). Here each column gets at least its longest word
    (its longest line when it does not wrap), and the room left goes to the columns in
    proportion to what they still lack.

    When even the longest words cannot all fit (a path in doctor's detail beside two other
    columns: rich cut ``memory-layer1-clu`` / ``sters.md``), a path may break after a ``/``: the
    cells are wrapped here (``wrap_offsets``) and rich is given lines that already fit. When not
    even that fits, each row is printed as a block, one ``column  value`` line per column, so a
    value has the whole width; only a piece wider than the whole console is ever cut."""

    def __init__(self, table, headers, rows, cells=None):
        self.table = table
        self.headers = headers
        self.rows = rows
        self.cells = cells

    @property
    def columns(self):
        return self.table.columns

    @property
    def title(self):
        return self.table.title

    def __rich_console__(self, console, options):
        from rich.text import Text

        # The title above the table, wrapped by words at the console's width: as rich's own title
        # it wraps at the table's width, a word or two a line over a narrow table
        title = self.table.title
        if title:
            yield Text(str(title))
        self.table.title = None
        try:
            yield from self._render(console, options)
        finally:
            self.table.title = title

    def _render(self, console, options):
        available = options.max_width - self._overhead()
        ranges = self._ranges()
        if sum(low for low, _high in ranges) <= available or self.cells is None:
            widths = fit_widths(ranges, available)
            for column, width in zip(self.table.columns, widths or ()):
                column.width = width
            yield self.table
            return
        ranges = self._ranges(paths=True)
        widths = fit_widths(ranges, available)
        if widths is None and sum(high for _low, high in ranges) > available:
            yield from self._blocks(console, options.max_width)
            return
        yield self._rewrapped(console, widths or [high for _low, high in ranges])

    def _rewrapped(self, console, widths):
        """The table again, every cell wrapped here to its column's width (paths after a ``/``)."""
        from rich.table import Table

        source = self.table
        result = Table(title=source.title, title_justify=source.title_justify, show_lines=source.show_lines)
        for column, width in zip(source.columns, widths):
            result.add_column(column.header, width=width, no_wrap=True, overflow="ignore")
        for row in self.cells:
            result.add_row(*(wrap_cell(console, cell, width) for cell, width in zip(row, widths)))
        return result

    def _blocks(self, console, width):
        """Each row as a block of ``column  value`` lines, for a console too narrow for the table."""
        from rich.table import Table

        names = [header or "-" for header in self.headers]
        name_width = max(len(name) for name in names)
        value_width = max(1, width - name_width - 2)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(width=value_width, no_wrap=True, overflow="ignore")
        for number, row in enumerate(self.cells):
            if number:
                grid.add_row("", "")
            for name, cell in zip(names, row):
                grid.add_row(name, wrap_cell(console, cell, value_width))
        yield grid

    def _overhead(self):
        table = self.table
        left, right = table.padding[3], table.padding[1]
        count = len(table.columns)
        borders = (count + 1 if table.show_edge else count - 1) if table.box else 0
        return borders + count * (left + right)

    def _ranges(self, paths=False):
        """``[(min, max)]`` per column: the header whole or the longest word of a cell, whichever
        is wider (the longest line, for a no-wrap column), and the longest line. ``paths``: a
        word's longest piece between ``/`` counts, not the word."""
        from rich.cells import cell_len

        ranges = []
        for index, column in enumerate(self.table.columns):
            texts = [row[index] for row in self.rows if index < len(row)]
            lines = [self.headers[index]] + [line for text in texts for line in text.splitlines() or [""]]
            longest = max((cell_len(line) for line in lines), default=1)
            if column.no_wrap:
                ranges.append((longest, longest))
            else:
                pieces = (p for line in lines[1:] for w in line.split() for p in (_PIECE_RE.findall(w) if paths else [w]))
                word = max((cell_len(p) for p in pieces), default=1)
                header = max((cell_len(line) for line in self.headers[index].splitlines()), default=0)
                ranges.append((max(word, header, 1), longest))
        return ranges


# A path's pieces, each with the slashes that end it: where a path too long for its column may break.
_PIECE_RE = re.compile(r"[^/]*/+|[^/]+")


def wrap_offsets(text, width):
    """Where each line after the first starts when ``text`` is wrapped to ``width`` cells: at the
    spaces between words; a word wider than ``width`` after one of its ``/``; a piece wider than
    ``width`` (nothing else left) at ``width``. A newline in ``text`` always starts a line."""
    from rich.cells import cell_len

    offsets, base = [], 0
    for number, line in enumerate(text.split("\n")):
        if number:
            offsets.append(base)
        used, end = 0, 0
        for match in re.finditer(r"\S+", line):
            start, word = match.start(), match.group()
            if used and used + cell_len(line[end:start]) + cell_len(word) <= width:
                used += cell_len(line[end:start]) + cell_len(word)
                end = match.end()
                continue
            if used:
                offsets.append(base + start)
                used = 0
            pieces = _PIECE_RE.finditer(word) if cell_len(word) > width else [match]
            for piece in pieces:
                at = base + start + piece.start() if piece is not match else base + start
                size = cell_len(piece.group())
                if used and used + size <= width:
                    used += size
                    continue
                if used:
                    offsets.append(at)
                while size > width:           # nothing else left: a piece wider than the column
                    at += width
                    offsets.append(at)
                    size -= width
                used = size
            end = match.end()
        base += len(line) + 1
    return offsets


def wrap_cell(console, cell, width):
    """``cell`` (a str as rich reads it, or a Text) as a Text wrapped by ``wrap_offsets``, styles kept."""
    from rich.text import Text

    text = console.render_str(cell) if isinstance(cell, str) else cell.copy() if isinstance(cell, Text) else cell
    if not isinstance(text, Text):
        return text
    offsets = [o for o in wrap_offsets(text.plain, width) if 0 < o < len(text.plain)]
    lines = list(text.divide(offsets))
    for line in lines:
        line.rstrip()                   # the spaces (or the newline) where the line was broken
    return Text("\n").join(lines)


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
