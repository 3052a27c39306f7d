"""The session model behind ``memory-router tokens report`` (a smaller index must not just move the
cost into the injections). Pure: the routing is done by the caller (``harness.tokens.report`` runs
the hook's own route and session stage, ``transcripts.replay.SessionStage``); this module only
counts.

What a session sends, as Claude Code 2.1.328 does it (../shared/spec/claude-code-2.1.328-observed.md):
the always-loaded index on every API call; a line the hook sends stays in the history, so every
later call re-sends it, until a compaction summarises the history away; the hook never sends a
line the session already holds, so once a store's lines are held, new prompts add nothing; after a
compaction the SessionStart hook sends again the lines the last prompt relied on.

Where Claude Code compacts on its own (2.1.328's bundle, read in docs/slim-and-tokens.md): when the
context reaches the model's window minus min(max output tokens, 20,000) minus a 13,000-token
buffer: 167,000 tokens of a 200,000-token window. How fast a session's context grows is the
user's, not the router's: ``CONTEXT_PER_PROMPT`` and ``BASE_CONTEXT`` were measured on real Claude
Code transcripts (below; docs/slim-and-tokens.md); a report from ``--history`` uses the sessions'
own compactions instead.
"""

import math
from typing import NamedTuple

# Claude Code 2.1.328: effective window = window - min(max output tokens, 20,000); auto-compaction at
# effective window - 13,000 (docs/slim-and-tokens.md, "When Claude Code compacts").
CONTEXT_WINDOW = 200_000
OUTPUT_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
AUTOCOMPACT_AT = CONTEXT_WINDOW - OUTPUT_RESERVE - AUTOCOMPACT_BUFFER
# The first API call's input tokens in seven real Claude Code transcripts (1.0.98 to 2.1.39; system
# prompt, tools, MEMORY.md): 15,553 to 26,818; and the growth per typed prompt of the longest
# (2.0.76: 26,818 to 180,437 tokens over 18 prompts, about 8,500). The defaults of --base-context
# and --context-per-prompt; docs/slim-and-tokens.md says how they were measured.
BASE_CONTEXT = 25_000
CONTEXT_PER_PROMPT = 8_000


class Step(NamedTuple):
    """One prompt of a modelled session, in tokens."""
    sent: int           # what the hook sends at this prompt (0: nothing new)
    calls: int          # API calls the prompt makes
    compacted: bool     # a compaction after this prompt's calls
    resent: int         # what the SessionStart hook sends again after that compaction


def cycle(values, n):
    """``values`` repeated in order until there are ``n`` of them (deterministic)."""
    if n <= 0:
        return []
    if not values:
        return [0] * n
    return [values[i % len(values)] for i in range(n)]


def spread_order(n):
    """A fixed permutation of ``range(n)`` that visits the set evenly: index ``i*s mod n``, with
    ``s`` the integer nearest ``n/φ`` that is coprime with ``n``. Suites group similar cases
    (all the silent ones first, say), so a short session in file order would sample one group
    only; any prefix of this order samples the whole set."""
    if n <= 0:
        return []
    step = max(1, round(n / ((1 + 5 ** 0.5) / 2)))
    while math.gcd(step, n) != 1:
        step += 1
    return [(i * step) % n for i in range(n)]


def run_session(count, send, compact, memory_tokens, calls_per_prompt=1, base=BASE_CONTEXT,
                per_prompt=CONTEXT_PER_PROMPT, threshold=AUTOCOMPACT_AT):
    """``count`` prompts of one session: ``send(i)`` is the tokens the hook sends at prompt ``i``
    (0-based), ``compact(i)`` what the SessionStart hook sends again after a compaction there.
    The context after a prompt is ``base`` + ``memory_tokens`` (the index) + ``per_prompt`` for
    every prompt and everything sent since the last compaction; reaching ``threshold`` compacts it
    after that prompt's calls. ``per_prompt`` 0: no compaction. Returns ``[Step]``."""
    steps = []
    context = base + memory_tokens
    for index in range(count):
        sent = send(index)
        context += per_prompt + sent
        compacted = bool(per_prompt) and context >= threshold
        resent = compact(index) if compacted else 0
        if compacted:
            context = base + memory_tokens + resent
        steps.append(Step(sent, calls_per_prompt, compacted, resent))
    return steps


def cumulative(steps, flat_tokens, slim_tokens):
    """``[(flat so far, slim so far)]`` after each step: flat sends its index on every call; slim
    its index plus everything held in the history (sent since the last compaction) on every call."""
    out = []
    flat_sum = slim_sum = held = 0
    for step in steps:
        held += step.sent
        flat_sum += flat_tokens * step.calls
        slim_sum += (slim_tokens + held) * step.calls
        out.append((flat_sum, slim_sum))
        if step.compacted:
            held = step.resent
    return out


def break_even(steps, flat_tokens, slim_tokens):
    """The first prompt (1-based) after which slim's running total exceeds flat's; ``None``."""
    for number, (flat_sum, slim_sum) in enumerate(cumulative(steps, flat_tokens, slim_tokens), 1):
        if slim_sum > flat_sum:
            return number
    return None


def first_heavier_call(steps, flat_tokens, slim_tokens):
    """The first prompt (1-based) whose calls carry more under slim (index + history) than flat."""
    held = 0
    for number, step in enumerate(steps, 1):
        held += step.sent
        if slim_tokens + held > flat_tokens:
            return number
        if step.compacted:
            held = step.resent
    return None


def session_totals(steps, flat_tokens, slim_tokens):
    """The totals of a modelled session: flat and slim input tokens for memory, what the index and
    the injections each cost, the saving, the compactions."""
    calls = sum(step.calls for step in steps)
    running = cumulative(steps, flat_tokens, slim_tokens)
    flat_total, slim_total = running[-1] if running else (0, 0)
    slim_index_total = slim_tokens * calls
    return {
        "prompts": len(steps),
        "api_calls": calls,
        "compactions": sum(1 for step in steps if step.compacted),
        "sent_tokens": sum(step.sent for step in steps),
        "flat_total": flat_total,
        "slim_total": slim_total,
        "slim_index_total": slim_index_total,
        "slim_injection_total": slim_total - slim_index_total,
        "net_saving": flat_total - slim_total,
        "saving_percent": round(100.0 * (flat_total - slim_total) / flat_total, 1) if flat_total else None,
        "share_of_flat": round(slim_total / flat_total, 3) if flat_total else None,
    }


def scenario(steps, horizon_steps, flat_tokens, slim_tokens):
    """``session_totals`` over ``steps`` (the modelled session), with the break-even and the first
    heavier call scanned over ``horizon_steps`` (the same session continued, so a crossing past
    ``--turns`` still shows)."""
    totals = session_totals(steps, flat_tokens, slim_tokens)
    totals["break_even_prompts"] = break_even(horizon_steps, flat_tokens, slim_tokens)
    totals["first_heavier_call_prompt"] = first_heavier_call(horizon_steps, flat_tokens, slim_tokens)
    totals["horizon"] = len(horizon_steps)
    return totals


# --------------------------------------------------------------------------- the worst case


def worst_lines(clusters, held, limit, max_clusters=2):
    """The most the router can send at one prompt: the ``limit`` longest lines not yet ``held``
    from at most ``max_clusters`` clusters (the weighted route's top cluster and a clear second).

    ``clusters`` is ``[(cluster_id, [(key, size, line), ...])]`` in file order, ``held`` a set of
    keys. Returns ``(cluster ids, lines)`` (cluster by cluster in file order, each longest first), or
    ``((), [])`` when every line is held. Exact for ``max_clusters`` 1 or 2: for each split of
    ``limit`` between two clusters, the best prefix of each."""
    best = {}   # k -> [(sum of the k longest free lines, cluster index, lines)], best two per k
    options = []
    for index, (cluster_id, lines) in enumerate(clusters):
        free = sorted((row for row in lines if row[0] not in held), key=lambda row: -row[1])
        options.append(free)
        total = 0
        for k, row in enumerate(free[:limit], 1):
            total += row[1]
            ranked = best.setdefault(k, [])
            ranked.append((total, -index))
            ranked.sort(reverse=True)
            del ranked[2:]
    choice, choice_size = ((), []), 0
    for k in range(1, limit + 1):
        for size_a, neg_a in best.get(k, ()):
            a = -neg_a
            picked = [(size_a, (a,), options[a][:k])]
            for j in range(1, limit - k + 1) if max_clusters > 1 else ():
                for size_b, neg_b in best.get(j, ()):
                    if -neg_b != a:
                        b = -neg_b
                        first, second = sorted(((a, k), (b, j)))
                        rows = options[first[0]][:first[1]] + options[second[0]][:second[1]]
                        picked.append((size_a + size_b, (a, b), rows))
                        break
            for size, indexes, rows in picked:
                if size > choice_size:
                    choice_size = size
                    choice = (tuple(clusters[i][0] for i in sorted(indexes)), [row[2] for row in rows])
    return choice
