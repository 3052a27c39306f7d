"""Route time of routing on utterances: the ``weighted`` provider when its table holds them.

``router.weighted.route_weighted`` hands a prompt here when the table has utterance postings
(``router.uttertable``) and ``utterances = true``. Everything the weighted provider does stays
(idf weights, stems, spelling repair, the intent gate, the rare word, spec §10's choice); what
the utterances add is **evidence per member**:

- A prompt word found in a member's utterances, and not already in that member's own line or
  among its cluster's tag and label words, adds ``utterance_weight`` x its utterance idf to that
  member's line weight (at most ``utterance_cap`` per member), and once to its cluster's member
  words. A member is then scored by its hook line plus its utterances, and a cluster by its tags
  and label plus its best member, as before.
- **Near-miss gate.** A cluster whose members all have utterances is chosen only if its best
  member's evidence (its line and utterance words, not counting the cluster's tag words)
  reaches ``utterance_member_floor``: a prompt that grazes a cluster's tags but matches no
  member's need stays silent.
- **Fewer lines.** The routed clusters' lines are sent best member first, and only the members
  with at least ``utterance_line_share`` of the best member's evidence, at most
  ``utterance_line_limit`` of them; a routed cluster none of whose lines survive is dropped.
  Without member evidence (a prompt that matched tags alone) the lines are chosen as before.

The decision also says, per member, which of the prompt's words matched its utterances
(``utterance_hits``: {slug: [prompt words]}), for ``route --json`` and the session stage's line
ranking (``router.injection``). Utterance text never leaves the table: the lines sent are the
cluster file's own.
"""

from router.score import prompt_for_scoring, render_context
from router.stem import stem
from router.tokens import tokenize
from router.weighted import (
    _STOP_STEMS,
    _choose,
    _learned_hits,
    _line,
    _lookup,
    _select_lines,
    best_lines,
    general_request,
    member_part,
    rank_parts,
    score_parts,
)

# Members named in a decision's utterance_hits at most (the explanation of a big cluster).
MAX_EXPLAINED = 12


def _prompt_stems(text):
    """{stem: sorted prompt tokens giving it}: the weighted provider's words, with their forms."""
    forms = {}
    for token in tokenize(text):
        key = token if "_" in token else stem(token)
        if key not in _STOP_STEMS:
            forms.setdefault(key, []).append(token)
    return {key: sorted(tokens) for key, tokens in forms.items()}


def utterance_matches(words, table, parts, settings):
    """{(position, member_index): {stem: weight}}: the prompt stems found in a member's
    utterances that its own line and its cluster's tags do not already count, by how
    ``utterance_mode`` reads them: ``bag`` every such stem of any of its utterances; ``best`` those
    of its best-matching single utterance; ``pair`` the best utterance holding at least two."""
    postings = table["utterance_postings"]
    factor = settings["utterance_weight"]
    mode = settings.get("utterance_mode", "bag")
    tag_words = parts["tag_words"]
    line_words = parts["line_words"]
    per_utterance = {}
    for word in sorted(words):
        entry = postings.get(word)
        if not entry:
            continue
        which = settings.get("utterance_idf", "bag")
        if which == "merged":
            weight = table["utterance_reweight_postings"].get(word)[0] * factor
        else:
            weight = entry[0 if which == "bag" else 1] * factor
        flat = entry[2:]
        for position, member_index, number in zip(flat[0::3], flat[1::3], flat[2::3]):
            if word in tag_words.get(position, ()) or word in line_words.get((position, member_index), ()):
                continue
            per_utterance.setdefault((position, member_index), {}).setdefault(number, {})[word] = weight
    out = {}
    for key, found in per_utterance.items():
        if mode == "bag":
            merged = {}
            for hits in found.values():
                merged.update(hits)
            out[key] = merged
            continue
        best = max(found.values(), key=lambda hits: (sum(hits.values()), sorted(hits)))
        if mode == "pair" and len(best) < 2:
            continue
        out[key] = best
    return out


def merge_matches(parts, matches, settings):
    """Add the utterance evidence to ``parts`` (in place): each member's line weight and words,
    each cluster's member-only weight (a word once per cluster, as member words count)."""
    cap = settings["utterance_cap"]
    line_weight = parts["line_weight"]
    line_words = parts["line_words"]
    member_only = parts["member_only"]
    member_words = parts["member_words"]
    added = {}
    for (position, member_index), found in sorted(matches.items()):
        total = sum(found.values())
        key = (position, member_index)
        line_weight[key] = line_weight.get(key, 0.0) + (min(total, cap) if cap > 0 else total)
        line_words.setdefault(key, []).extend(sorted(found))
        held = added.setdefault(position, set(member_words.get(position, ())))
        for word, weight in sorted(found.items()):
            if word not in held:
                held.add(word)
                member_only[position] = member_only.get(position, 0.0) + weight
    return parts


def coverage(chosen, parts, found, words, table):
    """The share of the prompt's known weight (each prompt stem the store or its utterances hold,
    at its idf) that the chosen clusters explain: their tag and label words and the words of each
    one's best member (its line and its utterances)."""
    utterance_postings = table["utterance_postings"]

    def weight(word):
        entry = found.get(word)
        if entry is not None:
            return entry[0]
        entry = utterance_postings.get(word)
        return entry[0] if entry else 0.0

    total = sum(weight(word) for word in words | set(found))
    if total <= 0:
        return 0.0
    explained = set()
    line_weight = parts["line_weight"]
    for position in chosen:
        explained.update(parts["tag_words"].get(position, ()))
        best = max(((w, key) for key, w in line_weight.items() if key[0] == position), default=None)
        if best is not None:
            explained.update(parts["line_words"].get(best[1], ()))
    return sum(weight(word) for word in explained) / total


def _enriched(table, position):
    return position not in table["utterance_meta"].get("unenriched", ())


def select_by_evidence(table, chosen, line_weight, settings):
    """(lines, total) of the chosen clusters, best member first: those with at least
    ``utterance_line_share`` of the best member's evidence, at most ``utterance_line_limit``
    (0: ``line_cap``). Without any member evidence, ``router.weighted``'s own selection."""
    candidates = []
    for rank, position in enumerate(chosen):
        for member_index, (slug, _type, hook) in enumerate(table["clusters"][position][3]):
            candidates.append((line_weight.get((position, member_index), 0.0), rank, position, member_index, slug,
                               hook))
    top = max((row[0] for row in candidates), default=0.0)
    if top <= 0:
        return _select_lines(table, chosen, line_weight, settings["line_cap"])
    limit = settings["utterance_line_limit"] or settings["line_cap"]
    share = settings["utterance_line_share"]
    kept = sorted((row for row in candidates if row[0] > 0 and row[0] >= share * top),
                  key=lambda row: (-row[0], row[1], row[3]))[:min(limit, settings["line_cap"])]
    return [(row[2], row[3], row[4], row[5]) for row in kept], len(candidates)


def route_with_utterances(prompt, table, settings):
    """Route one prompt on a table with utterances; the ``route_weighted`` decision plus
    ``utterance_hits``."""
    text = prompt_for_scoring(prompt, settings["max_prompt_chars"])
    forms = _prompt_stems(text)
    words = set(forms)
    found = _lookup(words, table, settings)
    if settings.get("utterance_idf", "bag") == "merged":
        reweight = table["utterance_reweight_postings"]
        found = {word: ((reweight.get(word) or (weight,))[0] * (weight / table["term_postings"].get(word)[0])
                        if table["term_postings"].get(word) else weight, flat, via)
                 for word, (weight, flat, via) in found.items()}
    parts = score_parts(found, settings)
    matches = utterance_matches(words, table, parts, settings)
    merge_matches(parts, matches, settings)
    rows = rank_parts(parts, settings)
    line_weight = parts["line_weight"]
    best = best_lines(line_weight)
    member_floor = settings["utterance_member_floor"]
    grazed = [row for row in rows if member_floor > 0 and _enriched(table, row[0])
              and member_part(parts, row[0], best) < member_floor]
    eligible = [row for row in rows if row not in grazed]
    floor = settings["weighted_floor"]
    clusters = table["clusters"]
    rare = parts["rare"]
    if rare is not None and any(row[0] == rare[2] for row in grazed):
        rare = None
    chosen = _choose(eligible, rare, floor, settings)
    share = coverage(chosen, parts, found, words, table) if chosen else 0.0
    strong = settings.get("utterance_strong", 0.0)
    if chosen and share < settings.get("utterance_coverage", 0.0) and not (
            strong > 0 and member_part(parts, chosen[0], best) >= strong):
        grazed = grazed + [row for row in eligible if row[0] == chosen[0]]
        chosen = []
    gate = None
    if chosen and settings["intent_gate"]:
        focus = max((len(w) for (p, _m), w in parts["line_words"].items() if p == chosen[0]), default=0)
        if focus < settings["intent_gate_focus"]:
            gate = general_request(text, found)
    top = eligible[0][1] if eligible else 0
    second = eligible[1][1] if len(eligible) > 1 else 0
    per_cluster = {}
    for (position, member_index), found_words in matches.items():
        per_cluster.setdefault(position, set()).update(found_words)
    decision = {
        "prompt_tokens": sorted(words),
        "scores": [{"cluster_id": clusters[p][0], "score": s, "tag_hits": t, "member_hits": m,
                    "utterance_hits": sorted(per_cluster.get(p, ())),
                    "member_evidence": round(member_part(parts, p, best), 4)}
                   for (p, s, t, m) in rows],
        "floor": floor,
        "top_score": top,
        "second_score": second,
        "margin_over_floor": round(top - floor, 4),
        "lead_over_second": round(top - second, 4),
        "confidence": round(top / (top + floor), 4) if top > 0 and floor > 0 else (1.0 if top > 0 else 0.0),
    }
    if gate is not None:
        chosen = []
    lines = []
    total = 0
    context = None
    size_capped = 0
    if chosen:
        lines, total = select_by_evidence(table, chosen, line_weight, settings)
        chosen = [p for p in chosen if any(line[0] == p for line in lines)]
        context, kept = render_context([clusters[p][0] for p in chosen], lines, total, settings["max_context_chars"])
        size_capped = len(lines) - kept
        lines = lines[:kept]
    routed = [clusters[p][0] for p in chosen]
    taught = _learned_hits(tokenize(text), table) if lines else {}
    decision.update({
        "routed": routed,
        "clusters": routed,
        "lines": [_line(clusters[p][0], slug, hook, taught.get((p, i))) for (p, i, slug, hook) in lines],
        "total_member_lines": total,
        "size_capped_lines": size_capped,
        "additional_context": context,
        "utterance_hits": _hits_by_slug(table, rows, matches, forms),
        "explanation": _explain(rows, grazed, chosen, gate, clusters, parts, best, floor, matches, forms),
    })
    return decision


def _hits_by_slug(table, rows, matches, forms):
    """{slug: the prompt's words found in its utterances} for the members of the three best
    clusters, best evidence first, at most ``MAX_EXPLAINED``."""
    shown = {row[0] for row in rows[:3]}
    picked = sorted(((sum(found.values()), key) for key, found in matches.items() if key[0] in shown),
                    key=lambda item: (-item[0], item[1]))[:MAX_EXPLAINED]
    out = {}
    for _weight, (position, member_index) in picked:
        slug = table["clusters"][position][3][member_index][0]
        out[slug] = sorted({token for word in matches[(position, member_index)] for token in forms.get(word, (word,))})
    return out


def _explain(rows, grazed, chosen, gate, clusters, parts, best, floor, matches, forms):
    if not rows:
        return "no prompt word (or a one-edit variant of it) is in the store or its utterances"
    top = rows[0]
    head = (f"weighted score {top[1]:.2f} (floor {floor}) for {clusters[top[0]][0]}, member evidence "
            f"{member_part(parts, top[0], best):.2f}")
    words = sorted({w for (p, _m), found in matches.items() if p == top[0] for w in found})[:6]
    if words:
        head += f"; utterance words {', '.join(words)}"
    if gate is not None:
        return f"{head}; silenced by the intent gate: a general '{gate}' request with no ownership word"
    if not chosen:
        if any(row[0] == top[0] for row in grazed):
            return f"{head}: no member's own words or utterances meet the prompt (near miss), nothing sent"
        return f"{head}: under the floor"
    return head + f"; sent {', '.join(clusters[p][0] for p in chosen)}"
