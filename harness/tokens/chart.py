"""The modelled session as a chart in the terminal: input tokens sent so far after each prompt,
flat against slim, drawn in text so it needs nothing beyond what ``tokens report`` already has
(rich colours it; ``--plot FILE`` draws the same series with matplotlib, ``harness.tokens.plot``).

Pure: ``grid`` places the series in rows of cells and ``axis_labels`` the ticks under them;
``harness.tokens.cli`` turns them into rich Text."""

import math

# One marker per series, ASCII so that any terminal and any log shows them one cell wide.
MARKERS = ("o", "*", "x", "+")
OVERLAP = "#"


def grid(series, width, height):
    """``height`` rows of ``width`` cells, top row first; each cell ``None`` or the index of the
    series drawn there (``-1`` where two meet). ``series`` is a list of equally long lists of
    running totals; column ``c`` shows prompt ``1 + c * (n - 1) / (width - 1)`` (rounded), row 0
    the largest value of all. Between two columns a series is drawn down the rows it crosses,
    so a steep curve stays one line."""
    if width < 2 or height < 2:
        raise ValueError("a chart needs at least 2 x 2 cells")
    top = max((max(values) for values in series if values), default=0) or 1
    cells = [[None] * width for _ in range(height)]
    for index, values in enumerate(series):
        if not values:
            continue
        previous = None
        for column in range(width):
            row = height - 1 - round((height - 1) * values[prompt_at(column, width, len(values)) - 1] / top)
            rows = [row]
            if previous is not None and abs(row - previous) > 1:
                step = 1 if row > previous else -1
                rows = range(previous + step, row + step, step)
            for r in rows:
                cells[r][column] = index if cells[r][column] in (None, index) else -1
            previous = row
    return cells, top


def prompt_at(column, width, prompts):
    """The prompt (1-based) that chart column ``column`` of ``width`` shows."""
    if prompts <= 1:
        return 1
    return 1 + round(column * (prompts - 1) / (width - 1))


def column_of(prompt, width, prompts):
    """The chart column that shows ``prompt`` (the inverse of ``prompt_at``, rounded)."""
    if prompts <= 1:
        return 0
    return round((prompt - 1) * (width - 1) / (prompts - 1))


def axis_labels(marks, width, prompts):
    """One line of ``width`` cells with each ``(prompt, label)`` of ``marks`` written from its
    column, earlier marks first; a label that would overlap the one before it is left out (the
    first and the last mark are always tried)."""
    line = [" "] * width
    taken_until = -1
    for prompt, label in marks:
        start = min(column_of(prompt, width, prompts), max(0, width - len(label)))
        if start <= taken_until:
            continue
        for offset, char in enumerate(label[:width - start]):
            line[start + offset] = char
        taken_until = start + len(label)
    return "".join(line).rstrip()


def short_number(value):
    """``1234`` -> ``1.2k``, ``93920`` -> ``94k``, ``2500000`` -> ``2.5M``: a tick label."""
    for limit, suffix in ((1_000_000, "M"), (1_000, "k")):
        if value >= limit:
            scaled = value / limit
            return f"{scaled:.1f}{suffix}" if scaled < 10 else f"{round(scaled)}{suffix}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def chart_horizon(turns, break_evens, cap):
    """How many prompts the chart spans: the modelled session (``turns``), or past the latest
    break-even (by a quarter) so that the crossing shows, but never more than ``cap``."""
    latest = max((b for b in break_evens if b), default=0)
    return max(turns, min(cap, math.ceil(latest * 1.25)))
