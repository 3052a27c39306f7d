"""Route time of routing on utterances: the ``weighted`` provider when its table holds them.

``router.routing.weighted.route_weighted`` hands a prompt here when the table has utterance postings
(``router.routing.uttertable``) and ``utterances = true``. Everything the weighted provider does stays
(idf weights, stems, spelling repair, the intent gate, the rare word, spec §10's choice); what
the utterances add is **evidence per member**:

- **Member words.** Each member's utterance words are words of that member, as learned terms
  are: ``member_view`` reads the table's own postings through ``router.routing.uttertable.add_member_words``
  (idf over the store's documents with those members added, spelling repair, the session stage's
  line words), so a member is scored by its hook line plus its utterances, and a cluster by its
  tags and label plus its best member, as before, at ``utterance_floor``. A prompt word found in
  a member's utterances and not already its word (a stem too common to be one) adds
  ``utterance_weight`` x its idf among the members' utterance bags (0 by default).
- **Near-miss gate.** When every member of the top cluster has utterances, the top cluster's tag
  and label words and its best member's words (line and utterances) must explain at least
  ``utterance_coverage`` of the prompt's known weight (``coverage``: each prompt stem the store or
  its utterances hold, at its idf; words the store never uses do not count), unless that best
  member alone weighs ``utterance_strong``: a prompt that grazes a cluster's words but is about
  something else (a how-to about the same tool) stays silent.
- **Fewer lines.** Each routed cluster's best member is sent, best first, then the other members
  with at least ``utterance_line_share`` of the best member's evidence, up to
  ``utterance_line_limit`` lines in all; a routed cluster none of whose members has evidence
  keeps its lines out. Without member evidence (a prompt that matched tags alone) the lines are
  chosen as before.

- **Plain hits kept** (``utterance_keep_plain``): a prompt whose score with utterances falls under
  ``utterance_floor`` while the router without them routes it at ``weighted_floor`` keeps that
  cluster (the gate and the veto still judge it).

- **The veto** (``router.routing.veto``): a decision whose prompt is nearer the near-misses and
  the generic requests than the routed members' own exemplars is dropped, unless its best member
  weighs ``veto_strong`` or its top cluster explains ``veto_protect`` of the prompt.

The method is what benchmarks/veto_cv.py chose by 5-fold cross-validation on the example store;
its constants, what benchmarks/transfer_cv.py chose by leave-one-store-out cross-validation over
every bundled store not held out (docs/providers.md has the tables).

The decision also says, per member, which of the prompt's words matched its utterances
(``utterance_hits``: {slug: [prompt words]}), for ``route --json`` and the session stage's line
ranking (``router.routing.injection``). Utterance text never leaves the table: the lines sent are the
cluster file's own.
"""

from router.routing.score import prompt_for_scoring
from router.tokens import tokenize
from router.routing.weightedscore import (
    choose_clusters,
    finish_decision,
    score_summary,
    learned_hits_by_line,
    select_member_lines,
    best_lines,
    general_request,
    member_part,
    rank_parts,
    score_parts,
    stem_forms,
)
from router.routing.wordmatch import lookup_stems

# Members named in a decision's utterance_hits at most (the explanation of a big cluster).
MAX_EXPLAINED = 12
# Clusters listed in a decision's scores at most: utterance words reach many clusters of a big
# store, and each listed cluster is a read of its cache shard.
MAX_SCORES = 20


def utterance_matches(words, table, parts, settings):
    """{(position, member_index): {stem: weight}}: the prompt stems found in a member's
    utterances that its own line and its cluster's tags do not already count, each at
    ``utterance_weight`` x its utterance idf."""
    postings = table["utterance_postings"]
    factor = settings["utterance_weight"]
    tag_words = parts["tag_words"]
    line_words = parts["line_words"]
    out = {}
    for word in sorted(words):
        entry = postings.get(word)
        if not entry:
            continue
        weight = entry[0] * factor
        flat = entry[1:]
        for position, member_index in zip(flat[0::2], flat[1::2]):
            if word in tag_words.get(position, ()) or word in line_words.get((position, member_index), ()):
                continue
            out.setdefault((position, member_index), {})[word] = weight
    return out


def utterance_words(words, table):
    """{(position, member_index): {stem: its utterance idf}}: every prompt stem found in a member's
    utterances (what ``route --json`` shows; the weight they add is ``member_view``'s and
    ``utterance_matches``')."""
    postings = table["utterance_postings"]
    out = {}
    for word in sorted(words):
        entry = postings.get(word)
        if entry:
            flat = entry[1:]
            for key in zip(flat[0::2], flat[1::2]):
                out.setdefault(key, {})[word] = entry[0]
    return out


def merge_matches(parts, matches):
    """Add the utterance evidence to ``parts`` (in place): each member's line weight and words,
    each cluster's member-only weight (a word once per cluster, as member words count)."""
    line_weight = parts["line_weight"]
    line_words = parts["line_words"]
    member_only = parts["member_only"]
    member_words = parts["member_words"]
    added = {}
    for (position, member_index), found in sorted(matches.items()):
        key = (position, member_index)
        line_weight[key] = line_weight.get(key, 0.0) + sum(found.values())
        line_words.setdefault(key, []).extend(sorted(found))
        held = added.setdefault(position, set(member_words.get(position, ())))
        for word, weight in sorted(found.items()):
            if word not in held:
                held.add(word)
                member_only[position] = member_only.get(position, 0.0) + weight
    return parts


def coverage(position, parts, found, words, table):
    """The share of the prompt's known weight (each prompt stem the store or its utterances hold,
    at its idf) that the cluster at ``position`` explains: its tag and label words and the words
    of its best member (its line and its utterances). The top cluster alone: a second cluster
    that explains the rest (the rare word's) does not make a grazed top cluster a match."""
    utterance_postings = table["utterance_postings"]

    def weight(word):
        entry = found.get(word)
        if entry is not None:
            return entry[0]
        entry = utterance_postings.get(word)
        return entry[0] if entry else 0.0

    # Summed in sorted order: a set's order changes with the hash seed, and a float sum's last
    # bits with its order (a share at the gate's edge must not pass in one process only).
    total = sum(weight(word) for word in sorted(words | set(found)))
    if total <= 0:
        return 0.0
    explained = set(parts["tag_words"].get(position, ()))
    best = max(((w, key) for key, w in parts["line_weight"].items() if key[0] == position), default=None)
    if best is not None:
        explained.update(parts["line_words"].get(best[1], ()))
    return sum(weight(word) for word in sorted(explained)) / total


def _enriched(table, position):
    return position not in table["utterance_meta"].get("unenriched", ())


def select_by_evidence(table, chosen, line_weight, settings):
    """(lines, total) of the chosen clusters, best member first: those with at least
    ``utterance_line_share`` of the best member's evidence, at most ``utterance_line_limit``
    (0: ``line_cap``). Without any member evidence, ``router.routing.weighted``'s own selection."""
    candidates = []
    for rank, position in enumerate(chosen):
        for member_index, (slug, _type, hook) in enumerate(table["clusters"][position][3]):
            candidates.append((line_weight.get((position, member_index), 0.0), rank, position, member_index, slug,
                               hook))
    top = max((row[0] for row in candidates), default=0.0)
    if top <= 0:
        return select_member_lines(table, chosen, line_weight, settings["line_cap"])
    limit = min(settings["utterance_line_limit"] or settings["line_cap"], settings["line_cap"])
    share = settings["utterance_line_share"]
    ranked = sorted((row for row in candidates if row[0] > 0), key=lambda row: (-row[0], row[1], row[3]))
    # Each chosen cluster's best member first (a second cluster is chosen for a fact of its own),
    # then the others with enough evidence, best first, up to the limit.
    kept = []
    for rank in range(len(chosen)):
        first = next((row for row in ranked if row[1] == rank), None)
        if first is not None:
            kept.append(first)
    for row in ranked:
        if len(kept) >= max(limit, len(chosen)):
            break
        if row not in kept and row[0] >= share * top:
            kept.append(row)
    kept.sort(key=lambda row: (-row[0], row[1], row[3]))
    return [(row[2], row[3], row[4], row[5]) for row in kept], len(candidates)


class _Replacing:
    """A postings mapping whose entries ``over`` replaces (read-only, ``get`` only)."""

    __slots__ = ("over", "base")

    def __init__(self, over, base):
        self.over, self.base = over, base

    def get(self, key, default=()):
        found = self.over.get(key)
        return found if found else self.base.get(key, default)


class _Joining(_Replacing):
    """A postings mapping whose entries are ``base``'s followed by ``over``'s."""

    __slots__ = ()

    def get(self, key, default=()):
        joined = tuple(self.base.get(key, ())) + tuple(self.over.get(key, ()))
        return joined or default


def member_view(table):
    """``table`` as the weighted provider sees it with each member's utterance words among its own
    (``router.routing.uttertable.add_member_words``); a table without those postings, as it is."""
    if "utterance_term_postings" not in table:
        return table
    view = dict(table)
    view["term_postings"] = _Replacing(table["utterance_term_postings"], table["term_postings"])
    view["fuzzy_postings"] = _Joining(table["utterance_fuzzy_postings"], table["fuzzy_postings"])
    filters = (table.get("fuzzy_filter"), table.get("utterance_fuzzy_filter"))
    view["fuzzy_filter"] = filters if None not in filters else None   # a key in either may be asked for
    view["learned_line_postings"] = _Joining(table["utterance_line_postings"], table.get("learned_line_postings") or {})
    return view


def route_with_utterances(prompt, table, settings):
    """Route one prompt on a table with utterances; the ``route_weighted`` decision plus
    ``utterance_hits``."""
    text = prompt_for_scoring(prompt, settings["max_prompt_chars"])
    forms = stem_forms(tokenize(text))
    words = set(forms)
    view = member_view(table)
    found = lookup_stems(words, view, settings)
    parts = score_parts(found, settings)
    matches = utterance_matches(words, table, parts, settings)
    merge_matches(parts, matches)
    rows = rank_parts(parts, settings)
    line_weight = parts["line_weight"]
    best = best_lines(line_weight)
    floor = settings["utterance_floor"]
    clusters = table["clusters"]
    chosen = choose_clusters(rows, parts["rare"], floor, settings)
    kept_plain = False
    if not chosen and settings["utterance_keep_plain"]:
        # Counting utterance words as member words adds documents, so a word's idf (and a score)
        # can fall under the floor where the router without utterances routes: keep that hit
        # (issue 34: no prompt kind below the plain router), for the gate and the veto to judge.
        plain_parts = score_parts(lookup_stems(words, table, settings), settings)
        chosen = choose_clusters(rank_parts(plain_parts, settings), plain_parts["rare"], settings["weighted_floor"],
                                 settings)
        kept_plain = bool(chosen)
    share = None
    near_miss = False
    if chosen and _enriched(table, chosen[0]):
        share = coverage(chosen[0], parts, found, words, table)
        strong = settings["utterance_strong"]
        if share < settings["utterance_coverage"] and not (strong > 0 and member_part(parts, chosen[0], best) >= strong):
            near_miss = True
            chosen = []
    veto = None
    strong_veto = settings["veto_strong"]
    protect = settings["veto_protect"]
    if (chosen and settings["veto"] and "exemplar_postings" in table
            and not (strong_veto > 0 and member_part(parts, chosen[0], best) >= strong_veto)
            and not (protect > 0 and share is not None and share >= protect)):
        from router.routing.veto import judge

        veto = judge(text, table, chosen, settings)
        if veto["vetoed"]:
            chosen = []
    gate = None
    if chosen and settings["intent_gate"]:
        focus = max((len(w) for (p, _m), w in parts["line_words"].items() if p == chosen[0]), default=0)
        if focus < settings["intent_gate_focus"]:
            gate = general_request(text, found)
    top = rows[0][1] if rows else 0
    second = rows[1][1] if len(rows) > 1 else 0
    heard = utterance_words(words, table)
    per_cluster = {}
    for (position, member_index), found_words in heard.items():
        per_cluster.setdefault(position, set()).update(found_words)
    decision = {
        "prompt_tokens": sorted(words),
        "scores": [{"cluster_id": clusters[p][0], "score": s, "tag_hits": t, "member_hits": m,
                    "utterance_hits": sorted(per_cluster.get(p, ())),
                    "member_evidence": round(member_part(parts, p, best), 4)}
                   for (p, s, t, m) in rows[:MAX_SCORES]],
        **score_summary(top, second, floor),
        "coverage": None if share is None else round(share, 4),
    }
    if veto is not None:
        decision["veto"] = veto
    chosen = finish_decision(decision, clusters, chosen, gate,
                             lambda picked: select_by_evidence(table, picked, line_weight, settings),
                             lambda positions: learned_hits_by_line(tokenize(text), view, positions), settings)
    decision["utterance_hits"] = _hits_by_slug(table, rows, heard, forms)
    decision["explanation"] = _explain(rows, near_miss, share, chosen, gate, clusters, parts, best, floor, heard,
                                       veto)
    if kept_plain and chosen:
        decision["explanation"] += f" (under the floor with utterances; kept: the router without them routes it at "\
                                   f"{settings['weighted_floor']})"
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


def _explain(rows, near_miss, share, chosen, gate, clusters, parts, best, floor, matches, veto=None):
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
    if near_miss:
        return (f"{head}; near miss: the chosen clusters' tags and best members explain {share:.0%} of the "
                "prompt's known words, nothing sent")
    if veto is not None and veto["vetoed"] and veto.get("rule") == "floor":
        best_member = veto["best_member"]
        nearest = "none shares a word" if best_member is None else f"the nearest is at {best_member[1]:.2f}"
        return (f"{head}; vetoed by veto_floor: no routed member's own exemplar reaches {veto['floor']:.2f} "
                f"({nearest}), nothing sent")
    if veto is not None and veto["vetoed"]:
        return (f"{head}; vetoed: nearer the near-misses and generic requests ({veto['negative']:.2f}) than "
                f"the routed members' own exemplars ({veto['positive']:.2f}) among the {veto['k']} nearest, "
                "nothing sent")
    if not chosen:
        return f"{head}: under the floor"
    return head + f"; sent {', '.join(clusters[p][0] for p in chosen)}"
