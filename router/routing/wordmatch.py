"""The weighted provider's prompt words to postings (``lookup_stems``): each stem the store holds,
exactly, else by a one-letter spelling repair that an exactly matched word corroborates, weighted
by its idf (and its word prior). The spelling repair's build-time half is here too: the one-letter
variants a stem is keyed under (``deletes``) and the Bloom filter of those keys (``key_filter``),
made when the table is built so a prompt reads no shard for a variant the store has no key for.

Apart from ``router.routing.weightedscore`` (what the matched words score) because both deciders
and both table builders use it. Standard library only: this is on the hook's path.
"""

import zlib

FUZZY_MIN_LENGTH = 5
FUZZY_FACTOR = 0.7
# A pasted log has thousands of unknown words; spelling repair stops after this many.
FUZZY_MAX_WORDS = 40


def deletes(word):
    return {word[:i] + word[i + 1:] for i in range(len(word))}


# The spelling repair's key filter: a Bloom filter of every key of the fuzzy postings, made when the
# table is built and read with its header, so a one-letter variant of a prompt word the store has
# no key for is known absent without reading the shard it would live in (most are absent: a
# 10,000-member store's repair read ~30 shards a prompt for them). Bits per key and probes give
# about 1% false positives, each of which costs only the shard read the filter would have saved.
FILTER_BITS_PER_KEY = 10
FILTER_PROBES = 7


def key_filter(keys):
    """The Bloom filter (bytes) of ``keys`` that ``may_hold`` reads."""
    size = max(64, -(-len(keys) * FILTER_BITS_PER_KEY // 64) * 64)
    bits = bytearray(size // 8)
    for key in keys:
        for bit in _probes(key, size):
            bits[bit >> 3] |= 1 << (bit & 7)
    return bytes(bits)


def _probes(key, size):
    data = key.encode("utf-8", "surrogateescape")
    first, step = zlib.crc32(data), zlib.adler32(data) | 1
    return [(first + i * step) % size for i in range(FILTER_PROBES)]


def may_hold(key_bits, key):
    """False when ``key`` is certainly not among the keys ``key_filter`` made ``key_bits`` of (or,
    given a tuple of filters, of any of them)."""
    if isinstance(key_bits, tuple):
        return any(may_hold(bits, key) for bits in key_bits)
    for bit in _probes(key, len(key_bits) * 8):
        if not key_bits[bit >> 3] >> (bit & 7) & 1:
            return False
    return True


def prior_factor(zipf, knee):
    """How much of its weight a word keeps for being common English: all of it below ``knee``
    on the Zipf scale (3 = once per million words), 1 / (1 + zipf - knee) above."""
    return 1.0 if zipf <= knee else 1.0 / (1.0 + zipf - knee)



def within_one_edit(a, b):
    """True if ``a`` and ``b`` differ by at most one deletion, insertion, substitution or swap."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    if la > lb:
        a, b = b, a
    return any(b[:i] + b[i + 1:] == a for i in range(len(b)))


def lookup_stems(words, table, settings):
    """{stem: (weight, flat postings, matched via)} for the prompt stems the store holds: weight
    is the stem's idf, times ``FUZZY_FACTOR`` for a spelling repair and its word prior if any."""
    found = _corroborated(_match(words, table))
    priors = table.get("prior_postings") if settings["word_priors"] else None
    if priors is not None:
        knee = settings["word_prior_knee"]
        for word, (weight, flat, via) in list(found.items()):
            zipf = priors.get(word)
            if zipf:
                found[word] = (weight * prior_factor(zipf, knee), flat, via)
    return found


def _corroborated(found):
    """Drop spelling repairs that no exactly matched word backs up: a one-edit variant counts
    only in a member line (or a cluster's tag list) that holds another prompt word as written, so
    "convert" is not read as "convent(ional)" unless the rest of the prompt is about that line."""
    exact = set()
    for word, (_weight, flat, via) in found.items():
        if via == word:
            exact.update(zip(flat[0::2], flat[1::2]))
    out = {}
    for word, entry in found.items():
        flat, via = entry[1], entry[2]
        if via == word:
            out[word] = entry
            continue
        keep = tuple(x for pair in zip(flat[0::2], flat[1::2]) if pair in exact for x in pair)
        if keep:
            out[word] = (entry[0], keep, via)
    return out


def _match(words, table):
    term_postings = table["term_postings"]
    fuzzy_postings = table["fuzzy_postings"]
    found = {}
    unknown = []
    # Sorted: the order of a set of strings changes with the process's hash seed, and the order
    # words are added in decides float sums and ties; the same prompt must always route the same.
    for word in sorted(words):
        entry = term_postings.get(word)
        if entry:
            found[word] = (entry[0], entry[1:], word)
        elif len(word) >= FUZZY_MIN_LENGTH and word.isalpha():
            unknown.append(word)
    key_bits = table.get("fuzzy_filter")
    for word in sorted(unknown)[:FUZZY_MAX_WORDS]:
        candidates = set()
        for variant in deletes(word) | {word}:
            if key_bits is None or may_hold(key_bits, variant):
                candidates.update(fuzzy_postings.get(variant, ()))
        for candidate in sorted(candidates):
            if candidate not in found and within_one_edit(word, candidate):
                entry = term_postings.get(candidate)
                if entry:
                    found[candidate] = (entry[0] * FUZZY_FACTOR, entry[1:], word)
    return found
