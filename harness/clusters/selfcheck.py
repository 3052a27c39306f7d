"""Does the store still find itself? The build-time checks after ``clusters enrich``. Model, no printing.

- **Self-routing** (``self_routing``): each memory's own hook line, and each of its utterances,
  routed as the hook would; a hit sends that memory. Measured before and after a run, so a run
  that silences a family of prompts that routed before says so.
- **The veto's self-check** (``veto_self_check``): an utterance is something a user types when
  its memory is the one they need, so the veto must never silence a member's own utterance. A
  near-miss among the nearest negatives of a vetoed own utterance (a confused or hostile engine
  wrote a near-miss that is really a paraphrase) is dropped and named; the check repeats until
  no near-miss vetoes one (a fixed point), or fails loudly when it cannot get there.

Big stores are checked on an even sample of at most ``MAX_CHECKED`` prompts per family.
"""

from router.errors import MemoryRouterError
from router.routing.veto import describe_code

MAX_CHECKED = 3000


def _sample(items, limit=MAX_CHECKED):
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def family_prompts(index, utterances):
    """``{"hook lines": [(prompt, slug)], "utterances": [(prompt, slug)]}`` of the store."""
    hooks, said = [], []
    for cluster in index.clusters:
        for member in cluster.members:
            hooks.append((member.hook, member.slug))
            said += [(text, member.slug) for text in utterances.get(member.slug, ())]
    return {"hook lines": hooks, "utterances": said}


def sends(decision, slug):
    return any(line["slug"] == slug for line in decision.get("lines") or ())


def self_routing(index, table, settings, utterances, route):
    """``{family: {"hit": n, "total": n, "missed": [slugs, first 10]}}``; ``route(prompt, table,
    settings)`` is the hook's routing (``router.hooks.session.route_fresh``)."""
    out = {}
    for family, prompts in family_prompts(index, utterances).items():
        checked = _sample(prompts)
        missed = [slug for prompt, slug in checked if not sends(route(prompt, table, settings), slug)]
        out[family] = {"hit": len(checked) - len(missed), "total": len(checked), "missed": missed[:10]}
    return out


def lost_families(before, after):
    """The families whose share of hits fell from ``before`` to ``after`` (a run's regressions)."""
    lost = []
    for family, now in after.items():
        then = before.get(family)
        if then and then["total"] and now["total"] and now["hit"] / now["total"] < then["hit"] / then["total"]:
            lost.append(family)
    return lost


def store_tables(index):
    """``(build, route)`` for this store: ``build(utterances, near_misses)`` a routing table as the
    hook builds it (the shipped generic requests included), ``route`` the hook's routing of one
    prompt in a fresh session."""
    from router.hooks.session import route_fresh
    from router.routing.score import build_routing_table
    from router.routing.weightedtable import extend_table

    def build(utterances, near_misses):
        return extend_table(build_routing_table(index), index, utterances=utterances or None,
                            near_misses=near_misses or {})

    def route(prompt, table, settings):
        return route_fresh(prompt, table, settings, log_as="enrich")

    return build, route


def read_store_files(cluster_path):
    """``(utterances by slug, near-misses by cluster id, near-miss rows)`` of the files beside it."""
    from router.config import nearmisses_path, utterances_path
    from router.store.nearmisses import nearmisses_by_cluster, read_nearmisses
    from router.store.utterances import read_utterances, utterances_by_slug

    near_rows = read_nearmisses(nearmisses_path(cluster_path))
    return (utterances_by_slug(read_utterances(utterances_path(cluster_path))), nearmisses_by_cluster(near_rows),
            near_rows)


class SelfCheckError(MemoryRouterError):
    """The veto's self-check cannot reach its fixed point: near-misses still silence members' own
    utterances and none of them can be dropped (the store is not written as if it could)."""


def veto_self_check(index, utterances, near_misses, settings, build, route):
    """``(kept, dropped)``: the near-misses (``{cluster id: [texts]}``) with every one that vetoes
    a member's own utterance removed, and those removed (same shape). ``build(utterances,
    near_misses)`` makes a table; ``route`` as in ``self_routing``.

    Runs to a fixed point: each round drops the near-misses among the nearest negatives of every
    own utterance still vetoed, and the next round routes again without them, until no near-miss
    vetoes one. Every round that goes on drops at least one, so it ends within as many rounds as
    there are near-misses; a round that blames near-misses it cannot drop raises
    ``SelfCheckError`` rather than stop with own utterances still silenced."""
    kept = {cluster_id: list(texts) for cluster_id, texts in near_misses.items()}
    dropped = {}
    prompts = _sample(family_prompts(index, utterances)["utterances"])
    cluster_of = {m.slug: c.cluster_id for c in index.clusters for m in c.members}
    position_of = {c.cluster_id: p for p, c in enumerate(index.clusters)}
    while True:
        table = build(utterances, kept)
        blamed, silenced = set(), 0
        for prompt, slug in prompts:
            decision = route(prompt, table, settings)
            veto = decision.get("veto")
            if not veto or not veto["vetoed"]:
                continue
            top = (decision.get("scores") or [{}])[0].get("cluster_id")
            if top != cluster_of[slug] or position_of.get(top) is None:
                continue  # the veto silenced another cluster's decision, not this member's own
            named = [describe_code(code) for code in veto.get("negatives", ())]
            named = [(index.clusters[where[0]].cluster_id, where[1]) for kind, *where in named if kind == "near_miss"]
            silenced += bool(named)
            blamed.update(named)
        if not blamed:
            return kept, dropped
        droppable = [(cluster_id, number) for cluster_id, number in blamed if number < len(kept.get(cluster_id, ()))]
        if not droppable:
            raise SelfCheckError(
                f"near-misses still silence {silenced} of {len(prompts)} of the store's own utterances, and the "
                "veto names none this check can drop", fix="delete the near-misses file beside the cluster file "
                "and run memory-router clusters enrich again (or report this: it is a bug)")
        for cluster_id, number in sorted(droppable, key=lambda item: (item[0], -item[1])):
            dropped.setdefault(cluster_id, []).append(kept[cluster_id].pop(number))
