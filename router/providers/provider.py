"""Routing providers: who decides what a prompt gets, behind one fail-safe call.

A provider is made by a factory, ``factory(settings) -> provider``, and a provider is a callable
``provider(request) -> decision``. The request is a plain dict:

    prompt        the prompt text
    cwd           the payload's cwd (or None)
    session_id    the payload's session_id (or None)
    table         the routing table of the cluster file (``router.routing.score.build_routing_table``
                  plus what ``build_table`` adds; ``table["clusters"][position]`` is
                  ``(cluster_id, tags, label, ((slug, type, hook), ...))``)
    cluster_file  the cluster file's path (or None)
    settings      the routing settings (``router.config.DEFAULTS`` plus the config file's)

and the decision is a plain dict:

    clusters      list of cluster ids to inject (empty: inject nothing)
    lines         list of {"cluster_id", "slug", "hook"} (every cluster_id among ``clusters``)
    confidence    a number in [0, 1]
    explanation   a short string saying why (shown by ``route --json``)

Built-ins (``BUILTINS``): ``null`` never injects; ``spec`` is spec §10's scorer
(``router.routing.score``, unchanged: the reference); ``weighted`` is the default (``router.routing.weighted``).
Anything else is ``package.module:factory``, run in a child interpreter under
``provider_timeout_ms`` (start-up, import, factory and call together; ``router.providers.providerproc``),
so it cannot write to the hook's stdout, exit the hook or keep it past the budget. Its request's
table holds ``clusters`` only, and its decision comes back as JSON. An import error, an
exception, a malformed decision, an exit or an overrun ends in silence and one line in
``$MEMORY_ROUTER_LOG``. Its lines go through the same line cap and size cap as the built-ins'.

Standard library only: this is on the hook's path. ``router.providers.providerproc`` (and ``subprocess``
with it) is imported only when a custom provider runs.
"""

from router.config import DEFAULTS
from router.hookio import log_diagnostic
from router.providername import ProviderError
from router.routing.score import render_context, route_prompt

DECISION_KEYS = ("clusters", "lines", "confidence", "explanation")
# Turns Claude Code makes itself and still runs UserPromptSubmit for, with a payload like a typed
# prompt's (observed, 2.1.293 and 2.1.328: a background agent's <task-notification> when it
# finishes). Nobody asked anything, so no provider is asked: routing the agent's report back to it
# would inject memory at no prompt (the transcript audit's check b). Here, not in the hook, so
# `route`, the MCP tools and the canaries say what the hook does.
SYSTEM_TURN_PREFIXES = ("<task-notification>",)
# The route --json keys a decision from a provider without scores gets filled in with.
_SCORELESS = {"prompt_tokens": [], "scores": [], "floor": 0, "top_score": 0, "second_score": 0,
              "margin_over_floor": 0, "lead_over_second": 0}


# --------------------------------------------------------------------------- built-ins


def _null_factory(_settings):
    def provider(_request):
        return {"clusters": [], "lines": [], "confidence": 0.0, "explanation": "the null provider never injects"}
    return provider


def score_confidence(top, floor):
    """A score turned into [0, 1]: 0.5 exactly at the floor, towards 1 as the lead grows."""
    if top <= 0:
        return 0.0
    if floor <= 0:
        return 1.0
    return top / (top + floor)


def _spec_factory(_settings):
    def provider(request):
        decision = route_prompt(request["prompt"], request["table"], request["settings"])
        decision["clusters"] = list(decision["routed"])
        decision["confidence"] = score_confidence(decision["top_score"], decision["floor"])
        if decision["routed"]:
            top = decision["scores"][0]
            decision["explanation"] = (
                f"spec §10 score {top['score']} (floor {decision['floor']}) for {top['cluster_id']}: "
                f"tag hits {', '.join(top['tag_hits']) or '-'}; member hits {', '.join(top['member_hits']) or '-'}")
        elif decision["scores"]:
            decision["explanation"] = (f"top score {decision['top_score']} is under the floor {decision['floor']}")
        else:
            decision["explanation"] = "no prompt word is a tag or member word of any cluster"
        return decision
    return provider


def _weighted_factory(settings):
    from router.routing.weighted import make_provider

    return make_provider(settings)


_BUILTIN_FACTORIES = {"null": _null_factory, "spec": _spec_factory, "weighted": _weighted_factory}


def build_table(index, learned_terms=None, word_frequency=None, beside=True):
    """The routing table every built-in reads: spec §10's postings plus the weighted provider's
    (``learned_terms``: {member slug: extra words}; ``word_frequency``: see ``router.routing.priors``;
    both explained in ``router.routing.weightedtable.extend_table``). ``beside=False``: without
    the utterances and near-misses files beside the index's cluster file (the cluster file alone)."""
    from router.routing.score import build_routing_table
    from router.routing.weightedtable import BESIDE, extend_table

    return extend_table(build_routing_table(index), index, learned_terms, word_frequency,
                        utterances=BESIDE if beside else None)


# --------------------------------------------------------------------------- loading


def load_factory(name):
    """The factory named by ``name`` (a built-in or ``package.module:factory``).

    Raises ``ProviderError`` for a malformed name, a module that does not import (whatever it
    raises while importing) or a missing or non-callable attribute.
    """
    if name in _BUILTIN_FACTORIES:
        return _BUILTIN_FACTORIES[name]
    from router.providers.providerproc import load_custom_factory

    return load_custom_factory(name)


def make_provider(name, settings):
    provider = load_factory(name)(settings)
    if not callable(provider):
        raise ProviderError(f"provider {name}: the factory returned {type(provider).__name__}, not a callable")
    return provider


# --------------------------------------------------------------------------- checking


def _is_text(value):
    return isinstance(value, str)


def check_decision(decision):
    """Raise ``ProviderError`` naming the first way ``decision`` breaks the contract."""
    if not isinstance(decision, dict):
        raise ProviderError(f"decision is {type(decision).__name__}, not a dict")
    missing = [key for key in DECISION_KEYS if key not in decision]
    if missing:
        raise ProviderError(f"decision lacks {', '.join(missing)}")
    clusters = decision["clusters"]
    if not isinstance(clusters, (list, tuple)) or not all(_is_text(c) and c for c in clusters):
        raise ProviderError("decision 'clusters' is not a list of cluster ids")
    lines = decision["lines"]
    if not isinstance(lines, (list, tuple)):
        raise ProviderError("decision 'lines' is not a list")
    chosen = set(clusters)
    for number, line in enumerate(lines):
        if not isinstance(line, dict) or not all(_is_text(line.get(k)) for k in ("cluster_id", "slug", "hook")):
            raise ProviderError(f"decision line {number} is not {{cluster_id, slug, hook}} strings")
        if line["cluster_id"] not in chosen:
            raise ProviderError(f"decision line {number} belongs to {line['cluster_id']!r}, not a chosen cluster")
    confidence = decision["confidence"]
    if (isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or confidence != confidence
            or not 0 <= confidence <= 1):
        raise ProviderError(f"decision 'confidence' is {confidence!r}, not a number in [0, 1]")
    if not _is_text(decision["explanation"]):
        raise ProviderError("decision 'explanation' is not a string")


def silent_decision(provider, explanation, confidence=0.0):
    decision = dict(_SCORELESS, routed=[], lines=[], total_member_lines=0, size_capped_lines=0, additional_context=None,
                    clusters=[], confidence=confidence, explanation=explanation)
    decision["provider"] = provider
    return decision


def _kept_line(line):
    kept = {"cluster_id": line["cluster_id"], "slug": line["slug"], "hook": line["hook"]}
    hits = line.get("learned_hits")
    if isinstance(hits, (list, tuple)) and hits and all(_is_text(word) for word in hits):
        kept["learned_hits"] = list(hits)
    return kept


def _complete(decision, settings, provider, render):
    """The route --json shape of a checked decision; ``render`` re-renders the text under the caps."""
    out = dict(_SCORELESS)
    out.update(decision)
    clusters = list(decision["clusters"])
    lines = [_kept_line(l) for l in decision["lines"]]
    if render or "additional_context" not in decision:
        total = len(lines)
        lines = lines[: settings["line_cap"]]
        text = None
        size_capped = 0
        if clusters and lines:
            text, kept = render_context(clusters, [(None, None, l["slug"], l["hook"]) for l in lines], total,
                                        settings["max_context_chars"])
            size_capped = len(lines) - kept
            lines = lines[:kept]
        out["additional_context"] = text
        out["total_member_lines"] = total
        out["size_capped_lines"] = size_capped
    out["lines"] = lines
    out["clusters"] = clusters
    out["routed"] = clusters if out["additional_context"] is not None else []
    out["confidence"] = float(decision["confidence"])
    out["provider"] = provider
    minimum = settings.get("min_confidence", 0.0)
    if out["additional_context"] is not None and out["confidence"] < minimum:
        return silent_decision(provider, f"confidence {out['confidence']:.3f} is under min_confidence {minimum} "
                                         f"({decision['explanation']})", out["confidence"])
    return out


def route(prompt, table, settings, cwd=None, session_id=None, cluster_file=None, log_as="hook"):
    """Route one prompt through the configured provider; never raises for a provider's fault.

    Returns the ``route --json`` decision dict (``routed``, ``lines``, ``additional_context``,
    scores where the provider has them) plus ``provider``, ``clusters``, ``confidence`` and
    ``explanation``. A custom provider that fails in any way gives a silent decision whose
    explanation says why, and one line in ``$MEMORY_ROUTER_LOG``.
    """
    name = settings.get("provider") or DEFAULTS["provider"]
    # The head only: lstrip() of a pasted 5 MB prompt would copy all of it.
    if prompt[:256].lstrip().startswith(SYSTEM_TURN_PREFIXES):
        return silent_decision(name, "a turn Claude Code made itself (a <task-notification>), not a prompt: "
                                     "nothing is routed")
    request = {"prompt": prompt, "cwd": cwd, "session_id": session_id, "table": table,
               "cluster_file": cluster_file, "settings": settings}
    if name in _BUILTIN_FACTORIES:
        decision = _BUILTIN_FACTORIES[name](settings)(request)
        check_decision(decision)
        return _complete(decision, settings, name, render=False)
    from router.providers.providerproc import run_provider

    try:
        decision = run_provider(name, request, settings["provider_timeout_ms"] / 1000)
        try:
            check_decision(decision)
        except ProviderError as err:
            raise ProviderError(f"provider {name}: {err}") from None
    except ProviderError as err:
        log_diagnostic(log_as, f"{err}; injecting nothing")
        return silent_decision(name, f"failed: {err}")
    return _complete(decision, settings, name, render=True)
