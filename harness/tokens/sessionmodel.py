"""The session model behind ``memory-router tokens report`` (a smaller index must not just move the
cost into the injections): a flat index is sent on every API call; a slim index is sent on every
API call *and* each routed injection, once inserted at its prompt, stays in the history, so every
later call of the session re-sends it. Totals, break-even points and scenarios, in exact
fractions where a constant injection size allows. Pure."""

import math


def cycle(values, n):
    """``values`` repeated in order until there are ``n`` of them (deterministic)."""
    if n <= 0:
        return []
    if not values:
        return [0] * n
    return [values[i % len(values)] for i in range(n)]


def spread_order(n):
    """A fixed permutation of ``range(n)`` that visits the suite evenly: index ``i*s mod n``, with
    ``s`` the integer nearest ``n/φ`` that is coprime with ``n``. Suites group similar cases
    (all the silent ones first, say), so a short session cycled in file order would sample one
    group only; any prefix of this order samples the whole suite."""
    if n <= 0:
        return []
    step = max(1, round(n / ((1 + 5 ** 0.5) / 2)))
    while math.gcd(step, n) != 1:
        step += 1
    return [(i * step) % n for i in range(n)]


def session_totals(flat_tokens, slim_tokens, injections, calls_per_prompt=1):
    """Input tokens of a session of ``len(injections)`` prompts, each making ``calls_per_prompt``
    API calls.

    flat = flat_tokens on every call.
    slim = slim_tokens on every call + each prompt's injection on every call from its own prompt
           to the end of the session (it stays in the history that later calls re-send).
    """
    n = len(injections)
    k = calls_per_prompt
    flat_total = flat_tokens * n * k
    slim_index_total = slim_tokens * n * k
    injection_total = sum(size * (n - i) * k for i, size in enumerate(injections))
    slim_total = slim_index_total + injection_total
    return {
        "prompts": n,
        "calls_per_prompt": k,
        "api_calls": n * k,
        "flat_total": flat_tokens * n * k,
        "slim_total": slim_total,
        "slim_index_total": slim_index_total,
        "slim_injection_total": injection_total,
        "net_saving": flat_total - slim_total,
        "saving_percent": round(100.0 * (flat_total - slim_total) / flat_total, 1) if flat_total else None,
    }


def cumulative_totals(flat_tokens, slim_tokens, injections, calls_per_prompt=1):
    """``[(flat_so_far, slim_so_far)]`` after each prompt: the running session totals."""
    out = []
    flat_sum = slim_sum = 0
    history = 0
    for size in injections:
        history += size
        flat_sum += flat_tokens * calls_per_prompt
        slim_sum += (slim_tokens + history) * calls_per_prompt
        out.append((flat_sum, slim_sum))
    return out


def break_even_prompts(flat_tokens, slim_tokens, injections):
    """The session length (in prompts) from which slim's total exceeds flat's, scanning the given
    sequence; ``None`` if slim stays at or below flat throughout. Independent of calls per prompt,
    which scales both sides alike."""
    for p, (flat_sum, slim_sum) in enumerate(cumulative_totals(flat_tokens, slim_tokens, injections), 1):
        if slim_sum > flat_sum:
            return p
    return None


def first_heavier_call(flat_tokens, slim_tokens, injections):
    """The first prompt whose API calls carry more under slim than under flat (slim index plus
    every injection so far > flat index); ``None`` if none does within the sequence."""
    history = 0
    for p, size in enumerate(injections, 1):
        history += size
        if slim_tokens + history > flat_tokens:
            return p
    return None


def break_even_constant(flat_tokens, slim_tokens, injection):
    """Closed form of ``break_even_prompts`` when every prompt injects ``injection`` tokens.

    Slim's total after p prompts exceeds flat's when s + m(p+1)/2 > f, i.e. p > 2(f-s)/m - 1;
    the smallest such p is floor(2(f-s)/m), at least 1. ``None`` when it never happens.
    """
    from fractions import Fraction

    f, s, m = Fraction(flat_tokens), Fraction(slim_tokens), Fraction(injection)
    if m <= 0:
        return 1 if s > f else None
    return max(1, math.floor(2 * (f - s) / m))


def heavier_call_constant(flat_tokens, slim_tokens, injection):
    """Closed form of ``first_heavier_call`` for a constant injection: smallest p with s + mp > f."""
    from fractions import Fraction

    f, s, m = Fraction(flat_tokens), Fraction(slim_tokens), Fraction(injection)
    if m <= 0:
        return 1 if s > f else None
    return max(1, math.floor((f - s) / m) + 1)


def session_scenarios(flat_tokens, slim_tokens, injection_tokens, turns, calls_per_prompt=1):
    """The modelled session three ways over ``turns`` prompts.

    - ``suite_cycled``: the suite's per-prompt injections in ``spread_order``, cycled;
    - ``typical``: every prompt injects the suite's mean;
    - ``worst``: every prompt injects the suite's largest injection.
    Break-even and the first heavier call are exact for the constant scenarios (closed form, any
    session length) and scanned over ``max(turns, 10 x len(suite))`` prompts for the cycled one.
    """
    from fractions import Fraction

    # The mean is kept as an exact fraction so the closed forms never round the wrong way.
    mean = Fraction(sum(injection_tokens), len(injection_tokens)) if injection_tokens else Fraction(0)
    worst = max(injection_tokens) if injection_tokens else 0
    horizon = max(turns, 10 * len(injection_tokens))
    spread = [injection_tokens[i] for i in spread_order(len(injection_tokens))]
    cycled_long = cycle(spread, horizon)
    scenarios = {}
    for name, per_prompt, sequence in (
        ("suite_cycled", None, cycle(spread, turns)),
        ("typical", mean, [mean] * turns),
        ("worst", worst, [worst] * turns),
    ):
        totals = session_totals(flat_tokens, slim_tokens, sequence, calls_per_prompt)
        if per_prompt is None:
            totals["injection_tokens_per_prompt"] = "suite, spread order, cycled"
            totals["break_even_prompts"] = break_even_prompts(flat_tokens, slim_tokens, cycled_long)
            totals["break_even_horizon"] = horizon
            totals["first_heavier_call_prompt"] = first_heavier_call(flat_tokens, slim_tokens, cycled_long)
        else:
            totals["injection_tokens_per_prompt"] = _plain(per_prompt)
            totals["break_even_prompts"] = break_even_constant(flat_tokens, slim_tokens, per_prompt)
            totals["first_heavier_call_prompt"] = heavier_call_constant(flat_tokens, slim_tokens, per_prompt)
        for key in ("flat_total", "slim_total", "slim_index_total", "slim_injection_total", "net_saving"):
            totals[key] = _plain(totals[key])
        scenarios[name] = totals
    return scenarios


def _plain(value):
    """An int stays an int; a fraction becomes an int when whole, else a float to one decimal."""
    from fractions import Fraction

    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else round(float(value), 1)
    return value
