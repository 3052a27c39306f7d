"""A streaming reader of Claude Code session transcripts (JSONL), one entry at a time.

The file is read in binary, line by line, and never held whole in memory. Every line becomes an
:class:`Entry` carrying its 1-based line number as evidence, or a :class:`Diagnostic` when it
cannot be used: a blank line (counted, silent), a line that is not a JSON object (a bad line), a
line that is not valid UTF-8 (decoded with U+FFFD replacement and still used, with a warning), or
a last line without its newline that does not parse (a truncated tail: a session still being
written, or cut off; a warning, never fatal). Unknown ``type`` values are counted and yielded as
``kind == "unknown"``, never rejected, so a format change after a Claude Code upgrade is noticed
instead of breaking the audit.

Each line is classified by ``transcripts.entries.make_entry`` (its docstring lists the kinds);
the kinds and records are importable from here too.
"""

import json

from router.errors import InputError
from router.safeio import open_regular
from transcripts.entries import (  # noqa: F401 - the kinds and records, importable with the reader
    ASSISTANT,
    ATTACHMENT,
    COMPACT_SUMMARY,
    INJECTION,
    INJECTION_ATTACHMENT_TYPES,
    INTERRUPT,
    KNOWN_ATTACHMENT_TYPES,
    KNOWN_TYPES,
    LEGACY_HOOK_TAG,
    LOCAL_COMMAND,
    MAX_STORED_DIAGNOSTICS,
    META,
    METADATA,
    METADATA_TYPES,
    PERSISTED_MARKERS,
    PROGRESS,
    PROMPT,
    SYSTEM,
    TASK_NOTIFICATION,
    TOOL_RESULT,
    UNKNOWN,
    UPS,
    USER_KINDS,
    Diagnostic,
    Entry,
    ToolUse,
    make_entry,
)


class TranscriptReader:
    """Iterate a transcript file's entries; diagnostics accumulate on the reader as it goes.

    ``InputError`` (exit 2) is raised when the file cannot be opened, or when it has lines but
    none of them is a JSON object (it is not a transcript at all).
    """

    def __init__(self, path):
        self.path = str(path)
        self.lines = 0
        self.entries = 0
        self.blank_lines = 0
        self.bad_lines = 0
        self.invalid_utf8_lines = 0
        self.truncated_last_line = None
        self.diagnostics = []
        self.dropped_diagnostics = 0

    def _note(self, line, kind, message):
        if len(self.diagnostics) < MAX_STORED_DIAGNOSTICS:
            self.diagnostics.append(Diagnostic(line, kind, message))
        else:
            self.dropped_diagnostics += 1

    def __iter__(self):
        try:
            handle = open_regular(self.path, "rb")
        except IsADirectoryError:
            raise InputError("is a directory, not a transcript file", path=self.path,
                             fix="pass a .jsonl file, or the directory to the audit/census commands")
        except FileNotFoundError:
            raise InputError("no such transcript file", path=self.path,
                             fix="check the path; `memory-router transcript locate` finds the newest one")
        except OSError as err:
            raise InputError(f"cannot open: {err.strerror or err}", path=self.path)
        loads = json.loads
        line = 0
        with handle:
            try:
                for raw in handle:
                    line += 1
                    if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
                        raw = raw[3:]
                    first = raw[:1]
                    if first in (b"\n", b"\r", b" ", b"\t", b"") and not raw.strip():
                        self.blank_lines += 1
                        continue
                    try:
                        obj = loads(raw)
                    except UnicodeDecodeError:
                        try:
                            obj = loads(raw.decode("utf-8", errors="replace"))
                        except ValueError as err:
                            # Unusable either way: one bad line, or a tail cut inside a character.
                            self._bad(line, raw, err)
                            continue
                        self.invalid_utf8_lines += 1
                        self._note(line, "invalid_utf8", "not valid UTF-8; decoded with replacement characters")
                    except ValueError as err:
                        self._bad(line, raw, err)
                        continue
                    if not isinstance(obj, dict):
                        self.bad_lines += 1
                        self._note(line, "not_an_object", f"a JSON {type(obj).__name__}, not an object; skipped")
                        continue
                    self.entries += 1
                    yield make_entry(obj, line)
            except OSError as err:
                raise InputError(f"read failed after line {line}: {err.strerror or err}", path=self.path)
            finally:
                # Also when a consumer stops early (first_turn): lines read so far.
                self.lines = line
        if self.entries == 0 and self.bad_lines > 0:
            raise InputError("no line is a JSON object: not a Claude Code transcript", path=self.path,
                             line=self.diagnostics[0].line if self.diagnostics else None)

    def _bad(self, line, raw, err):
        if not raw.endswith(b"\n"):
            self.truncated_last_line = line
            self._note(line, "truncated_last_line",
                       f"last line is cut off ({len(raw)} bytes, no newline, not valid JSON); ignored")
            return
        self.bad_lines += 1
        column = getattr(err, "colno", None)
        where = f" at column {column}" if column else ""
        self._note(line, "bad_line", f"not valid JSON{where}: {getattr(err, 'msg', err)}; skipped")

    def summary(self):
        return {
            "lines": self.lines, "entries": self.entries, "blank_lines": self.blank_lines,
            "bad_lines": self.bad_lines, "invalid_utf8_lines": self.invalid_utf8_lines,
            "truncated_last_line": self.truncated_last_line,
            # Warnings past the first MAX_STORED_DIAGNOSTICS are counted, not kept: say how many.
            "unlisted_warnings": self.dropped_diagnostics,
        }


def read_session(path):
    """The entries of one transcript file, streamed: ``for entry in read_session(path)``.

    The returned :class:`TranscriptReader` also carries the diagnostics once iterated.
    """
    return TranscriptReader(path)


def version_tuple(version):
    """``"2.1.293"`` -> ``(2, 1, 293)``; junk -> ``None``."""
    if not isinstance(version, str):
        return None
    parts = []
    for piece in version.split(".")[:3]:
        digits = ""
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            return None
        parts.append(int(digits))
    return tuple(parts) if parts else None
