"""The scoring of the ``weighted`` provider (``router.routing.weighted``, whose docstring says what each
part is for): prompt words to postings, per-cluster scores, the choice of clusters and lines.

Apart from ``router.routing.weighted`` (the provider: a decision per prompt) so that the two deciders,
``router.routing.weighted`` (the cluster file alone) and ``router.routing.utterscore`` (with utterances), share it
without importing each other. Standard library only.
"""

import re

from router.routing.score import render_context
from router.stem import stem
from router.tokens import STOPWORDS, tokenize

TAGS = -1
LABEL = -2
RARE_MIN_LENGTH = 4

# The intent gate's patterns, compiled on first use: most prompts never reach the gate, and
# compiling them cost a hook ~0.5 ms of start-up (python -X importtime).
_GENERAL_FORM_PATTERN = (
    r"\b(explain|eli5|define|definition of|what\s+(?:is|are|was|were|does)|what's|whats|"
    r"difference between|differences between|history of|how\s+(?:does|do|did)\s+[^?.!]{0,60}\bwork|"
    r"tell me about|write\s+(?:me\s+)?(?:a|an|some)|compose|pros and cons)\b")
_OWNERSHIP_PATTERN = r"\b(we|our|ours|us|my|mine|i|i'm|i've|i'd|i'll|we're|we've|here)\b"
# Every alternative of the form pattern holds one of these: a prompt holding none cannot match it,
# so the gate answers without compiling anything (a prompt's first regular expression costs ~1 ms).
_GENERAL_FORM_WORDS = ("explain", "eli5", "defin", "what", "differen", "history", "how", "tell", "write",
                       "compose", "pros")
_COMPILED = {}


def _pattern(source):
    found = _COMPILED.get(source)
    if found is None:
        found = _COMPILED[source] = re.compile(source)
    return found


# --------------------------------------------------------------------------- build time


# Stemming can turn a word back into a stopword ("needed" -> "need"), or into a stopword's
# stem ("becaus"); those go too. Short stems of stopwords ("real" of "really", "min" of
# "mine") are real words of their own and stay.
# Computed once and shipped (router/data/stopstems.txt, made by ``stop_stems_of``; a test checks
# the file against the rule): stemming 219 stopwords cost every hook ~0.2 ms of start-up.
def stop_stems_of(stopwords):
    return frozenset(s for s in (stem(word) for word in stopwords) if len(s) > 4) - frozenset(stopwords)


def _load_stop_stems():
    import os

    from router.safeio import open_regular

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "stopstems.txt")
    try:
        with open_regular(path, encoding="utf-8") as handle:
            return frozenset(line.strip() for line in handle if line.strip() and not line.startswith("#"))
    except OSError:
        return stop_stems_of(STOPWORDS)


STOP_STEMS = STOPWORDS | _load_stop_stems()


def stem_forms(tokens):
    """{stem: sorted tokens giving it} of a text's tokens: the routing words (identifiers whole,
    stopword stems dropped) and the prompt forms they came from."""
    forms = {}
    for token in tokens:
        key = token if "_" in token else stem(token)
        if key not in STOP_STEMS:
            forms.setdefault(key, []).append(token)
    return {key: sorted(found) for key, found in forms.items()}


def word_stems(word, memo):
    """The routing stems of one lowercase word (``tokenize``'s tokens of it, stemmed, stopword
    stems dropped), sorted; ``memo`` ({word: stems}) is kept across the calls of one build (a
    store's texts use the same everyday words thousands of times, and ``tokenize`` treats each
    word on its own, so a word's stems never depend on its neighbours)."""
    found = memo.get(word)
    if found is None:
        keys = set()
        for token in tokenize(word):
            key = stem(token) if "_" not in token else token   # as stem_forms keys a prompt token
            if key not in STOP_STEMS:
                keys.add(key)
        found = memo[word] = tuple(sorted(keys))
    return found


def stem_set(tokens):
    return set(stem_forms(tokens))


# --------------------------------------------------------------------------- route time


def general_request(prompt_text, matched_words):
    """The intent gate's reason to stay silent, or ``None``: a general-knowledge form with no
    ownership word and no store identifier among the matched words."""
    text = prompt_text.lower().replace("\u2019", "'")
    if not any(word in text for word in _GENERAL_FORM_WORDS):
        return None
    form = _pattern(_GENERAL_FORM_PATTERN).search(text)
    if form is None or _pattern(_OWNERSHIP_PATTERN).search(text):
        return None
    if any("_" in word for word in matched_words):
        return None
    return form.group(0).split()[0]


def score_weighted(found, settings):
    """Per-cluster scores. Returns (ranked rows, line weights, line words, rare word): a row is
    (position, score, tag_words, member_words); line weights and line words map
    (position, member_index) to the prompt weight and the prompt words that member line holds;
    the rare word is (word, weight, position, member_index) or None."""
    parts = score_parts(found, settings)
    return rank_parts(parts, settings), parts["line_weight"], parts["line_words"], parts["rare"]


def score_parts(found, settings):
    """What a cluster's score is made of, per prompt: ``cluster_part`` (tag and label weight),
    ``member_only`` (weight of the prompt's member words that are not tag words), ``tag_words``
    and ``member_words`` per position; ``line_weight`` and ``line_words`` per (position,
    member_index); and the ``rare`` word (see ``score_weighted``)."""
    tag_boost = settings["weighted_tag_boost"]
    cluster_part = {}
    tag_words = {}
    member_words = {}
    line_weight = {}
    line_words = {}
    member_only = {}
    rare = None
    for word, (weight, flat, via) in found.items():
        postings = list(zip(flat[0::2], flat[1::2]))
        if len(postings) == 1 and postings[0][1] >= 0 and via == word and len(word) >= RARE_MIN_LENGTH:
            if rare is None or weight > rare[1] or (weight == rare[1] and word < rare[0]):
                rare = (word, weight, postings[0][0], postings[0][1])
        kinds = {}
        for position, member_index in postings:
            kinds.setdefault(position, []).append(member_index)
        for position, indexes in kinds.items():
            if TAGS in indexes:
                cluster_part[position] = cluster_part.get(position, 0.0) + weight * tag_boost
                tag_words.setdefault(position, []).append(word)
            elif LABEL in indexes:
                cluster_part[position] = cluster_part.get(position, 0.0) + weight
                tag_words.setdefault(position, []).append(word)
            else:
                member_words.setdefault(position, []).append(word)
                member_only[position] = member_only.get(position, 0.0) + weight
            for member_index in indexes:
                if member_index >= 0:
                    key = (position, member_index)
                    line_weight[key] = line_weight.get(key, 0.0) + weight
                    line_words.setdefault(key, []).append(word)
    # Decisive only when its line holds another prompt word too: a word that happens to occur
    # once in the store is not by itself a fact being asked about.
    if rare is not None and len(line_words[(rare[2], rare[3])]) < 2:
        rare = None
    return {"cluster_part": cluster_part, "member_only": member_only, "tag_words": tag_words,
            "member_words": member_words, "line_weight": line_weight, "line_words": line_words, "rare": rare}


def member_part(parts, position, best_member):
    """The member share of a cluster's score: its best line counts in full only for the words
    that are not tag words (those are already in the cluster part), so it is capped by the
    member-only total."""
    return min(best_member.get(position, 0.0), parts["member_only"].get(position, 0.0))


def best_lines(line_weight):
    """{position: the highest line weight among its member lines}."""
    best_member = {}
    for (position, _member_index), weight in line_weight.items():
        if weight > best_member.get(position, 0.0):
            best_member[position] = weight
    return best_member


def rank_parts(parts, settings):
    """The ranked rows (position, score, tag_words, member_words) of ``score_parts``' parts."""
    spread = settings["weighted_spread"]
    cluster_part = parts["cluster_part"]
    member_only = parts["member_only"]
    best_member = best_lines(parts["line_weight"])
    rows = []
    for position in set(cluster_part) | set(member_only):
        best = member_part(parts, position, best_member)
        rest = member_only.get(position, 0.0) - best
        score = cluster_part.get(position, 0.0) + best + spread * rest
        rows.append((position, round(score, 4), sorted(parts["tag_words"].get(position, ())),
                     sorted(parts["member_words"].get(position, ()))))
    rows.sort(key=lambda row: (-row[1], -len(row[2]), row[0]))
    return rows


def focus(position, line_words):
    """The most prompt words any one member line of the cluster at ``position`` holds."""
    return max((len(words) for (p, _m), words in line_words.items() if p == position), default=0)


def choose_clusters(rows, rare, floor, settings):
    if not rows or rows[0][1] < floor or rows[0][1] <= 0:
        return []
    chosen = [rows[0][0]]
    if len(rows) > 1:
        top, second = rows[0][1], rows[1][1]
        third = rows[2][1] if len(rows) > 2 else None
        if second >= floor and second >= settings["second_ratio"] * top and (third is None or second > third):
            chosen.append(rows[1][0])
    if settings["rare_word_rule"] and rare is not None and rare[2] not in chosen:
        chosen = [chosen[0], rare[2]]
    return chosen


def select_member_lines(table, chosen, member_weight, line_cap):
    candidates = []
    for rank, position in enumerate(chosen):
        for member_index, (slug, _type, hook) in enumerate(table["clusters"][position][3]):
            candidates.append((rank, position, member_index, slug, hook))
    total = len(candidates)
    if total > line_cap:
        def relevance(row):
            return (-member_weight.get((row[1], row[2]), 0.0), row[0], row[2])
        candidates = sorted(sorted(candidates, key=relevance)[:line_cap], key=lambda row: (row[0], row[2]))
    return [(row[1], row[2], row[3], row[4]) for row in candidates], total


def learned_hits_by_line(prompt_tokens, table, positions=None):
    """{(position, member_index): sorted learned words of the prompt} (empty without learned terms);
    ``positions``: only the lines of these clusters (those sent: a common utterance word is on
    thousands of lines of a big store)."""
    postings = table.get("learned_line_postings")
    if not postings:
        return {}
    hits = {}
    for token in sorted(prompt_tokens):
        flat = postings.get(token, ())
        for pair in zip(flat[0::2], flat[1::2]):
            if positions is None or pair[0] in positions:
                hits.setdefault(pair, []).append(token)
    return hits


def _line(cluster_id, slug, hook, learned_hits):
    line = {"cluster_id": cluster_id, "slug": slug, "hook": hook}
    if learned_hits:
        # The session stage ranks lines by the prompt words they hold; these count as held.
        line["learned_hits"] = learned_hits
    return line



def idf(df, documents):
    """A word's weight in a store of ``documents`` documents when ``df`` of them hold it."""
    from math import log  # build time only: routing reads the stored idf

    return log(1 + (documents - df + 0.5) / (df + 0.5))


def score_summary(top, second, floor):
    """The figures both weighted routes report about their top two scores and the floor."""
    return {
        "floor": floor,
        "top_score": top,
        "second_score": second,
        "margin_over_floor": round(top - floor, 4),
        "lead_over_second": round(top - second, 4),
        "confidence": round(top / (top + floor), 4) if top > 0 and floor > 0 else (1.0 if top > 0 else 0.0),
    }


def finish_decision(decision, clusters, chosen, gate, select, taught_of, settings):
    """Complete a weighted ``decision`` with what both weighted routes send (one place, so the
    two cannot drift): nothing when the intent ``gate`` silenced the prompt; else the lines
    ``select(chosen) -> (lines, total)`` picks, a cluster that got no line dropped from the header,
    rendered within ``max_context_chars``; ``taught_of(positions)`` gives the learned hits to show of
    the lines of the clusters at ``positions``."""
    if gate is not None:
        chosen = []
    lines, total, context, size_capped = [], 0, None, 0
    if chosen:
        lines, total = select(chosen)
        chosen = [p for p in chosen if any(line[0] == p for line in lines)]
        context, kept = render_context([clusters[p][0] for p in chosen], lines, total, settings["max_context_chars"])
        size_capped = len(lines) - kept
        lines = lines[:kept]
    routed = [clusters[p][0] for p in chosen]
    taught = taught_of(set(chosen)) if lines else {}
    decision.update({
        "routed": routed,
        "clusters": routed,
        "lines": [_line(clusters[p][0], slug, hook, taught.get((p, i))) for (p, i, slug, hook) in lines],
        "total_member_lines": total,
        "size_capped_lines": size_capped,
        "additional_context": context,
    })
    return chosen
