"""What an always-loaded MEMORY.md says: whether it is a slim index (spec §5 Phase 2), the hot
strip and router lines it carries, its size against Claude Code's load limit, and where it names
one fact. The reading half of the slim format (``harness.slim`` writes it); here because the
behavioural verdict (``canaries.verdict``) must check the always-loaded surface for leaks.
"""

import re

HOT_HEADING = "## Always-loaded (confabulation catchers)"
ROUTER_HEADING = "## Cluster router (routed on demand)"

# claude-code-formats.md §4.1: only the first 200 lines or 25 KB are loaded. 25 KB is read as
# 25,000 bytes (the smaller of 25,000 and 25,600) so the warning fires before truncation can.
CLAUDE_CODE_LINE_LIMIT = 200
CLAUDE_CODE_BYTE_LIMIT = 25_000


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
    }
