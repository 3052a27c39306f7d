"""A streaming reader of Claude Code session transcripts (JSONL), one entry at a time.

The file is read in binary, line by line, and never held whole in memory. Every line becomes an
:class:`Entry` carrying its 1-based line number as evidence, or a :class:`Diagnostic` when it
cannot be used: a blank line (counted, silent), a line that is not a JSON object (a bad line), a
line that is not valid UTF-8 (decoded with U+FFFD replacement and still used, with a warning), or
a last line without its newline that does not parse (a truncated tail: a session still being
written, or cut off; a warning, never fatal). Unknown ``type`` values are counted and yielded as
``kind == "unknown"``, never rejected, so a format change after a Claude Code upgrade is noticed
instead of breaking the audit.

Each line is classified by ``transcripts.classify.make_entry``; ``transcripts.entries`` lists
the kinds and defines the records.
"""

import json

from router.errors import InputError
from router.safeio import open_regular_fd
from transcripts.classify import make_entry
from transcripts.entries import MAX_STORED_DIAGNOSTICS, Diagnostic


# json.loads on a bytes line spends about a third of its time outside the C scanner (sniffing
# the encoding, two regex matches, two Python frames). A transcript line is UTF-8 and starts
# with "{": scan it directly, and hand anything else to json.loads, which then raises (or
# parses) exactly as it always did.
_SCAN_ONCE = json.decoder.JSONDecoder().scan_once
# Transcript lines average a few kilobytes: a larger buffer than io's 8 KiB halves the read calls
# per line (a fixed amount of memory, whatever the file's size).
_READ_BUFFER = 1 << 16


def _loads_line(text):
    if not text.startswith("{"):
        return json.loads(text)
    try:
        obj, end = _SCAN_ONCE(text, 0)
    except StopIteration:
        return json.loads(text)
    if end != len(text) and text[end:].strip(" \t\n\r"):
        return json.loads(text)
    return obj


class _TooDeep(ValueError):
    """A line nested past what the parser can take, with the column where it goes too deep."""

    def __init__(self, raw):
        from router.jsontext import too_deep_at

        text = raw.decode("utf-8", errors="replace")
        index = too_deep_at(text)
        self.colno = None if index is None else index + 1
        self.msg = "nested too deep to parse"
        super().__init__(self.msg)


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
        if not self.path.strip():
            raise InputError("the transcript path is empty, so there is nothing to read",
                             fix="pass a session .jsonl; from \"$(memory-router transcript locate)\", the "
                                 "message above says why no session was found")
        try:
            handle = open(self.path, "rb", buffering=_READ_BUFFER, opener=open_regular_fd)
        except IsADirectoryError:
            raise InputError("is a directory, not a transcript file", path=self.path,
                             fix="pass a .jsonl file, or the directory to the audit/census commands")
        except FileNotFoundError:
            raise InputError("no such transcript file", path=self.path,
                             fix="check the path; `memory-router transcript locate` finds the newest one")
        except OSError as err:
            raise InputError(f"cannot open: {err.strerror or err}", path=self.path)
        scan_once = _SCAN_ONCE
        line = 0
        with handle:
            try:
                for raw in handle:
                    line += 1
                    # Nearly every line is one JSON object in UTF-8 and ends in a newline: decode and
                    # scan it here (json.loads would sniff the encoding, match whitespace twice and
                    # run two Python frames). Anything else, or anything that raises, takes
                    # _slow_line, which reads the line from scratch as it always was.
                    if raw[0] == 123:  # "{"
                        try:
                            text = raw.decode("utf-8")
                            obj, end = scan_once(text, 0)
                        except (UnicodeDecodeError, StopIteration, ValueError, RecursionError):
                            pass
                        else:
                            if text[end:] == "\n" or not text[end:].strip(" \t\n\r"):
                                self.entries += 1
                                yield make_entry(obj, line)
                                continue
                    obj = self._slow_line(raw, line)
                    if obj is not None:
                        self.entries += 1
                        yield make_entry(obj, line)
            except OSError as err:
                raise InputError(f"read failed after line {line}: {err.strerror or err}", path=self.path)
            finally:
                # Also when a consumer stops early (first_turn): lines read so far.
                self.lines = line
        if self.entries == 0 and self.bad_lines > 0:
            first = self.diagnostics[0] if self.diagnostics else None
            reason = f" (line {first.line}: {first.message})" if first else ""
            raise InputError(f"no line is a usable JSON object: not a Claude Code transcript{reason}", path=self.path,
                             line=first.line if first else None)

    def _slow_line(self, raw, line):
        """The parsed object of a line off the fast path, or None when it is blank (counted) or
        unusable (counted and noted)."""
        if raw[0] != 123:  # not "{": a BOM, a blank line, or junk
            if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if raw[:1] in (b"\n", b"\r", b" ", b"\t", b"") and not raw.strip():
                self.blank_lines += 1
                return None
        try:
            text = raw.decode("utf-8")
            invalid_utf8 = False
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            invalid_utf8 = True
        try:
            obj = _loads_line(text)
        except ValueError as err:
            # Unusable: one bad line, or (not valid UTF-8 either) a tail cut inside a character.
            self._bad(line, raw, err)
            return None
        except RecursionError:
            # Python's parser recurses per nesting level; no Claude Code line nests so.
            self._bad(line, raw, _TooDeep(raw))
            return None
        if invalid_utf8:
            self.invalid_utf8_lines += 1
            self._note(line, "invalid_utf8", "not valid UTF-8; decoded with replacement characters")
        if not isinstance(obj, dict):
            self.bad_lines += 1
            self._note(line, "not_an_object", f"a JSON {type(obj).__name__}, not an object; skipped")
            return None
        return obj

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
