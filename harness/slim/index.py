"""The slim MEMORY.md (spec §5 Phase 2, §11, §12). Pure: no file, argv or stdout here.

A slim index keeps two things always loaded: a short *hot strip* of confabulation catchers, in
full ``- <slug> — <hook>`` form, and the *layer-0 router*, one line per cluster
``- <cluster_id> (<size>) — <tags, at most 2> — <label>``. Every other memory line reaches the
agent through the UserPromptSubmit hook, which injects the matching cluster's member lines.

``slim_cli`` does the reading, archiving and writing; this module only builds text and numbers.
"""

import re

from canaries.memoryindex import (
    CLAUDE_CODE_CHAR_LIMIT,
    CLAUDE_CODE_LINE_LIMIT,
    HOT_HEADING,
    ROUTER_HEADING,
    claude_code_loaded,
    is_slim_index,
    line_count,
    parse_slim_index,
)
from router.errors import RefusedError

EM_DASH = "\u2014"
INDEX_HEADER = "# Memory Index"
FORMAT_LINE = (
    f"_Format:_ always-loaded lines are `- <slug> {EM_DASH} <hook>`; router lines are "
    f"`- <cluster_id> (<size>) {EM_DASH} <tags> {EM_DASH} <label>`."
)
ROUTER_NOTE = (
    "_The memory-router hook injects the matching cluster's member lines with each prompt; "
    "topic files stay readable on demand._"
)

# Spec §12: the full tag set stays in the cluster file (the hook matches all of it); the router
# line in MEMORY.md is a glance surface, so two tags are enough and keep it under budget.
ROUTER_TAG_CAP = 2

# Spec §11: "Slimmed MEMORY.md <= ~5.5k bytes". Read as 5,500 bytes, the stricter reading.
SLIM_TARGET_BYTES = 5500


class UnknownHotSlugError(RefusedError):
    """A hot-strip slug that no cluster holds: refused (exit 1) before anything is written."""


def render_layer0_router(index, tag_cap=ROUTER_TAG_CAP):
    """One ``- <cluster_id> (<size>) — <tags> — <label>`` line per cluster, in file order.

    The size is the number of member lines (equal to the declared size in a valid file). An
    empty tag list or label is left out rather than written as an empty field.
    """
    lines = []
    for cluster in index.clusters:
        parts = [f"- {cluster.cluster_id} ({len(cluster.members)})"]
        tags = ", ".join(cluster.tags[:tag_cap])
        if tags:
            parts.append(tags)
        if cluster.label:
            parts.append(cluster.label)
        lines.append(f" {EM_DASH} ".join(parts))
    return lines


def build_hot_strip(index, slugs, sources=None):
    """Full ``- <slug> — <hook>`` lines for ``slugs``, in the order given (duplicates dropped).

    Raises ``UnknownHotSlugError`` naming every slug that no cluster in ``index`` holds;
    ``sources`` (slug -> where it was listed) makes the message say where to fix it.
    """
    seen = set()
    lines = []
    unknown = []
    for slug in slugs:
        if slug in seen:
            continue
        seen.add(slug)
        found = index.find_member(slug)
        if found is None:
            unknown.append(slug)
            continue
        lines.append(f"- {slug} {EM_DASH} {found[1].hook}")
    if unknown:
        sources = sources or {}
        named = ", ".join(f"{slug} (from {sources[slug]})" if slug in sources else slug for slug in unknown)
        raise UnknownHotSlugError(
            f"hot-strip slug{'s' if len(unknown) > 1 else ''} not in any cluster: {named}; nothing was written",
            path=getattr(index, "path", None),
            fix="correct the slug, drop it from hot_strip / hot: true, or add the memory to a cluster")
    return lines


def assemble_slim_index(hot_strip, router):
    """The whole slim MEMORY.md text (``\\n`` line ends, one trailing newline)."""
    out = [INDEX_HEADER, "", FORMAT_LINE, "", HOT_HEADING, ""]
    out += list(hot_strip) if hot_strip else ["_(no hot-strip slugs configured)_"]
    out += ["", ROUTER_HEADING, "", ROUTER_NOTE, ""]
    out += list(router)
    return "\n".join(out) + "\n"


def merge_hot_slugs(*sources):
    """Union of slug lists, first list's order first, duplicates dropped.

    Each source is ``(label, slugs)``; returns ``(slugs, {slug: label of its first source})``.
    """
    ordered = []
    origin = {}
    for label, slugs in sources:
        for slug in slugs or ():
            if slug not in origin:
                origin[slug] = label
                ordered.append(slug)
    return ordered, origin


def size_summary(before, after):
    """Bytes and lines before and after, the percentage cut and the warnings for ``after``.

    ``before`` and ``after`` are ``str`` or ``bytes`` (UTF-8). ``cut_percent`` is the share of
    bytes removed, rounded to one decimal (negative when the file grew).
    """
    before_bytes = before if isinstance(before, bytes) else before.encode("utf-8")
    after_bytes = after if isinstance(after, bytes) else after.encode("utf-8")
    before_lines = line_count(before_bytes.decode("utf-8", "replace"))
    after_lines = line_count(after_bytes.decode("utf-8", "replace"))
    cut = round(100.0 * (len(before_bytes) - len(after_bytes)) / len(before_bytes), 1) if before_bytes else 0.0
    return {
        "bytes_before": len(before_bytes),
        "bytes_after": len(after_bytes),
        "lines_before": before_lines,
        "lines_after": after_lines,
        "cut_percent": cut,
        "warnings": size_warnings(len(after_bytes), after_lines,
                                  claude_code_loaded(after_bytes.decode("utf-8", "replace"))[1]),
    }


def loaded_view(text, type_of=None):
    """What Claude Code loads of one MEMORY.md on every API call (its first 200 lines / 25,000
    characters): memory lines (the whole index of a flat file, the hot strip of a slim one) by
    type, cluster router lines, lines and bytes. ``type_of(slug)`` names a memory's type, or
    ``None`` for its slug's prefix (``harness.memorydir.infer_type``)."""
    from harness.memorydir import infer_type, parse_index_text

    type_of = type_of or (lambda _slug: None)
    loaded, truncated = claude_code_loaded(text)
    if is_slim_index(loaded):
        slugs, clusters = parse_slim_index(loaded)
    else:
        slugs, clusters = [entry.slug for entry in parse_index_text(loaded)], []
    by_type = {}
    for slug in slugs:
        kind = type_of(slug) or infer_type(slug)
        by_type[kind] = by_type.get(kind, 0) + 1
    return {"memory_lines": len(slugs), "by_type": dict(sorted(by_type.items())), "cluster_lines": len(clusters),
            "lines": line_count(text), "bytes": len(text.encode("utf-8")), "truncated": truncated}


def empty_hot_strip_warning(slug_count):
    """Rendering with no hot strip sends every memory, preferences and corrections too, out of
    what is always loaded: said, with the fix, rather than done quietly."""
    return (f"the hot strip is empty, so none of the {slug_count} memories stays always loaded: preferences and "
            "corrections reach the agent only when a prompt matches their cluster; name the ones whose plausible "
            "answer is wrong in hot_strip (memory-router.toml), with hot: true in their file, or with --hot SLUG")


def size_warnings(size_bytes, lines, truncated=None):
    """Warnings for an index of ``size_bytes`` and ``lines``; ``truncated`` (from
    ``claude_code_loaded``) says whether Claude Code cuts it, else the limits are read as bytes,
    which over-warns for non-ASCII text and never under-warns."""
    warnings = []
    if size_bytes > SLIM_TARGET_BYTES:
        warnings.append(f"the slim index is {size_bytes} bytes, over the {SLIM_TARGET_BYTES}-byte target "
                        "(spec §11); trim the hot strip")
    if truncated is None:
        truncated = lines > CLAUDE_CODE_LINE_LIMIT or size_bytes > CLAUDE_CODE_CHAR_LIMIT
    if truncated:
        warnings.append(f"the index is {lines} lines / {size_bytes} bytes: Claude Code loads only the first "
                        f"{CLAUDE_CODE_LINE_LIMIT} lines or 25,000 characters (whole lines), the rest is never seen")
    return warnings


def unrouted_slugs(flat_slugs, index, hot_slugs):
    """Slugs listed in the flat index that the slim index would reach neither way: not in the hot
    strip and not a member of any cluster, so after the render no hook or router line names them."""
    hot = set(hot_slugs)
    return [slug for slug in dict.fromkeys(flat_slugs) if slug not in hot and index.find_member(slug) is None]


ARCHIVE_STEM = "MEMORY.archive"
PRE_ROLLBACK_STEM = "MEMORY.pre-rollback"
# \Z, not $: $ also matches before a final newline, and these names select the archive rollback
# restores (and, through harness.archives' own pattern, what prune deletes).
_STAMPED_NAME = r"-(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)(?:-(?P<counter>\d+))?\.md\Z"
_ARCHIVE_NAME_RES = {stem: re.compile("^" + re.escape(stem) + _STAMPED_NAME) for stem in (ARCHIVE_STEM, PRE_ROLLBACK_STEM)}


def archive_sort_key(name, stem=ARCHIVE_STEM):
    """``(stamp, counter)`` for a ``<stem>-<UTC stamp>[-N].md`` name (``MEMORY.archive`` by
    default, or ``MEMORY.pre-rollback``), else ``None``.

    The stamp is fixed-width (harness.archives.archive_stamp), so it sorts as text; ``-N`` is the
    counter write_archive adds when two archives share a millisecond.
    """
    match = _ARCHIVE_NAME_RES[stem].match(name)
    if not match:
        return None
    return match.group("stamp"), int(match.group("counter") or 1)


def newest_archive(names):
    """The newest render archive among file ``names`` (by the stamp in the name), or ``None``.

    Pre-rollback copies are not candidates: rolling back restores what a render replaced.
    """
    keyed = [(archive_sort_key(name), name) for name in names]
    keyed = [(key, name) for key, name in keyed if key is not None]
    return max(keyed)[1] if keyed else None


def index_lines_not_in(current_text, restored_text):
    """``[(line, slug)]`` of the memory index lines of ``current_text`` whose slug ``restored_text``
    does not list: what a rollback leaves only in its pre-rollback copy (say, a memory Claude Code
    added to the slim MEMORY.md after the render). The slim router's cluster lines are not index
    lines and never count."""
    from harness.memorydir import parse_index_text

    kept = {entry.slug for entry in parse_index_text(restored_text)}
    return [(entry.line, entry.slug) for entry in parse_index_text(current_text) if entry.slug not in kept]
