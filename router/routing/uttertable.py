"""Build time of routing on utterances: the postings the ``weighted`` provider adds for the
utterances file beside a cluster file (``router.store.utterances``, docs/enrich.md).

An utterance is something a user might type when a memory is the one they need, written at build
time by the user's own model. Its words are evidence *for that member* (never for its cluster as
a whole), kept apart from the member's own words so that:

- a table built without utterances is exactly today's (no key of this module appears), and
  ``utterances = false`` in the config turns routing on them off at route time with the table
  unchanged;
- they are weighed by their own rarity: ``utterance_postings`` maps a stem to
  ``(weight, position, member_index, ...)`` over the members whose utterances hold it, the weight
  being the idf of the stem among members' utterance bags (one document per member with
  utterances). A stem held by more than ``MAX_DF_SHARE`` of the bags (and at least
  ``MIN_DF_FOR_DROP`` of them) says nothing about which memory a prompt needs and is not
  indexed, nor one held by more than ``MAX_DF`` bags (a bound on the work per prompt word in a
  10,000-member store);
- ``utterance_meta`` says where they came from (the file, rows, members), which clusters have a
  member without utterances (``unenriched``: the near-miss gate leaves those alone), and, for a damaged
  file, what was wrong (``route --json`` shows it; the hook logs it once, when the table is
  built, and routes on the cluster file alone).

Utterances never become text the router sends: only stems and positions are stored here, and
the injected lines are always the cluster file's own.

Standard library and ``router.*`` only, imported only when a table is built (a cache miss).
"""

import os

from router.stem import stem
from router.tokens import WORD_RE, slug_words, tokenize
from router.routing.weightedscore import STOP_STEMS, idf, word_stems
from router.routing.wordmatch import FUZZY_MIN_LENGTH, deletes, key_filter

# A bag is one member's utterances; a stem in more than this share of the bags is noise.
MAX_DF_SHARE = 0.25
MIN_DF_FOR_DROP = 8
# ... and a stem in more bags than this is not indexed either, whatever the store's size: routing
# reads a prompt word's whole posting list, so this bounds the work per word (it changes nothing
# in a store of up to 4 x MAX_DF members).
MAX_DF = 256
# An utterances file larger than this is not read by the router (a 10,000-member store with 10
# utterances each is about 8 MB).
MAX_UTTERANCES_FILE_BYTES = 32 * 1024 * 1024


def stems_of_text(text, memo=None):
    """The routing stems of an utterance (the weighted provider's rule for memory words: the
    stems of ``router.tokens.tokenize``'s tokens); ``memo`` as ``weightedscore.word_stems``'."""
    memo = {} if memo is None else memo
    out = set()
    for word in set(WORD_RE.findall(text.lower())):
        out.update(word_stems(word, memo))
    return out


def read_beside(cluster_path, skipped=None):
    """``(utterances by slug, file, problem)`` for the utterances file beside ``cluster_path``:
    ``({}, file, None)`` when there is none, ``({}, file, "why")`` when it cannot be used (damaged,
    unreadable, too large): the router then routes on the cluster file alone. With a ``skipped``
    list, a bad row goes there and the rest are used (``router.store.utterances.parse_rows``)."""
    from router.config import utterances_path
    from router.errors import InputError
    from router.store.utterances import read_utterances, utterances_by_slug

    path = utterances_path(cluster_path)
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return {}, path, None
    except OSError as err:
        return {}, path, f"cannot read utterances file {path}: {err.strerror or err}"
    if size > MAX_UTTERANCES_FILE_BYTES:
        return {}, path, (f"utterances file {path} is {size} bytes, over the router's limit of "
                          f"{MAX_UTTERANCES_FILE_BYTES}")
    try:
        return utterances_by_slug(read_utterances(path, skipped)), path, None
    except InputError as err:
        return {}, path, err.format()


def add_utterance_postings(table, index, utterances, source=None, problem=None):
    """Add ``utterance_postings`` and ``utterance_meta`` to ``table`` (in place; returned) for
    ``utterances`` (``{slug: (text, ...)}``; slugs not in ``index`` are ignored). Nothing is added
    when no member of the index has an utterance and there is no ``problem`` to report.

    ``utterance_postings``: stem -> (idf, position, member_index, ...) over the members whose
    utterances hold the stem; the idf is over the members' utterance bags (one document each)."""
    bags = []
    rows = 0
    unenriched = []
    memo = {}
    for position, cluster in enumerate(index.clusters):
        for member_index, member in enumerate(cluster.members):
            texts = utterances.get(member.slug)
            if not texts:
                if not unenriched or unenriched[-1] != position:
                    unenriched.append(position)
                continue
            # One text per member: its utterances count together (a bag), so tokenising them
            # joined gives the same words at a tenth of the calls.
            bag = stems_of_text("\n".join(texts), memo)
            rows += len(texts)
            if bag:
                bags.append((position, member_index, bag))
    if not bags and problem is None:
        return table
    frequency = {}
    for _position, _member_index, bag in bags:
        for word in bag:
            frequency[word] = frequency.get(word, 0) + 1
    documents = len(bags)
    ceiling = min(MAX_DF, max(MIN_DF_FOR_DROP, MAX_DF_SHARE * documents))
    postings = {}
    for position, member_index, bag in bags:
        for word in bag:
            if frequency[word] <= ceiling:
                postings.setdefault(word, []).extend((position, member_index))

    table["utterance_postings"] = {word: (round(idf(len(flat) // 2, documents), 4),) + tuple(flat)
                                   for word, flat in postings.items()}
    add_member_words(table, index, utterances)
    table["utterance_meta"] = {"file": source, "members": documents, "rows": rows, "problem": problem,
                               "unenriched": tuple(unenriched),
                               "dropped_common": sum(1 for count in frequency.values() if count > ceiling)}
    return table


def add_member_words(table, index, utterances):
    """Add the postings that count each member's utterance words as words of that member (in
    place): what learned terms are (``router.routing.weightedtable``), kept apart from the table's own
    postings so that ``utterances = false`` routes on the cluster file alone. Per stem that some
    member's utterances hold beyond its line, ``utterance_term_postings`` has the whole entry the
    stem then has (idf over the same documents with those members added; the table's own entry
    otherwise stands), ``utterance_fuzzy_postings`` the one-letter deletions of the stems the store
    did not hold, and ``utterance_line_postings`` the utterance tokens a member's line lacks (as
    ``learned_line_postings``: the session stage counts them as words its line holds). A stem in
    more than ``MAX_DF`` members' utterances is left as it was (a bound on the work per word)."""
    base = table["term_postings"]
    added = {}
    lines = {}
    for position, cluster in enumerate(index.clusters):
        for member_index, member in enumerate(cluster.members):
            texts = utterances.get(member.slug)
            if not texts:
                continue
            words = slug_words(member.slug) | tokenize(member.hook)
            taught = set()
            for text in texts:
                taught |= tokenize(text)
            for token in taught - words:
                lines.setdefault(token, []).extend((position, member_index))
            for token in taught - words:
                key = token if "_" in token else stem(token)
                if key not in STOP_STEMS:
                    added.setdefault(key, set()).add((position, member_index))
    documents = table["weighted_meta"]["documents"]
    terms = {}
    fuzzy = {}
    for word, pairs in added.items():
        entry = base.get(word) or ()
        flat = tuple(entry[1:])
        pairs -= set(zip(flat[0::2], flat[1::2]))
        if not pairs or len(pairs) > MAX_DF:
            continue
        flat += tuple(x for pair in sorted(pairs) for x in pair)
        terms[word] = (idf(len(flat) // 2, documents),) + flat
        if not entry and len(word) >= FUZZY_MIN_LENGTH and word.isalpha():
            for variant in deletes(word) | {word}:
                fuzzy.setdefault(variant, []).append(word)
    table["utterance_term_postings"] = terms
    table["utterance_fuzzy_postings"] = {variant: tuple(sorted(found)) for variant, found in fuzzy.items()}
    table["utterance_fuzzy_filter"] = key_filter(set(fuzzy))
    table["utterance_line_postings"] = {token: tuple(flat) for token, flat in lines.items()}
    return table
