"""Reading a session's transcript back from its end, for what the session record cannot know by
itself: whether the context was compacted since the last injection (a ``compact_boundary``
entry), and whether that injection was recorded (a ``hook_additional_context`` attachment; a
client that does not record hook output, 2.1.39 and older per the lab, drops it from the history
on ``--resume``).

Apart from ``router.hooks.session`` because it is the one part that reads Claude Code's transcript
format, and it reads at most ``TRANSCRIPT_SCAN_BYTES`` from the end, so a long session never
makes the hook read it whole. A transcript that shrank, vanished or could not be read in full is
a doubt, never a "no compaction".

Standard library only: this is on the hook's path.
"""

import json
import os

from router.safeio import open_regular_fd

# The transcript is read from its end back to the last recorded injection, at most this far.
TRANSCRIPT_SCAN_BYTES = 4 * 1024 * 1024
_SCAN_CHUNK = 256 * 1024
_COMPACT_MARK = b'"compact_boundary"'
_ATTACHMENT_MARK = b'"hook_additional_context"'


def transcript_size(path):
    """The transcript's size in bytes; 0 when it cannot be stat'ed (a NUL in the payload's path
    raises ValueError, not OSError: it must not cost the prompt its injection)."""
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return 0


def scan_transcript(path, offset, limit=TRANSCRIPT_SCAN_BYTES, boundaries_allowed=0):
    """Read the transcript at ``path`` from its end back to byte ``offset`` (at most ``limit``).

    Returns ``(doubt, size, recorded)``: ``doubt`` is why the session's record cannot be trusted
    (more than ``boundaries_allowed`` ``compact_boundary`` entries since ``offset``; or the file
    shrank, vanished, or grew by more than ``limit``, since a wrong "no compaction" would drop a
    fact), else ``None``; ``size`` how far it was read; ``recorded`` whether a
    ``hook_additional_context`` attachment line was written since ``offset`` (the client records
    hook output, so a ``--resume`` keeps it). A missing file with ``offset`` 0 is no doubt
    (Claude Code may write it after the first hook runs).
    """
    try:
        fd = open_regular_fd(path)
    except FileNotFoundError:
        return (None if offset == 0 else "transcript is gone"), 0, False
    except (OSError, ValueError) as err:
        return f"transcript unreadable: {type(err).__name__}", 0, False
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            return f"transcript shrank from {offset} to {size} bytes", size, False
        if size - offset > limit:
            return f"{size - offset} transcript bytes since the last injection, over the {limit} scanned", size, False
        end = size
        carry = b""
        recorded = False
        boundaries = 0
        while True:
            start = max(offset, end - _SCAN_CHUNK)
            chunk = os.pread(fd, end - start, start) if hasattr(os, "pread") else _seek_read(fd, start, end - start)
            # The first line of a chunk may be cut: it is carried into the next, earlier read and
            # judged whole there; only the last read (at ``offset``) judges its first line.
            block = chunk + carry
            found, attachment = _scan_block(block, first_line=start == offset)
            boundaries += found
            recorded = recorded or attachment
            if boundaries > boundaries_allowed:
                return "compact_boundary in the transcript since the last injection", size, recorded
            if start == offset:
                return None, size, recorded
            cut = block.find(b"\n")
            carry = block[:cut + 1] if cut >= 0 else block
            end = start
    except OSError as err:
        return f"transcript unreadable: {type(err).__name__}", 0, False
    finally:
        os.close(fd)


def _seek_read(fd, start, length):
    os.lseek(fd, start, os.SEEK_SET)
    return os.read(fd, length)


def _scan_block(block, first_line=True):
    """``(boundaries, attachment)``: how many complete JSONL lines in ``block`` are
    ``compact_boundary`` system entries, and whether one is a ``hook_additional_context``
    attachment (a prompt that merely mentions either word is neither). ``first_line=False``
    leaves out the block's first line (it is judged with the read before it)."""
    boundaries = _count_entries(block, _COMPACT_MARK, lambda e: e.get("subtype") == "compact_boundary", first_line)
    attachment = _count_entries(block, _ATTACHMENT_MARK, lambda e: e.get("type") == "attachment" and isinstance(
        e.get("attachment"), dict) and e["attachment"].get("type") == "hook_additional_context", first_line) > 0
    return boundaries, attachment


def _count_entries(block, mark, accept, first_line):
    count = 0
    at = block.find(mark)
    while at >= 0:
        begin = block.rfind(b"\n", 0, at) + 1
        finish = block.find(b"\n", at)
        if finish < 0:
            break
        if begin > 0 or first_line:
            try:
                entry = json.loads(block[begin:finish])
            except ValueError:
                entry = None
            if isinstance(entry, dict) and accept(entry):
                count += 1
        at = block.find(mark, finish)
    return count
