"""Route time of the nearest-exemplar veto: precision from the user's model's near-misses.

The recall side (``router.routing.utterscore``) counts a member's utterance words as its own
words, which finds paraphrases and also primes requests that merely graze a cluster's words (a
new flag for the same deploy script, the same tool's name in another sense). The veto asks, for
a routed decision, whether the prompt looks more like the routed members' exemplars (each
member's slug words and hook line, each of its utterances) or like the exemplars of "no memory
needed": the near-misses the engine wrote for every cluster and the shipped generic requests.

Similarity is TF-IDF cosine over stemmed unigrams and adjacent bigrams (``exemplar_terms``;
binary term frequency, idf over all exemplars, each exemplar's vector of unit length). Among the
``veto_k`` exemplars nearest the prompt, counting only the routed members' and the negatives,
each neighbour votes its similarity raised to ``veto_power`` (2: the nearest count most), and
the decision is dropped (the prompt gets nothing) when the negatives' summed vote exceeds the
routed members' plus ``veto_margin`` (a negative margin vetoes more), or when no routed member's
exemplar reaches ``veto_floor``. ``veto_margin`` and
``veto_floor`` are what benchmarks/transfer_cv.py chose by leave-one-store-out cross-validation over
the bundled stores (issue 34); ``veto_k`` and whether the coverage gate still applies, what
benchmarks/veto_cv.py chose before on the example store (docs/providers.md).

``exemplar_postings`` (built by ``router.routing.exemplars``): term -> (idf, code, weight, code,
weight, ...), ``weight`` the term's share of the exemplar's unit vector. A code says whose exemplar
it is without a lookup table (the hook reads only the postings of the prompt's own terms): see
``member_code``, ``near_miss_code`` and ``generic_code``.

Standard library and ``router.*`` only; no text of any exemplar is in the table.
"""

import math

from router.tokens import WORD_RE
from router.routing.weightedscore import word_stems

# code layout: a member exemplar is (position << 32) | (member_index << 12) | its index (0: the
# slug words and hook line; 1..: its utterances, at most 4,095 a member); a near-miss is
# -(1 + (position << 32) + its number), so a cluster's near-misses are named past 4,095 (up to
# 2^32 of them); generics are below -GENERIC_BASE (positions stay under 2^18 = 262,144 clusters).
_MEMBER_SHIFT = 12
_POSITION_SHIFT = 32
_EXEMPLAR_MASK = (1 << _MEMBER_SHIFT) - 1
_MEMBER_MASK = (1 << (_POSITION_SHIFT - _MEMBER_SHIFT)) - 1
_NEAR_MISS_MASK = (1 << _POSITION_SHIFT) - 1
GENERIC_BASE = 1 << 50


def member_code(position, member_index, number):
    return (position << _POSITION_SHIFT) | ((member_index & _MEMBER_MASK) << _MEMBER_SHIFT) | min(number, _EXEMPLAR_MASK)


def near_miss_code(position, number):
    return -(1 + (position << _POSITION_SHIFT) + min(number, _NEAR_MISS_MASK))


def generic_code(number):
    return -(GENERIC_BASE + number)


def describe_code(code):
    """``("member", position, member_index, n)``, ``("near_miss", position, n)`` or ``("generic", n)``."""
    if code >= 0:
        return ("member", code >> _POSITION_SHIFT, (code >> _MEMBER_SHIFT) & _MEMBER_MASK, code & _EXEMPLAR_MASK)
    if -code >= GENERIC_BASE:
        return ("generic", -code - GENERIC_BASE)
    rest = -code - 1
    return ("near_miss", rest >> _POSITION_SHIFT, rest & _NEAR_MISS_MASK)


def exemplar_terms(text, memo=None):
    """The veto's terms of ``text``: its routing stems (as the weighted provider stems memory
    words) and each adjacent pair of them, joined by a space."""
    memo = {} if memo is None else memo
    stems = []
    for word in WORD_RE.findall(text.lower()):
        stems.extend(word_stems(word, memo))
    terms = set(stems)
    terms.update(f"{a} {b}" for a, b in zip(stems, stems[1:]) if a != b)
    return terms


MEASURES = ("cosine", "balanced", "coverage")


def similarities(terms, postings, measure="cosine"):
    """{code: similarity} of every exemplar sharing a term with ``terms`` (the prompt's).

    With ``s`` the summed squared idf of the shared terms, ``q`` and ``e`` the prompt's and the
    exemplar's vector lengths: ``cosine`` is s / (q e); ``balanced`` is s / max(q, e)^2, which a
    two-word exemplar sharing one word with a long prompt cannot win as cosine lets it;
    ``coverage`` is s / q^2, the share of the prompt's weight the exemplar holds."""
    entries = []
    norm = 0.0
    # Sorted: the order of a set of strings changes with the hash seed, and the order the float
    # sums below are made in decides their last bits, so which of two tied exemplars is nearer.
    for term in sorted(terms):
        entry = postings.get(term)
        if entry:
            entries.append(entry)
            norm += entry[0] * entry[0]
    if not entries:
        return {}
    dots = {}
    lengths = {}
    get = dots.get
    for entry in entries:
        weight = entry[0]
        for i in range(1, len(entry), 2):
            code = entry[i]
            dots[code] = get(code, 0.0) + weight * entry[i + 1]
            if code not in lengths:
                lengths[code] = weight / entry[i + 1]
    length = math.sqrt(norm)
    if measure == "coverage":
        return {code: dot * lengths[code] / norm for code, dot in dots.items()}
    if measure == "balanced":
        return {code: dot * lengths[code] / max(norm, lengths[code] ** 2) for code, dot in dots.items()}
    return {code: dot / length for code, dot in dots.items()}


def judge(text, table, chosen, settings):
    """The veto's verdict on routing ``text`` to the cluster positions ``chosen``: a dict with
    ``vetoed`` (bool), ``rule`` (``"margin"``: the negatives outvote the routed members;
    ``"floor"``: only that no routed member's exemplar reaches ``veto_floor``; ``None``: not vetoed),
    ``positive`` and ``negative`` (the summed votes among the k nearest), ``best_member`` and
    ``nearest_negative`` (``(code, similarity)`` or ``None``). Ties in similarity are broken by
    the exemplar's code, never by the order of a set."""
    postings = table["exemplar_postings"]
    scores = similarities(exemplar_terms(text), postings, settings["veto_measure"])
    routed = set(chosen)
    ranked = []
    for code, similarity in scores.items():
        if code < 0 or (code >> _POSITION_SHIFT) in routed:
            ranked.append((similarity, code))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    k = max(1, int(settings["veto_k"]))
    nearest = ranked[:k]
    power = settings["veto_power"]
    positive = sum(s ** power for s, code in nearest if code >= 0)
    negative = sum(s ** power for s, code in nearest if code < 0)
    best_member = next(((code, round(s, 4)) for s, code in ranked if code >= 0), None)
    nearest_negative = next(((code, round(s, 4)) for s, code in ranked if code < 0), None)
    floor = settings["veto_floor"]
    weak = floor > 0 and (best_member is None or best_member[1] < floor)
    outvoted = negative > 0 and negative > positive + settings["veto_margin"]
    # The rule that fired, so the explanation says why (not "nearer the near-misses (0.00)" when
    # only the floor fired); when both fired the negatives' vote is named, the stronger reason.
    rule = "margin" if outvoted else "floor" if weak else None
    return {"vetoed": weak or outvoted, "rule": rule, "floor": floor,
            "positive": round(positive, 4), "negative": round(negative, 4),
            "best_member": best_member, "nearest_negative": nearest_negative, "k": k,
            "negatives": [code for _s, code in nearest if code < 0]}
