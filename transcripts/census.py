"""A census of transcript files: what entry types, attachment types, system subtypes, progress
types and hook events they hold, which Claude Code versions wrote them, and what could not be
read. Run it after a Claude Code upgrade: a new or renamed type shows up here before it quietly
breaks the audit.

``strict_failures`` names what ``--strict`` fails on: unknown entry types, unknown attachment
types whose name starts with ``hook_`` (the ones the audit depends on; the attachment list is
open-ended, so other new attachment types are only reported), bad lines and invalid UTF-8. A
truncated last line is a warning, not a failure: it is what a live session looks like.
"""

from collections import Counter
from dataclasses import dataclass, field

from transcripts.entries import KNOWN_ATTACHMENT_TYPES, KNOWN_TYPES
from transcripts.reader import version_tuple


@dataclass(frozen=True)
class FileCensus:
    path: str
    lines: int
    entries: int
    blank_lines: int
    bad_lines: int
    invalid_utf8_lines: int
    truncated_last_line: int | None
    entry_types: dict
    attachment_types: dict
    system_subtypes: dict
    progress_types: dict
    hook_events: dict             # "attachment:<hookEvent>" / "progress:<hookEvent>" -> count
    unknown_types: dict
    unknown_attachment_types: dict
    versions: dict
    kinds: dict                   # reader classification -> count
    sidechain_entries: int
    diagnostics: tuple = ()


@dataclass(frozen=True)
class Census:
    files: tuple                  # FileCensus, in the order read
    unreadable: tuple = ()        # (path, message)
    totals: dict = field(default_factory=dict)

    def count(self, name):
        return self.totals.get(name, {})


_COUNTERS = ("entry_types", "attachment_types", "system_subtypes", "progress_types", "hook_events",
             "unknown_types", "unknown_attachment_types", "versions", "kinds")
_SCALARS = ("lines", "entries", "blank_lines", "bad_lines", "invalid_utf8_lines", "sidechain_entries")


def census_entries(entries, path=None):
    """Count one file's entries (any iterable of reader Entries; a TranscriptReader adds its line counts)."""
    counts = {name: Counter() for name in _COUNTERS}
    sidechain = 0
    for entry in entries:
        counts["entry_types"][entry.type] += 1
        counts["kinds"][entry.kind] += 1
        if entry.is_sidechain:
            sidechain += 1
        if entry.version:
            counts["versions"][entry.version] += 1
        if entry.type not in KNOWN_TYPES:
            counts["unknown_types"][entry.type] += 1
        elif entry.type == "attachment":
            subtype = entry.subtype or "<missing>"
            counts["attachment_types"][subtype] += 1
            if subtype not in KNOWN_ATTACHMENT_TYPES:
                counts["unknown_attachment_types"][subtype] += 1
            if entry.hook_event:
                counts["hook_events"][f"attachment:{entry.hook_event}"] += 1
        elif entry.type == "system":
            counts["system_subtypes"][entry.subtype or "<none>"] += 1
        elif entry.type == "progress":
            counts["progress_types"][entry.subtype or "<none>"] += 1
            if entry.hook_event:
                counts["hook_events"][f"progress:{entry.hook_event}"] += 1
    read = entries.summary() if hasattr(entries, "summary") else {}
    total = sum(counts["entry_types"].values())
    return FileCensus(
        path=str(path if path is not None else getattr(entries, "path", "")),
        lines=read.get("lines", total), entries=read.get("entries", total),
        blank_lines=read.get("blank_lines", 0), bad_lines=read.get("bad_lines", 0),
        invalid_utf8_lines=read.get("invalid_utf8_lines", 0), truncated_last_line=read.get("truncated_last_line"),
        sidechain_entries=sidechain, diagnostics=tuple(getattr(entries, "diagnostics", ())),
        **{name: dict(counts[name].most_common()) for name in _COUNTERS},
    )


def combine(files, unreadable=()):
    """A Census over several FileCensus results."""
    totals = {name: Counter() for name in _COUNTERS}
    scalars = Counter()
    truncated = 0
    for item in files:
        for name in _COUNTERS:
            totals[name].update(getattr(item, name))
        for name in _SCALARS:
            scalars[name] += getattr(item, name)
        truncated += item.truncated_last_line is not None
    result = {name: dict(totals[name].most_common()) for name in _COUNTERS}
    result["versions"] = dict(sorted(result["versions"].items(), key=lambda kv: version_tuple(kv[0]) or (0,)))
    result.update({name: scalars[name] for name in _SCALARS})
    result["files"] = len(files)
    result["truncated_last_lines"] = truncated
    result["unreadable_files"] = len(unreadable)
    return Census(tuple(files), tuple(unreadable), result)


def strict_failures(census):
    """Reasons ``--strict`` fails (empty when it passes)."""
    reasons = []
    totals = census.totals
    for name, count in totals.get("unknown_types", {}).items():
        reasons.append(f"unknown entry type {name!r} ({count} line(s))")
    for name, count in totals.get("unknown_attachment_types", {}).items():
        if name.startswith("hook_") or name == "<missing>":
            reasons.append(f"unknown hook attachment type {name!r} ({count} line(s))")
    if totals.get("bad_lines"):
        reasons.append(f"{totals['bad_lines']} bad line(s)")
    if totals.get("invalid_utf8_lines"):
        reasons.append(f"{totals['invalid_utf8_lines']} line(s) of invalid UTF-8")
    return reasons
