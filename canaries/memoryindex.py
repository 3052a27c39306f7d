"""What an always-loaded MEMORY.md says: whether it is a slim index (spec §5 Phase 2), the hot
strip and router lines it carries, its size against Claude Code's load limit, and where it names
one fact. The reading half of the slim format (``harness.slim`` writes it); here because the
behavioural verdict (``canaries.verdict``) must check the always-loaded surface for leaks.
"""

import re

HOT_HEADING = "## Always-loaded (confabulation catchers)"
ROUTER_HEADING = "## Cluster router (routed on demand)"

# What Claude Code loads of MEMORY.md, measured with the real client 2.1.328 (memory-router lab,
# tests/harness/lab/test_realclient.py): whole lines only, at most 200 of them, and no more than
# fit in 25,000 characters counted as JavaScript does (UTF-16 code units), the kept lines joined by
# newlines. The docs' "25KB" is characters, not bytes: a file of accented text loads twice the
# bytes a byte limit would allow.
CLAUDE_CODE_LINE_LIMIT = 200
CLAUDE_CODE_CHAR_LIMIT = 25_000


def utf16_units(text):
    """The length JavaScript gives ``text`` (characters outside the BMP count twice)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def claude_code_loaded(text):
    """``(loaded_text, truncated)``: the whole lines of a MEMORY.md that Claude Code loads."""
    lines = text.splitlines(keepends=True)
    kept = 0
    units = -1                                   # no newline before the first line
    for line in lines[:CLAUDE_CODE_LINE_LIMIT]:
        units += 1 + utf16_units(line[:-1] if line.endswith("\n") else line)
        if units > CLAUDE_CODE_CHAR_LIMIT:
            break
        kept += 1
    return "".join(lines[:kept]), kept < len(lines)


_ROUTER_LINE_RE = re.compile(r"^- (?P<cluster_id>\S+) \((?P<size>\d+)\)(?: \u2014 |$)")
_HOT_LINE_RE = re.compile(r"^- (?P<slug>[a-z0-9_]+) \u2014 ")


def is_slim_index(text):
    """True when ``text`` is already a slim index (it carries the router heading)."""
    return any(line.strip() == ROUTER_HEADING for line in text.splitlines())


def parse_slim_index(text):
    """``(hot_slugs, cluster_ids)`` read back from a slim index, to verify what was written."""
    hot, router = [], []
    section = None
    for line in text.splitlines():
        if line.startswith("## "):
            section = {HOT_HEADING: "hot", ROUTER_HEADING: "router"}.get(line.strip())
            continue
        if section == "hot":
            match = _HOT_LINE_RE.match(line)
            if match:
                hot.append(match.group("slug"))
        elif section == "router":
            match = _ROUTER_LINE_RE.match(line)
            if match:
                router.append(match.group("cluster_id"))
    return hot, router


def line_count(text):
    return len(text.splitlines())


def _mentions(text, needle):
    """1-based line numbers of ``text`` holding ``needle`` (case-insensitive)."""
    if not needle:
        return []
    needle = needle.lower()
    return [i for i, line in enumerate(text.splitlines(), 1) if needle in line.lower()]


def _squash(text):
    return " ".join(text.split()).lower()


def memory_index_facts(text, slug, hook=None):
    """What an always-loaded MEMORY.md says about one fact.

    ``slug_lines``: lines naming the slug anywhere (hot strip, a flat index line, a link
    ``(env_x.md)``); ``hook_lines``: lines carrying the fact's hook text (when known), which
    primes the agent just as well without the slug. Either means passive priming.
    """
    hot, router = parse_slim_index(text)
    hook_lines = []
    if hook and len(_squash(hook)) >= 12:
        squashed = _squash(hook)
        hook_lines = [i for i, line in enumerate(text.splitlines(), 1) if squashed in _squash(line)]
    data = text.encode("utf-8")
    loaded, truncated = claude_code_loaded(text)
    return {
        "slim": is_slim_index(text),
        "has_hot_heading": any(line.strip() == HOT_HEADING for line in text.splitlines()),
        "has_router_heading": any(line.strip() == ROUTER_HEADING for line in text.splitlines()),
        "hot_slugs": hot,
        "router_clusters": router,
        "slug_in_hot_strip": slug in hot,
        "slug_lines": _mentions(text, slug),
        "hook_lines": hook_lines,
        "lines": line_count(text),
        "bytes": len(data),
        "loaded_lines": len(loaded.splitlines()),
        "truncated": truncated,
    }
