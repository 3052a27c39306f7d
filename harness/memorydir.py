"""Read a Claude Code auto-memory directory: MEMORY.md index lines and one file per memory.

Index lines come in two shapes (claude-code-formats.md §4.2 and the spec):
``- [Title](file.md) — one-line hook`` and ``- <slug> — <hook>`` (em dash, en dash or `` - ``).
Memory files carry YAML front matter in two shapes: top-level ``type:`` (Claude Code <= 2.1.120)
or ``metadata: {type: ...}`` (>= 2.1.139); both are accepted, as is ``hot: true`` at the top
level or under ``metadata``.

Which memory is which: the slug is the memory file's name without ``.md`` (the index links to
it by that name), normalised to ``[a-z0-9_]+``. The type comes from the front matter; when there
is none (a flat index read alone, or a file without ``type``) it is inferred from a slug prefix
such as ``feedback_`` (see ``infer_type``), else ``project``. The hook is the index line's hook,
else the file's ``description``, else the index line's title, else the ``name`` field.
"""

import os
import re
from dataclasses import dataclass, field

from router.errors import InputError, read_utf8
from router.store.memorystore import is_index_file, normalise_slug

INDEX_NAME = "MEMORY.md"

_LINK_LINE_RE = re.compile(
    r"^\s*[-*]\s+\[(?P<title>[^\]]*)\]\((?P<file>[^)\s]+)\)\s*(?:(?:[\u2014\u2013:]|\s-)\s*(?P<hook>.*))?$")
_SLUG_LINE_RE = re.compile(r"^\s*[-*]\s+`?(?P<slug>[A-Za-z0-9_.-]+)`?\s+(?:[\u2014\u2013]|-)\s+(?P<hook>.+)$")
_TYPE_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)

# Claude Code's four memory types (claude-code-formats.md §4.2) plus ``env``, which the spec's
# store uses for environment gotchas. A slug that starts with one of these and ``_`` says its type.
KNOWN_TYPES = ("env", "feedback", "project", "reference", "user")
DEFAULT_TYPE = "project"


def infer_type(slug):
    """The type a slug's prefix names (``feedback_x`` -> ``feedback``), else ``project``."""
    head = slug.split("_", 1)[0]
    return head if head in KNOWN_TYPES and "_" in slug else DEFAULT_TYPE


@dataclass(frozen=True)
class IndexEntry:
    slug: str
    hook: str
    line: int
    title: str = ""
    file: str = ""


@dataclass(frozen=True)
class MemoryFile:
    slug: str
    name: str
    description: str
    type: str
    hot: bool
    path: str
    body: str = field(repr=False, default="")


@dataclass(frozen=True)
class Memory:
    """One memory as the builder and the slim render see it."""

    slug: str
    type: str
    hook: str
    hot: bool = False
    source: str = ""


def parse_index_line(line):
    """``(slug, hook, title, file)`` for an index bullet, or ``None`` for any other line."""
    match = _LINK_LINE_RE.match(line)
    if match:
        file = match.group("file")
        stem = os.path.splitext(os.path.basename(file))[0]
        return normalise_slug(stem), (match.group("hook") or "").strip(), match.group("title").strip(), file
    match = _SLUG_LINE_RE.match(line)
    if match:
        return normalise_slug(match.group("slug")), match.group("hook").strip(), "", ""
    return None


def parse_index_text(text):
    entries = []
    for lineno, line in enumerate(text.splitlines(), 1):
        parsed = parse_index_line(line)
        if parsed:
            slug, hook, title, file = parsed
            entries.append(IndexEntry(slug, hook, lineno, title, file))
    return entries


def read_index(path):
    text = read_utf8(path, "index", "pass the MEMORY.md of your memory directory")
    return parse_index_text(text)


def duplicate_index_slugs(entries):
    """``{slug: [line, line, ...]}`` for every slug listed more than once (the first line wins)."""
    lines = {}
    for entry in entries:
        lines.setdefault(entry.slug, []).append(entry.line)
    return {slug: found for slug, found in lines.items() if len(found) > 1}


def memories_from_index(entries, source=INDEX_NAME):
    """Members from index lines alone: the type is inferred from the slug (``infer_type``)."""
    memories = []
    seen = set()
    for entry in entries:
        if entry.slug in seen:
            continue
        seen.add(entry.slug)
        memories.append(Memory(entry.slug, infer_type(entry.slug), entry.hook or entry.title or _words(entry.slug),
                               False, f"{source}:{entry.line}"))
    return memories


def read_flat_index(path):
    """Every memory a flat MEMORY.md lists (``- [Title](file.md) — hook`` or ``- <slug> — <hook>``)."""
    return memories_from_index(read_index(path), os.fspath(path))


def _simple_front_matter(text):
    """A tolerant fallback for front matter that is not valid YAML (e.g. an unquoted colon)."""
    data = {}
    parent = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line[:1] in (" ", "\t")
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        value = value.strip().strip("'\"")
        if indented and parent is not None:
            data.setdefault(parent, {})[key.strip()] = value
        elif value == "":
            parent = key.strip()
            data[parent] = {}
        else:
            parent = None
            data[key.strip()] = value
    return data


def _safe_yaml(raw):
    """``yaml.safe_load(raw)``, refusing (ValueError) what would recurse or expand aliases past
    the suites' bound: a front matter's ``name: *bomb`` would otherwise be printed with str()."""
    import yaml

    from canaries.yamllines import expansion_problem

    loader = yaml.SafeLoader(raw)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = expansion_problem(node)
        if problem is not None:
            raise ValueError(problem.message)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def parse_front_matter(text):
    """``(front_matter_dict, body)``; a file without front matter gives ``({}, text)``."""
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return {}, text
    raw = match.group(1)
    try:
        data = _safe_yaml(raw)
        if not isinstance(data, dict):
            data = _simple_front_matter(raw)
    except Exception:  # not YAML after all: Claude Code writes simple key: value lines
        data = _simple_front_matter(raw)
    return data, text[match.end():]


def _truthy(value):
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "1"))


def _words(slug):
    return slug.replace("_", " ")


def _clean_type(value):
    """A front-matter type as the cluster format allows it (one lowercase word), else ``""``."""
    text = normalise_slug(str(value)) if value else ""
    return text if _TYPE_RE.match(text) else ""


def memory_from_text(path, text):
    meta, body = parse_front_matter(text)
    nested = meta.get("metadata") if isinstance(meta.get("metadata"), dict) else {}
    mtype = meta.get("type") or nested.get("type") or ""
    name = " ".join(str(meta.get("name") or "").split())
    stem = os.path.splitext(os.path.basename(path))[0]
    return MemoryFile(
        slug=normalise_slug(stem),
        name=name,
        description=" ".join(str(meta.get("description") or "").split()),
        type=_clean_type(mtype),
        hot=_truthy(meta.get("hot")) or _truthy(nested.get("hot")),
        path=path,
        body=body,
    )


def memory_file_paths(directory):
    """``[(name, path)]`` of the ``*.md`` memory files in ``directory`` (MEMORY.md and its archives
    excluded), sorted. A folder named like a memory is passed over; so is a FIFO, device or socket
    (reading it would block or fail the whole command), named on stderr: the rest are read."""
    import sys

    from router.safeio import irregular_kind

    try:
        names = sorted(os.listdir(directory))
    except OSError as err:
        raise InputError(f"cannot list memory directory: {err.strerror or err}", path=directory) from None
    found = []
    for name in names:
        if not name.endswith(".md") or is_index_file(name):
            continue
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            continue
        why = irregular_kind(path)
        if why is not None:
            print(f"memory-router: warning: {path}: not a memory file, skipped: {why}", file=sys.stderr)
            continue
        found.append((name, path))
    return found


def read_memory_files(directory):
    """Every ``*.md`` memory file in ``directory`` except MEMORY.md and its archives, by name."""
    files = []
    for name, path in memory_file_paths(directory):
        found = memory_from_text(path, read_utf8(path, "memory file", "pass your Claude Code memory directory"))
        clash = next((f for f in files if f.slug == found.slug), None)
        if clash is not None:
            # foo-bar.md and foo_bar.md normalise to one slug: keeping either silently would drop a memory.
            raise InputError(f"memory files {os.path.basename(clash.path)} and {name} both become slug "
                             f"{found.slug!r}", path=path, fix="rename or merge one of them")
        files.append(found)
    return files


def merge_memories(entries, files, index_path=INDEX_NAME):
    """Index entries joined with memory files by slug: index order first, then unindexed files."""
    by_slug = {}
    for found in files:
        by_slug.setdefault(found.slug, found)
    memories = []
    seen = set()
    for entry in entries:
        if entry.slug in seen:
            continue
        seen.add(entry.slug)
        found = by_slug.get(entry.slug)
        hook = entry.hook or (found.description if found else "") or entry.title or (found.name if found else "")
        memories.append(Memory(
            slug=entry.slug,
            type=(found.type if found and found.type else infer_type(entry.slug)),
            hook=hook or _words(entry.slug),
            hot=bool(found and found.hot),
            source=found.path if found else f"{index_path}:{entry.line}",
        ))
    for slug, found in by_slug.items():
        if slug not in seen:
            hook = found.description or found.name or _words(slug)
            memories.append(Memory(slug, found.type or infer_type(slug), hook, found.hot, found.path))
    return memories


def index_path(directory):
    """The memory index of a memory directory: ``<directory>/MEMORY.md``."""
    return os.path.join(directory, INDEX_NAME)


def require_memory_dir(directory, fix="pass your Claude Code memory directory (the one holding MEMORY.md)"):
    """``directory``, or ``InputError`` (exit 2) when it is missing or not a directory."""
    if not os.path.isdir(directory):
        raise InputError("memory directory does not exist" if not os.path.exists(directory)
                         else "is a file, not a memory directory", path=directory, fix=fix)
    return directory


def read_memory_index(directory):
    """``(path, text or None)`` of the directory's MEMORY.md (``None``: there is none); bytes
    that are not UTF-8 are replaced, since callers only measure and search it."""
    from router.safeio import read_regular_bytes

    path = index_path(directory)
    try:
        data = read_regular_bytes(path)
    except FileNotFoundError:
        return path, None
    except OSError as err:
        raise InputError(f"cannot read MEMORY.md: {err.strerror or err}", path=path) from None
    return path, data.decode("utf-8", errors="replace")


def read_memory_dir(directory):
    """All memories of a Claude Code memory directory, in index order, then unindexed files.

    Slug: the file name's stem (normalised); type: front matter, else inferred from the slug;
    hook: the index line's hook, else the file's description (see the module docstring).
    """
    require_memory_dir(directory)
    path = index_path(directory)
    entries = read_index(path) if os.path.isfile(path) else []
    return merge_memories(entries, read_memory_files(directory), path)


def hot_slugs(directory):
    """Slugs whose memory file says ``hot: true`` (top level or under ``metadata``)."""
    if not directory or not os.path.isdir(directory):
        return []
    return [f.slug for f in read_memory_files(directory) if f.hot]
