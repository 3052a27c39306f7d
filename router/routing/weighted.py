"""The ``weighted`` provider: IDF-weighted, stemmed, spelling-tolerant lexical routing.

What it adds to spec §10's word-set overlap, each for a failure measured on the spec scorer:

- **Weights.** A word counts by how rare it is in the store: idf = ln(1 + (N - df + 0.5) /
  (df + 0.5)), N the store's documents (each member line, plus each cluster's tags and its
  label), df how many hold the word. "setx" (one member) outweighs "windows" (a tag and
  several members), so a rare, decisive word is not outvoted by common ones.
- **Focus.** A cluster scores its tag words (x ``weighted_tag_boost``) and label words, plus its
  best single member line in full, plus ``weighted_spread`` of the member words scattered over
  its other lines: a fact whose words sit together in one line beats a chatty prompt that
  grazes a word here and there across a big cluster.
- **Forms.** Memory words and prompt words are stemmed alike (``router.stem``): "caching" meets
  "cached", "migrations" meets "migrate".
- **Spelling.** A prompt word of five letters or more that no memory holds is matched to a
  memory word one edit away (a deletion, insertion, substitution or swap), at
  ``FUZZY_FACTOR`` of its weight, through a deletion index built with the table.
- **Rare decisive word.** The rarest matched word held by exactly one member line brings that
  line's cluster in as the second cluster when the top cluster is another one.
- **Intent gate** (``intent_gate``). A general-knowledge request ("explain ...", "what is
  ...", "difference between ...", "history of ...", "write a ...", "how does ... work") with
  no ownership word (we, our, us, my, I) asks for knowledge, not for the user's memory, and
  gets nothing, unless it names one of the store's identifiers (a word with ``_``) or one
  member line of the top cluster holds ``intent_gate_focus`` of its words ("explain the
  decision ledger format" names a thing of this store; "explain how DNS works" grazes one word).

Choice is spec §10's: the top cluster if it reaches ``weighted_floor``, a clear second as
``second_ratio`` says, at most ``line_cap`` lines (the lines holding the most prompt weight
survive). Confidence = top / (top + floor): 0.5 at the floor.

All heavy work is done by ``router.routing.weightedtable.extend_table`` when the routing table is built (the hook caches
it, sharded, beside spec §10's postings); routing a prompt reads only the postings of its own
words. Standard library only.

Learned terms (issue 14 item 4): ``extend_table(..., learned_terms={slug: words})`` indexes
extra words for a member as if they were in its line. With ``learning = true`` the hook and
every command that routes read them from the learned-terms file beside the cluster file
(``router.store.learned.learned_terms_for``); the ``spec`` provider, the reference, never uses them.
"""

from router.routing.score import prompt_for_scoring
from router.tokens import tokenize
from router.routing.weightedscore import (
    choose_clusters,
    learned_hits_by_line,
    select_member_lines,
    stem_set,
    finish_decision,
    score_summary,
    focus,
    general_request,
    score_weighted,
)
from router.routing.wordmatch import lookup_stems


def route_weighted(prompt, table, settings):
    """Route one prompt; returns the provider decision with the ``route --json`` keys."""
    utterances = table.get("utterance_meta")
    if utterances is not None and utterances["members"] and settings.get("utterances", True):
        from router.routing.utterscore import route_with_utterances

        return route_with_utterances(prompt, table, settings)
    text = prompt_for_scoring(prompt, settings["max_prompt_chars"])
    words = stem_set(tokenize(text))
    found = lookup_stems(words, table, settings)
    rows, member_weight, line_words, rare = score_weighted(found, settings)
    floor = settings["weighted_floor"]
    clusters = table["clusters"]
    chosen = choose_clusters(rows, rare, floor, settings)
    gate = None
    if chosen and settings["intent_gate"] and focus(chosen[0], line_words) < settings["intent_gate_focus"]:
        gate = general_request(text, found)
    top = rows[0][1] if rows else 0
    second = rows[1][1] if len(rows) > 1 else 0
    decision = {
        "prompt_tokens": sorted(words),
        "scores": [{"cluster_id": clusters[p][0], "score": s, "tag_hits": t, "member_hits": m}
                   for (p, s, t, m) in rows],
        **score_summary(top, second, floor),
    }
    chosen = finish_decision(decision, clusters, chosen, gate,
                             lambda picked: select_member_lines(table, picked, member_weight, settings["line_cap"]),
                             lambda positions: learned_hits_by_line(tokenize(text), table, positions), settings)
    decision["explanation"] = _explain(rows, found, floor, chosen, rare, gate, clusters)
    return decision


def _explain(rows, found, floor, chosen, rare, gate, clusters):
    if not rows:
        return "no prompt word (or a one-edit variant of it) is in the store"
    top = rows[0]
    words = sorted(set(top[2]) | set(top[3]), key=lambda w: (-found[w][0], w))[:6]
    shown = ", ".join(f"{w}{'~' + found[w][2] if found[w][2] != w else ''} {found[w][0]:.1f}" for w in words)
    head = f"weighted score {top[1]:.2f} (floor {floor}) for {clusters[top[0]][0]} on {shown}"
    if gate is not None:
        return f"{head}; silenced by the intent gate: a general '{gate}' request with no ownership word"
    if not chosen:
        return f"{head}: under the floor"
    if rare is not None and len(chosen) > 1 and chosen[1] == rare[2]:
        head += f"; '{rare[0]}' (one member line, weight {rare[1]:.1f}) brings {clusters[rare[2]][0]}"
    return head


def make_provider(_settings):
    def provider(request):
        return route_weighted(request["prompt"], request["table"], request["settings"])
    return provider
