"""A light English suffix stemmer: inflections of one word meet on one key.

The weighted provider stems a memory's words at build time and a prompt's words at route time
with this same function, so the keys only have to agree with each other, not be English words:
``cache``, ``caches``, ``cached`` and ``caching`` all give ``cach``; ``migrate``,
``migrated``, ``migrating`` and ``migration`` give ``migrat``; ``policy`` and ``policies``
give ``polic``; ``decide`` and ``decision`` give ``decid``. It strips inflections (-s, -es, -ies, -ed, -ing, -ly) and the -ion/-ment
nominalisations, undoubles a final consonant left by -ed/-ing (``running`` -> ``run``) and
drops a final ``e``/``y``. It is far more conservative than Porter or Snowball (no -er, -ity,
-able, -ize), because a wrong merge here turns an unrelated prompt word into a memory match.

Why not PyStemmer: a C extension to install and ~2 ms to import, on a path where Python's
own start-up is ~20 ms and the whole routing budget is a few; this costs ~2 us a word and
nothing to import. Identifiers (anything with ``_`` or a digit) and words of three letters
or fewer are returned unchanged.
"""

_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")


def _has_vowel(text):
    for char in text:
        if char in _VOWELS:
            return True
    return False


def _strip_e_y(word):
    if len(word) > 3 and word[-1] in "ey":
        return word[:-1]
    return word


def stem(word):
    """The stem of one lowercase word (see the module docstring)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    # plurals and third person
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    # past tense, progressive
    for suffix in ("ing", "ied", "ed"):
        if word.endswith(suffix) and not word.endswith("eed"):
            base = word[: -len(suffix)]
            if suffix == "ied":
                base += "y"
            if len(base) >= 3 and _has_vowel(base):
                if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in _VOWELS | _NO_UNDOUBLE:
                    base = base[:-1]
                word = base
            break
    # adverbs and nominalisations
    if word.endswith("ly") and len(word) >= 6:
        word = word[:-2]
    elif word.endswith("ment") and len(word) >= 8:
        word = word[:-4]
    elif word.endswith("sion") and len(word) >= 7 and word[-5] in "iun":
        word = word[:-4] + "d"  # decision -> decid(e), extension -> extend
    elif word.endswith(("tion", "sion")) and len(word) >= 7:
        word = word[:-3]
    return _strip_e_y(word)
