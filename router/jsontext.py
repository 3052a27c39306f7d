"""Strict JSON for the files a user hands us: where a text nests too deep for the parser, where it
holds the non-standard ``NaN``/``Infinity`` that Python accepts and JSON does not, and a parse that
turns either (and any syntax error) into one ``InputError`` naming ``file:line:column``.

Python's ``json`` parser recurses once per nesting level and raises ``RecursionError`` (not
``ValueError``) past the interpreter's limit, so ``[`` repeated 100,000 times escapes every
``except ValueError``. Standard library only: transcripts and harness both use it.
"""

import json
import re

from router.errors import InputError

# Far above any real settings file or transcript line (Claude Code's own nest a handful deep),
# well below the ~1,000 frames Python's parser can take.
MAX_JSON_DEPTH = 400

_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_STRING_OR_CONSTANT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?Infinity|NaN)', re.S)


def line_column(text, index):
    """1-based ``(line, column)`` of ``index`` in ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def too_deep_at(text, limit=MAX_JSON_DEPTH):
    """The index of the bracket that opens nesting level ``limit + 1`` (strings skipped), or None."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None


def nonstandard_constant_at(text):
    """``(index, word)`` of the first ``NaN``/``Infinity``/``-Infinity`` outside strings, or None."""
    for match in _STRING_OR_CONSTANT.finditer(text):
        if match.group(1):
            return match.start(1), match.group(1)
    return None


class _Constant(ValueError):
    pass


def _refuse_constant(word):
    raise _Constant(word)


def loads_strict(text, path, what, fix, error=InputError, limit=MAX_JSON_DEPTH):
    """``json.loads(text)``, except that a syntax error, nesting deeper than ``limit`` and a
    ``NaN``/``Infinity`` are each one ``error`` naming ``path:line:column``, ``what`` and ``fix``."""
    deep = too_deep_at(text, limit)
    if deep is not None:
        line, column = line_column(text, deep)
        raise error(f"{what} is nested more than {limit} levels deep", path=path, line=line, column=column,
                    fix=fix)
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except _Constant:
        index, word = nonstandard_constant_at(text) or (0, "NaN")
        line, column = line_column(text, index)
        raise error(f"{what} holds {word}, which is not valid JSON", path=path, line=line, column=column,
                    fix=fix) from None
    except json.JSONDecodeError as err:
        raise error(f"invalid JSON: {err.msg}", path=path, line=err.lineno, column=err.colno, fix=fix) from None
    except RecursionError:  # a limit above what this interpreter's stack allows
        raise error(f"{what} is nested too deep to parse", path=path, fix=fix) from None
