"""Writing a settings.json the way its owner formatted it: the file's JSON style (indent, key
spacing, trailing newline), a full render in that style, and minimal edits that change only the
bytes that change (falling back to the full render)."""

import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class JsonStyle:
    """How a settings file was laid out, so a rewrite changes as little as possible."""

    indent: object = 2          # int spaces, "\t", or None for a one-line file
    newline: str = "\n"
    trailing_newline: bool = True
    bom: bool = False
    ascii_only: bool = False


def detect_style(data):
    """The layout of ``data`` (bytes of a JSON file); Claude Code's own 2-space style if empty."""
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data[3:].decode("utf-8", errors="replace") if bom else data.decode("utf-8", errors="replace")
    if not text.strip():
        return JsonStyle(bom=bom)
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.strip()
    indent = None
    if "\n" in body:
        indent = 2
        for line in body.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped[0] not in "}]":
                lead = line[: len(line) - len(stripped)]
                if lead.startswith("\t"):
                    indent = "\t"
                elif lead:
                    indent = len(lead)
                break
    ascii_only = not re.search(r"[^\x00-\x7f]", text) and "\\u" in text
    return JsonStyle(indent=indent, newline=newline, trailing_newline=text.endswith(("\n", "\r")),
                     bom=bom, ascii_only=ascii_only)


def render_settings(settings, style=JsonStyle()):
    """``settings`` as bytes in ``style``."""
    if style.indent is None:
        text = json.dumps(settings, ensure_ascii=style.ascii_only)
    else:
        text = json.dumps(settings, indent=style.indent, ensure_ascii=style.ascii_only)
    if style.trailing_newline:
        text += "\n"
    if style.newline != "\n":
        text = text.replace("\n", style.newline)
    data = text.encode("utf-8")
    return b"\xef\xbb\xbf" + data if style.bom else data


def same_data(a, b):
    """Equal as JSON, key order included (``{"a":1,"b":2}`` differs from ``{"b":2,"a":1}``)."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


class _Node:
    __slots__ = ("kind", "start", "end", "children")

    def __init__(self, kind, start):
        self.kind = kind          # "object", "array" or "scalar"
        self.start = start
        self.end = start
        self.children = []        # (key or None, start of the member or item, value node)


_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _parse_spans(text):
    """Where every value of a (valid) JSON text starts and ends: what lets an edit touch only the
    characters that change, keeping the user's own layout everywhere else."""
    from json.decoder import scanstring

    def value(i):
        i = _WS.match(text, i).end()
        char = text[i]
        if char in "{[":
            node = _Node("object" if char == "{" else "array", i)
            close = "}" if char == "{" else "]"
            i = _WS.match(text, i + 1).end()
            if text[i] == close:
                node.end = i + 1
                return node
            while True:
                i = _WS.match(text, i).end()
                key, member_start = None, i
                if node.kind == "object":
                    key, i = scanstring(text, i + 1)
                    i = _WS.match(text, i).end() + 1  # past ':'
                child = value(i)
                node.children.append((key, member_start if key is not None else child.start, child))
                i = _WS.match(text, child.end).end()
                if text[i] == ",":
                    i += 1
                    continue
                node.end = i + 1
                return node
        node = _Node("scalar", i)
        if char == '"':
            node.end = scanstring(text, i + 1)[1]
        else:
            node.end = _SCALAR.match(text, i).end()
        return node

    return value(0)


def _line_indent(text, pos):
    """The leading whitespace of the line holding ``pos``."""
    line_start = text.rfind("\n", 0, pos) + 1
    end = _WS.match(text, line_start).end()
    return text[line_start:min(end, pos)].replace("\r", "").replace("\n", "")


def _starts_line(text, pos):
    line_start = text.rfind("\n", 0, pos) + 1
    return not text[line_start:pos].strip()


def _dump(value, style, prefix, multiline):
    if multiline and style.indent is not None:
        out = json.dumps(value, indent=style.indent, ensure_ascii=style.ascii_only)
        return out.replace("\n", style.newline + prefix)
    return json.dumps(value, ensure_ascii=style.ascii_only)


def _unit(style):
    return "\t" if style.indent == "\t" else " " * (style.indent or 0)


def _element_text(key, value, style, prefix, multiline):
    body = _dump(value, style, prefix, multiline)
    return body if key is None else json.dumps(key, ensure_ascii=style.ascii_only) + ": " + body


def _match_items(keyed, old_items, new_items):
    """``(kept pairs (old i, new j), added items, deleted old indices)``, or ``None`` when the
    change is not a pure append, delete or in-place change (reordered keys, say)."""
    if not keyed and len(old_items) == len(new_items):
        return [(i, i) for i in range(len(old_items))], [], []
    kept, j = [], 0
    for i, (key, value) in enumerate(old_items):
        if j < len(new_items) and (key == new_items[j][0] if keyed else same_data(value, new_items[j][1])):
            kept.append((i, j))
            j += 1
        elif keyed and any(key == k for k, _v in new_items[j:]):
            return None
    added = new_items[j:]
    if keyed and any(any(k == key for key, _v in old_items) for k, _v in added):
        return None
    survivors = {i for i, _j in kept}
    return kept, added, [i for i in range(len(old_items)) if i not in survivors]


def _container_edits(text, node, old_items, new_items, style, edits):
    """Edits turning ``node`` (holding ``old_items``) into one holding ``new_items``, both lists of
    ``(key, value)``; False when the change is not one this can express minimally."""
    if len(node.children) != len(old_items):
        return False  # duplicate keys: json.loads kept the last, the text holds both
    matched = _match_items(node.kind == "object", old_items, new_items)
    if matched is None:
        return False
    kept, added, deleted = matched
    if deleted and added:
        return False
    for i, j in kept:
        if not same_data(old_items[i][1], new_items[j][1]):
            if not _value_edits(text, node.children[i][2], old_items[i][1], new_items[j][1], style, edits):
                return False
    children = node.children
    if deleted:
        if len(deleted) == len(children):
            edits.append((node.start + 1, node.end - 1, ""))
            return True
        runs = []
        for i in deleted:
            if runs and i == runs[-1][-1] + 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        for run in runs:
            a, b = run[0], run[-1]
            if a > 0:  # from the end of the survivor before, so its comma goes too
                edits.append((children[a - 1][2].end, children[b][2].end, ""))
            else:      # up to the start of the survivor after
                edits.append((children[a][1], children[b + 1][1], ""))
        return True
    if added:
        newline = style.newline
        if children:
            last_start = children[-1][1]
            at = children[-1][2].end
            if style.indent is not None and _starts_line(text, last_start):
                prefix = _line_indent(text, last_start)
                parts = ["," + newline + prefix + _element_text(k, v, style, prefix, True) for k, v in added]
            else:
                parts = [", " + _element_text(k, v, style, "", False) for k, v in added]
            edits.append((at, at, "".join(parts)))
        else:
            if style.indent is None:
                inner = ", ".join(_element_text(k, v, style, "", False) for k, v in added)
            else:
                outer = _line_indent(text, node.start)
                prefix = outer + _unit(style)
                inner = ("," + newline + prefix).join(_element_text(k, v, style, prefix, True) for k, v in added)
                inner = newline + prefix + inner + newline + outer
            edits.append((node.start + 1, node.end - 1, inner))
    return True


def _value_edits(text, node, old, new, style, edits):
    if isinstance(old, dict) and isinstance(new, dict) and node.kind == "object":
        return _container_edits(text, node, list(old.items()), list(new.items()), style, edits)
    if isinstance(old, list) and isinstance(new, list) and node.kind == "array":
        return _container_edits(text, node, [(None, v) for v in old], [(None, v) for v in new], style, edits)
    multiline = "\n" in text[node.start:node.end] or (
        isinstance(new, (dict, list)) and style.indent is not None and _starts_line(text, node.start))
    edits.append((node.start, node.end, _dump(new, style, _line_indent(text, node.start), multiline)))
    return True


def render_change(original, old, new, style=None):
    """``new`` as bytes, written as a minimal edit of ``original`` (the bytes ``old`` was parsed
    from): every line that does not change keeps its exact bytes, so a hand-formatted
    settings.json stays as its owner wrote it. Falls back to ``render_settings`` whenever the edit
    does not parse back to exactly ``new``."""
    style = style or detect_style(original)
    bom = original.startswith(b"\xef\xbb\xbf")
    try:
        text = (original[3:] if bom else original).decode("utf-8")
        if not text.strip():
            raise ValueError("empty")
        edits = []
        if not _value_edits(text, _parse_spans(text), old, new, style, edits):
            raise ValueError("not a simple change")
        for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
            text = text[:start] + replacement + text[end:]
        if not same_data(json.loads(text), new):
            raise ValueError("the edit did not reproduce the new settings")
    except (ValueError, IndexError, UnicodeDecodeError):
        return render_settings(new, style)
    data = text.encode("utf-8")
    return b"\xef\xbb\xbf" + data if bom else data
