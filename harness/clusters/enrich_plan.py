"""Which memories ``clusters enrich`` asks about, and the utterances file it then writes. Pure.

A memory's text is its member line's hook and, when the memory directory has its topic file, a
newline and that file's body (front matter left out); ``router.store.utterances.memory_text_hash`` of it is
written on each row. A memory is asked about again when it has no engine-written row, or when
its rows were written from another text (its hook or its topic file changed). Rows written by
hand (``memory_hash`` ``-``) are always kept, and never make a memory count as enriched. Rows of
memories that left the store are dropped (hand rows excepted: a person wrote them). ``force``
asks about every memory.

One job per cluster that has a memory to ask about: its memories to ask about, and its other
members as neighbours, so the engine can write words that tell them apart.
"""

from collections import namedtuple

from router.store.utterances import HAND_ENGINE, HAND_HASH, Utterance, memory_text_hash

MemoryText = namedtuple("MemoryText", "slug type hook body hash")
MemoryText.__doc__ = "One memory as enrich sends it: slug, type, hook, topic-file body, and the hash of hook + body."

ClusterJob = namedtuple("ClusterJob", "cluster memories neighbours near_misses", defaults=(0,))
ClusterJob.__doc__ = ("One request: the ``Cluster``, the ``MemoryText`` s to write utterances for, its "
                      "other members (``MemoryText``) as neighbours, and how many near-misses to ask (0: none).")

Plan = namedtuple("Plan", "jobs store rows dropped reasons near_rows near_reasons cluster_hashes near_dropped",
                  defaults=((), {}, {}, ()))
Plan.__doc__ = ("``jobs`` (ClusterJob, cluster-file order); ``store`` ({slug: MemoryText}, cluster-file order); "
                "``rows`` (the rows kept as they are: every row but those dropped); ``dropped`` (slugs whose "
                "rows leave because the memory left the store); ``reasons`` ({slug: why it is asked}); "
                "``near_rows`` (the near-miss rows kept), ``near_reasons`` ({cluster id: why its near-misses "
                "are asked}), ``cluster_hashes`` ({cluster id: the hash its near-misses are written from}), "
                "``near_dropped`` (clusters whose near-miss rows leave because the cluster left the store)")


def memory_text(hook, body):
    """What a memory's hash is taken of: its hook line, and a newline and its body when it has one
    (so a store without topic files hashes its hook lines alone, as benchmarks/utterancefiles.py does)."""
    return hook + "\n" + body if body else hook


def memory_texts(index, bodies):
    """``{slug: MemoryText}`` for every member of ``index`` (a ``ClusterIndex``), in file order;
    ``bodies`` is ``{slug: topic-file body}`` (a missing slug has none)."""
    texts = {}
    for cluster in index.clusters:
        for member in cluster.members:
            body = (bodies.get(member.slug) or "").strip()
            texts[member.slug] = MemoryText(member.slug, member.type, member.hook, body,
                                            memory_text_hash(memory_text(member.hook, body)))
    return texts


def is_hand_row(row):
    return row.memory_hash == HAND_HASH or row.engine == HAND_ENGINE


def why_asked(memory, rows_of_slug, force):
    """Why ``memory`` is asked about (``None``: its rows are current)."""
    written = [row for row in rows_of_slug if not is_hand_row(row)]
    if not written:
        return "new"
    if force:
        return "forced"
    if any(row.memory_hash != memory.hash for row in written):
        return "changed"
    return None


def cluster_hashes(index, store):
    """{cluster id: ``router.store.nearmisses.cluster_text_hash`` of its members' slugs and hashes}."""
    from router.store.nearmisses import cluster_text_hash

    return {c.cluster_id: cluster_text_hash([f"{m.slug}:{store[m.slug].hash}" for m in c.members])
            for c in index.clusters}


def plan_near_misses(index, hashes, near_rows, force=False, file_exists=True):
    """``(reasons, kept)``: {cluster id: why its near-misses are asked} (no near-misses file yet,
    its members or their texts changed since its rows were written, or forced) and the near-miss
    rows kept (those of clusters that left the store go, hand rows excepted). A cluster with no
    engine row in an existing file is not asked on its own (an engine that answered without
    near-misses, a /1 engine, is not asked again every run); it is asked with its memories."""
    by_cluster = {}
    for row in near_rows:
        by_cluster.setdefault(row.key, []).append(row)
    reasons = {}
    for cluster in index.clusters:
        written = [row for row in by_cluster.get(cluster.cluster_id, ()) if not is_hand_near_row(row)]
        if not written:
            if not file_exists or force:
                reasons[cluster.cluster_id] = "new"
        elif force:
            reasons[cluster.cluster_id] = "forced"
        elif any(row.text_hash != hashes[cluster.cluster_id] for row in written):
            reasons[cluster.cluster_id] = "changed"
    kept = [row for row in near_rows if row.key in hashes or is_hand_near_row(row)]
    return reasons, kept


def is_hand_near_row(row):
    return row.text_hash == HAND_HASH or row.engine == HAND_ENGINE


def plan_enrich(index, bodies, rows, force=False, near_rows=(), near_misses=0, near_file_exists=True):
    """The ``Plan`` for ``index`` with topic-file ``bodies``, the utterances file's current ``rows``
    and the near-misses file's ``near_rows``; ``near_misses``: how many to ask per cluster (0: none)."""
    store = memory_texts(index, bodies)
    by_slug = {}
    for row in rows:
        by_slug.setdefault(row.slug, []).append(row)
    reasons = {}
    for slug, memory in store.items():
        reason = why_asked(memory, by_slug.get(slug, ()), force)
        if reason:
            reasons[slug] = reason
    hashes = cluster_hashes(index, store)
    near_reasons, near_kept = plan_near_misses(index, hashes, near_rows, force, near_file_exists)
    if not near_misses:
        near_reasons = {}
    jobs = []
    for cluster in index.clusters:
        asked = [store[m.slug] for m in cluster.members if m.slug in reasons]
        wants = near_misses if cluster.cluster_id in near_reasons or asked else 0
        if asked or wants:
            neighbours = [store[m.slug] for m in cluster.members if m.slug not in reasons]
            jobs.append(ClusterJob(cluster, tuple(asked), tuple(neighbours), wants))
    dropped = sorted({row.slug for row in rows if row.slug not in store and not is_hand_row(row)})
    kept = [row for row in rows if row.slug in store or is_hand_row(row)]
    near_dropped = tuple(sorted({row.key for row in near_rows} - {row.key for row in near_kept}))
    return Plan(tuple(jobs), store, kept, dropped, reasons, near_kept, near_reasons, hashes, near_dropped)


def new_rows(memory, texts, engine, model, written):
    """Rows for ``texts`` written now for ``memory`` by ``engine``/``model``."""
    return [Utterance(memory.slug, text, memory.hash, engine, model or "-", written, 0) for text in texts]


def merge_near_rows(rows, cluster_id, fresh, cluster_order):
    """``rows`` (near-misses) with the engine rows of ``cluster_id`` replaced by ``fresh``, in
    cluster-file order, hand rows after each cluster's engine rows."""
    position = {key: i for i, key in enumerate(cluster_order)}
    kept = [row for row in rows if row.key != cluster_id or is_hand_near_row(row)] + list(fresh)
    return sorted(kept, key=lambda row: (position.get(row.key, len(position)), is_hand_near_row(row)))


def merge_rows(rows, replacements, store_order):
    """``rows`` with every engine-written row of a slug in ``replacements`` ({slug: [rows]})
    replaced by those rows; the result ordered by the store (cluster-file order), each memory's
    engine rows first, then its hand rows; hand rows of memories not in the store last, in the
    order they had. Stable: rewriting an unchanged file gives the same bytes."""
    position = {slug: i for i, slug in enumerate(store_order)}
    engine_rows, hand_rows, orphans = {}, {}, []
    for row in rows:
        if is_hand_row(row):
            if row.slug in position:
                hand_rows.setdefault(row.slug, []).append(row)
            else:
                orphans.append(row)
        elif row.slug not in replacements:
            engine_rows.setdefault(row.slug, []).append(row)
    for slug, fresh in replacements.items():
        engine_rows[slug] = list(fresh)
    out = []
    for slug in store_order:
        out += engine_rows.get(slug, [])
        out += hand_rows.get(slug, [])
    # engine rows of a slug not in the store are the plan's to drop; keep any the caller passed
    out += [row for slug in sorted(set(engine_rows) - set(position)) for row in engine_rows[slug]]
    return out + orphans
