"""The texts one stream has had injected so far, found again by content in later lines (the
re-send half of check (b)): each distinct text by its digest, with a probe index that keeps the
search linear in the text searched, and the router member lines the current context holds (check
(f), the router repeating itself)."""

import hashlib
from collections import OrderedDict

from transcripts.auditmodel import KEY_CHARS, MIN_RESEND_CHARS, PROBE_CHARS

# Joins a line's texts into one haystack; a match can only span two texts through it, and it is
# only used while no injected text (nor the sentinel) holds it.
SEPARATOR = "\x00"
# An injection can only be "for the same prompt" as an earlier one while that prompt is live.
PROMPTS_PER_TEXT = 16


def text_digest(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class InjectedText:
    """What is remembered of one distinct injected text: where it first and last entered, and for
    the prompts it entered at most recently, the first line it entered at for each. A constant
    amount per distinct text, however often it is injected again."""

    __slots__ = ("first_line", "last_line", "by_prompt", "router")

    def __init__(self, line, router=False):
        self.first_line = line
        self.last_line = line
        self.router = router             # a router injection's text (its header parsed)
        self.by_prompt = OrderedDict()   # prompt index -> first line, the last few prompts only

    def note(self, index, line):
        self.last_line = line
        if index is not None and index not in self.by_prompt:
            self.by_prompt[index] = line
            if len(self.by_prompt) > PROMPTS_PER_TEXT:
                self.by_prompt.popitem(last=False)


class InjectedTexts(dict):
    """sha256 of each distinct injected text -> its :class:`InjectedText`; memory grows with the
    distinct texts only, never with how often they are injected or with the lines searched."""

    def __init__(self, separator_safe=True):
        super().__init__()
        self.separator_safe = separator_safe
        self.probes = {}                 # first chars -> ({first KEY_CHARS: [(length, sha256)]}, [short texts])
        # Router member lines injected since the last compaction -> the line that injected each (a
        # compaction drops earlier injections from the requests; until then they ride along).
        # Keyed by the line itself: a member line is short, and bounded by the store's distinct lines.
        self.context_lines = {}

    def remember(self, body, digest, line, index, router=False):
        """Record ``body`` (``digest``) injected at ``line`` for prompt ``index`` (None: no prompt);
        ``router``: the text has the router's header."""
        record = self.get(digest)
        if record is None:
            record = self[digest] = InjectedText(line, router)
            if len(body) >= MIN_RESEND_CHARS:
                self._index(body, digest)
        record.note(index, line)

    def _index(self, body, digest):
        # Two levels, so the cost stays linear in the text searched, not in the number of injections:
        # one find() per distinct short probe (router injections share one), then a dict lookup of
        # the text at each hit against the injected texts' longer prefixes.
        if SEPARATOR in body:
            self.separator_safe = False
        by_key, short = self.probes.setdefault(body[:PROBE_CHARS], ({}, []))
        if len(body) >= KEY_CHARS:
            group = by_key.setdefault(body[:KEY_CHARS], [])
            if (len(body), digest) not in group:
                group.append((len(body), digest))
        elif body not in short:
            short.append(body)

    def find(self, haystacks, own_digest):
        """The digests of earlier injected texts that occur in ``haystacks``, or None."""
        found = None
        for probe in self.probes:
            for text in haystacks:
                pos = text.find(probe)
                if pos == -1:
                    continue   # nearly every line: nothing to unpack
                by_key, short = self.probes[probe]
                while pos != -1:
                    # The injection's own text is not a re-send of itself: skip it before hashing.
                    for length, digest in by_key.get(text[pos:pos + KEY_CHARS], ()):
                        if digest != own_digest and text_digest(text[pos:pos + length]) == digest:
                            found = found if found is not None else {}
                            found[digest] = None
                    for body in short:
                        if text.startswith(body, pos):
                            digest = text_digest(body)
                            if digest != own_digest:
                                found = found if found is not None else {}
                                found[digest] = None
                    pos = text.find(probe, pos + 1)
        return found

    def members_again(self, member_lines, line):
        """(slug, first line) of each router member line in ``member_lines`` (injected at ``line``)
        that this context already holds; the others are recorded as held from ``line`` on."""
        held = self.context_lines
        again = []
        for member in member_lines:
            if not member.startswith("- "):
                continue
            first = held.get(member)
            if first is not None and first != line:
                again.append((member[2:].split(" \u2014 ", 1)[0], first))
            else:
                held[member] = line
        return again

    def compacted(self):
        self.context_lines = {}
