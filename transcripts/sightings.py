"""Recognising a store's memories in a session's lines: a file path that names one, a slug
written in text (a whole word; a one-word slug only when marked as a name), the member lines of an
injection, the 1.0.x hook block inside a prompt, and what one assistant line shows the agent
meeting (a ``Read`` of a memory file, an MCP ``get_memory`` call, a slug named in its text).

The rules are ``transcripts.evidence``'s (its docstring says what counts as evidence and why);
apart from it because they judge one line or one text, and it judges a whole session.
"""

import re
from typing import NamedTuple

from router.store.memorystore import is_index_file, normalise_slug
from transcripts.entries import LEGACY_HOOK_TAG

READ, CITED, GET_MEMORY = "read", "cited", "get_memory"

_LEGACY_BLOCK = re.compile(re.escape(LEGACY_HOOK_TAG) + r"(.*?)(?:</user-prompt-submit-hook>|\Z)", re.S)
_WORD = re.compile(r"(?<![\w-])[a-z0-9][a-z0-9_]*(?![\w-])")
_MEMBER_LINE = re.compile(r"^\s*[-*]\s+`?([a-z0-9_]+)`?\s+(?:\u2014|\u2013|-{1,2})", re.M)
_MEMORY_PREFIX = re.compile(r"memory:\s*`?$", re.I)


class Sighting(NamedTuple):
    """A memory the agent met in a turn: how (read, cited, get_memory), where (file, line)."""
    slug: str
    how: str
    path: str
    line: int

    def as_dict(self):
        return {"slug": self.slug, "how": self.how, "path": self.path, "line": self.line}


def slug_of_path(path, slugs):
    """The store slug a file path names (``.../env-bash-tool.md`` -> ``env_bash_tool``), or ``None``."""
    if not isinstance(path, str):
        return None
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if not name.lower().endswith(".md") or is_index_file(name):
        return None
    stem = name[:-3]
    if stem in slugs:
        return stem
    slug = normalise_slug(stem)
    return slug if slug in slugs else None


def _marked(text, start, end):
    """A one-word slug written as a name: ``slug.md``, ```slug```, ``memory: slug``."""
    if text.startswith(".md", end):
        return True
    if start > 0 and text[start - 1] == "`" and text.startswith("`", end):
        return True
    return bool(_MEMORY_PREFIX.search(text[max(0, start - 12):start]))


def slugs_in_text(text, slugs):
    """Store slugs named in ``text`` (see the module docstring for the rule), in first-seen order."""
    found = []
    for match in _WORD.finditer(text):
        word = match.group()
        if word in slugs and word not in found and ("_" in word or _marked(text, match.start(), match.end())):
            found.append(word)
    return found


def injected_slugs(text, slugs):
    """Store slugs an injection's text puts in front of the agent: its member lines, and names."""
    found = [slug for slug in _MEMBER_LINE.findall(text) if slug in slugs]
    for slug in slugs_in_text(text, slugs):
        if slug not in found:
            found.append(slug)
    return found


def split_legacy_prompt(text):
    """``(prompt text, injected text)``: 1.0.x put the hook's output inside the prompt's own line."""
    if LEGACY_HOOK_TAG not in text:
        return text, ""
    injected = "\n".join(m.group(1) for m in _LEGACY_BLOCK.finditer(text))
    return _LEGACY_BLOCK.sub(" ", text).strip(), injected


def tool_sightings(tool_uses, slugs, path):
    found = []
    for use in tool_uses:
        tool_input = use.input if isinstance(use.input, dict) else {}
        if use.name == "Read":
            slug = slug_of_path(tool_input.get("file_path"), slugs)
            if slug:
                found.append(Sighting(slug, READ, path, use.line))
        elif use.name == "get_memory" or use.name.endswith("__get_memory"):
            slug = tool_input.get("slug")
            if isinstance(slug, str) and slug in slugs:
                found.append(Sighting(slug, GET_MEMORY, path, use.line))
    return found


def entry_sightings(entry, slugs, path):
    """What one assistant line shows the agent meeting: tool calls, then slugs in its text."""
    found = tool_sightings(entry.tool_uses, slugs, path)
    if entry.text:
        found += [Sighting(slug, CITED, path, entry.line) for slug in slugs_in_text(entry.text, slugs)]
    return found
