"""Phrase matching for the behavioural verdict: whether a reply says an expected or a forbidden
phrase (case-insensitive, whole words, typographic quotes and line breaks ignored), whether a
forbidden one only follows a negation, and the router's ``- <slug> — <hook>`` line in an
injection.

Apart from ``canaries.verdict`` (which weighs the evidence of a whole session) because this is
the one part that reads free text, and its rules are tested on their own.
"""

import re

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def normalise_prompt(text):
    return " ".join((text or "").translate(_QUOTES).split())


def phrase_pattern(phrase):
    """Case-insensitive, whole-word where the phrase starts or ends with a word character, so
    ``Text`` matches "set it to Text" but not "context" or "plaintext"."""
    body = r"\s+".join(re.escape(word) for word in normalise_prompt(phrase).split())
    head = r"(?<!\w)" if re.match(r"\w", phrase.strip()) else ""
    tail = r"(?!\w)" if re.search(r"\w$", phrase.strip()) else ""
    return re.compile(head + body + tail, re.IGNORECASE)


def find_phrases(phrases, text):
    """The phrases of ``phrases`` found in ``text``."""
    text = text.translate(_QUOTES)
    return [p for p in phrases if phrase_pattern(p).search(text)]


_NEGATOR = re.compile(r"(?:\b(?:not|no|never|without|neither|nor|avoid|instead of|rather than|"
                      r"no need to|stop)\b|n't\b)[^.!?\n]{0,30}$", re.IGNORECASE)


def forbidden_hits(phrases, text):
    """``{phrase: negated}`` for the phrases found in ``text``; ``negated`` is True when every
    occurrence follows a negation in the same sentence ("you don't need to restart the session"),
    which a substring test cannot tell from the confabulation itself."""
    text = text.translate(_QUOTES)
    found = {}
    for phrase in phrases:
        matches = list(phrase_pattern(phrase).finditer(text))
        if matches:
            found[phrase] = all(_NEGATOR.search(text[max(0, m.start() - 60):m.start()]) for m in matches)
    return found


def member_line(text, slug):
    """The ``- <slug> — <hook>`` line of ``slug`` in an injection, as ``(line, hook)``, or ``None``."""
    pattern = re.compile(r"^\s*[-*]\s+`?" + re.escape(slug) + r"`?\s+(?:\u2014|\u2013|-{1,2})\s*(?P<hook>.*)$")
    for line in text.splitlines():
        match = pattern.match(line)
        if match:
            return line.strip(), match.group("hook").strip()
    return None
