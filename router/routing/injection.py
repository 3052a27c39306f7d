"""Which of a routing decision's member lines a prompt is sent, and the text that carries them
(issue 13's line selection). Pure.

Whatever decided *which clusters* (``router.routing.score`` or a provider) hands over their member lines;
this decides *which of them* to send now:

1. Rank the lines by evidence for this prompt (``rank_lines``) and keep the best
   ``lines_per_injection`` (0: no limit beyond ``line_cap``) among those with at least
   ``line_evidence_share`` of the best line's evidence (a line far behind the best is noise).
2. Drop the lines the session already holds (``plan_injection``, given their ``line_key``s).
   When every kept line is held, nothing is injected. (A one-line pointer, ``pointer_text``, was
   measured against silence by ``benchmarks/session_sim.py --pointer``: it adds bytes to every
   later request and puts no fact in front of the model that is not already there, so silence
   is the default.)

Apart from ``router.hooks.session``, which remembers what a session holds, because none of this needs
that memory: it takes the held lines as a set, so the canaries, ``route`` and the session
simulation run the same selection as the hook.

Standard library only, plain dicts and tuples: this is on the hook's path.
"""

import zlib

from router.routing.score import HEADER_PLURAL, HEADER_SINGLE, prompt_for_scoring
from router.tokens import slug_words, tokenize


def line_key(slug, hook):
    """What identifies a sent line: its slug and its exact text (an edited hook is a new line)."""
    data = hook.encode("utf-8", "surrogatepass")
    return f"{slug}|{len(data)}:{zlib.crc32(data):08x}:{zlib.adler32(data):08x}"


def rank_lines(prompt_tokens, lines):
    """``lines`` (dicts with ``slug`` and ``hook``) best first by evidence for the prompt.

    Evidence of a line = sum over the prompt's tokens among the line's words (slug words, hook
    tokens and the learned and utterance words a provider says the prompt reached it by,
    ``learned_hits`` and ``utterance_hits``) of
    1 / (how many of the candidate lines hold that token): a word every line of the cluster
    shares says little about which line the prompt needs. Ties keep the decision's order
    (cluster rank, then file order). Returns a list of (evidence, original index, line).
    """
    words = [slug_words(line["slug"]) | tokenize(line["hook"]) | set(line.get("learned_hits", ()))
             | set(line.get("utterance_hits", ())) for line in lines]
    frequency = {}
    for line_words in words:
        for token in line_words & prompt_tokens:
            frequency[token] = frequency.get(token, 0) + 1
    ranked = []
    for index, line_words in enumerate(words):
        evidence = sum(1.0 / frequency[token] for token in sorted(line_words & prompt_tokens))  # seed-free sum
        ranked.append((evidence, index, lines[index]))
    ranked.sort(key=lambda row: (-row[0], row[1]))
    return ranked


def plan_injection(decision, prompt, settings, held=frozenset()):
    """Which of ``decision``'s lines to send now. Pure.

    ``decision`` is a routing decision (``route_prompt``'s dict or a provider's): ``routed``
    cluster ids, ``lines`` (``{cluster_id, slug, hook}``) and ``total_member_lines``. ``held`` is
    the set of ``line_key``s the session already holds. Returns a dict:

        clusters      the routed cluster ids (unchanged: this stage never re-routes)
        chosen        the lines the prompt needs, best first (at most lines_per_injection)
        lines         the chosen lines not yet held, in the decision's order: what is sent
        held          the chosen lines already held (not sent again)
        left_out      member lines of the routed clusters neither sent nor held
        text          the additionalContext, or None when nothing new is to be sent
        keys          the ``line_key`` of each line sent (what the session will hold)
    """
    clusters = list(decision.get("routed") or ())
    lines = list(decision.get("lines") or ())
    limit = settings.get("lines_per_injection", 0)
    share = settings.get("line_evidence_share", 0)
    if not clusters or not lines:
        return {"clusters": clusters, "chosen": [], "lines": [], "held": [], "left_out": 0, "text": None, "keys": []}
    tokens = tokenize(prompt_for_scoring(prompt, settings.get("max_prompt_chars", 0)))
    reached = decision.get("utterance_hits")
    if reached:
        # The provider's word of which prompt words met each member's utterances (by slug: the
        # route --json shape); the lines themselves carry only the cluster file's text.
        lines = [dict(line, utterance_hits=reached[line["slug"]]) if line["slug"] in reached else line
                 for line in lines]
    ranked = rank_lines(tokens, lines)
    if share and ranked[0][0] > 0:
        ranked = [row for row in ranked if row[0] >= share * ranked[0][0]]
    if limit and len(ranked) > limit:
        ranked = ranked[:limit]
    chosen = [row[2] for row in ranked]
    order = sorted(ranked, key=lambda row: row[1])
    keyed = [(line_key(row[2]["slug"], row[2]["hook"]), row[2]) for row in order]
    fresh = [line for key, line in keyed if key not in held]
    already = [line for key, line in keyed if key in held]
    total = max(decision.get("total_member_lines") or 0, len(lines))
    text = None
    sent = []
    if fresh:
        text, sent = render_injection(clusters, fresh, len(already), total, settings.get("max_context_chars", 9500),
                                      size_capped=bool(decision.get("size_capped_lines")))
    left_out = total - len(sent) - len(already)
    keys = [key for key, line in keyed if key not in held][:len(sent)]
    return {"clusters": clusters, "chosen": chosen, "lines": sent, "held": already, "left_out": left_out,
            "text": text, "keys": keys}


def render_injection(clusters, lines, held_count, total, max_chars, size_capped=False):
    """The injected text: a header naming the clusters, how many lines are already in the
    session and how many were left out, then ``- <slug> — <hook>`` lines. Whole lines are
    dropped from the end until it fits ``max_chars``. Returns (text, lines kept).

    The header says "size cap" when this render dropped lines, or when ``size_capped`` says the
    routing decision's own size cap already had (those lines never reach this stage).

    The header starts as ``router.routing.score``'s does, so ``parse_header`` (the audit) reads it.
    """
    body = [f"- {line['slug']} \u2014 {line['hook']}" for line in lines]
    base = (HEADER_PLURAL if len(clusters) > 1 else HEADER_SINGLE) + ", ".join(clusters)
    kept = len(body)
    while True:
        # Short on purpose: the header rides along in every later request of the session.
        notes = []
        left_out = total - kept - held_count
        if left_out > 0:
            notes.append(f"{left_out} more not shown" + ("" if kept == len(body) and not size_capped else ", size cap"))
        if held_count:
            notes.append(f"{held_count} sent earlier")
        header = base + (f" ({'; '.join(notes)})" if notes else "")
        text = "\n".join([header] + body[:kept])
        if len(text) <= max_chars or kept == 0:
            return (text if kept else None), lines[:kept]
        kept -= 1


def pointer_text(clusters, held_count):
    """The one-line pointer the hook could send when every chosen line is held (measured, not
    used by default: see the module docstring)."""
    base = (HEADER_PLURAL if len(clusters) > 1 else HEADER_SINGLE) + ", ".join(clusters)
    return f"{base} ({held_count} relevant member line{'s' if held_count != 1 else ''} already sent above)"
