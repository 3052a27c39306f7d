"""Tokenising for lexical routing: the one rule the scorer, the builder and the harness share.

The rule (documented in the README, section "How a prompt is scored"):

1. Lowercase the text and take every maximal run of word characters (``\\w+``: letters,
   digits and ``_``). Hyphens, dots, slashes and apostrophes split; underscores do not, so
   identifiers such as ``node_extra_ca_certs``, ``setx`` and ``public_`` stay whole.
2. An identifier that contains ``_`` also yields its parts (``node_extra_ca_certs`` gives
   ``node``, ``extra``, ``ca``, ``cert`` too, folded by rule 4), so a slug's words match plain prose.
3. Drop tokens shorter than two characters, tokens made only of digits (dates and counts
   match by accident), and the shipped English stopwords (``router/data/stopwords.txt``),
   before and after rule 4 (so ``tells`` goes the way of ``tell``).
4. Fold simple English plurals on plain words so ``secrets`` meets ``secret``: ``-ies`` becomes
   ``-y`` and a final ``s`` is dropped when the word is longer than three letters and does not
   end in ``ss``, ``us`` or ``is``. Identifiers (anything with ``_``) are never folded.

A text's tokens are a set: scoring is word-set overlap, so repeating a word adds nothing.
"""

import os
import re

WORD_RE = re.compile(r"\w+")
_STOPWORDS_PATH = os.path.join(os.path.dirname(__file__), "data", "stopwords.txt")


def _load_stopwords(path=_STOPWORDS_PATH):
    with open(path, encoding="utf-8") as handle:
        return frozenset(
            word
            for word in (line.split("#", 1)[0].strip() for line in handle)
            if word
        )


STOPWORDS = _load_stopwords()


def fold_plural(word):
    """Fold a plain English plural to its singular; identifiers are left alone."""
    if "_" in word or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _keep(word):
    return len(word) >= 2 and not word.isdigit() and word not in STOPWORDS


def tokenize(text):
    """Return the set of routing tokens in ``text`` (see the module docstring for the rule)."""
    tokens = set()
    add = tokens.add
    for word in WORD_RE.findall(text.lower()):
        if "_" in word:
            core = word.strip("_")
            if len(core) >= 2 and not core.isdigit():
                add(word)
            for part in word.split("_"):
                if _keep(part):
                    folded = fold_plural(part)
                    if folded not in STOPWORDS:
                        add(folded)
        elif _keep(word):
            folded = fold_plural(word)
            if folded not in STOPWORDS:
                add(folded)
    return tokens


def slug_words(slug):
    """The words of a member slug, as routing tokens (``env_bash_tool`` -> env, bash, tool)."""
    return tokenize(slug.replace("_", " ")) | {slug.lower()}
