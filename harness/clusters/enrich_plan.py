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

ClusterJob = namedtuple("ClusterJob", "cluster memories neighbours")
ClusterJob.__doc__ = ("One request: the ``Cluster``, the ``MemoryText`` s to write utterances for, and its "
                      "other members (``MemoryText``) as neighbours.")

Plan = namedtuple("Plan", "jobs store rows dropped reasons")
Plan.__doc__ = ("``jobs`` (ClusterJob, cluster-file order); ``store`` ({slug: MemoryText}, cluster-file order); "
                "``rows`` (the rows kept as they are: every row but those dropped); ``dropped`` (slugs whose "
                "rows leave because the memory left the store); ``reasons`` ({slug: why it is asked})")


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


def plan_enrich(index, bodies, rows, force=False):
    """The ``Plan`` for ``index`` with topic-file ``bodies`` and the file's current ``rows``."""
    store = memory_texts(index, bodies)
    by_slug = {}
    for row in rows:
        by_slug.setdefault(row.slug, []).append(row)
    reasons = {}
    for slug, memory in store.items():
        reason = why_asked(memory, by_slug.get(slug, ()), force)
        if reason:
            reasons[slug] = reason
    jobs = []
    for cluster in index.clusters:
        asked = [store[m.slug] for m in cluster.members if m.slug in reasons]
        if asked:
            neighbours = [store[m.slug] for m in cluster.members if m.slug not in reasons]
            jobs.append(ClusterJob(cluster, tuple(asked), tuple(neighbours)))
    dropped = sorted({row.slug for row in rows if row.slug not in store and not is_hand_row(row)})
    kept = [row for row in rows if row.slug in store or is_hand_row(row)]
    return Plan(tuple(jobs), store, kept, dropped, reasons)


def new_rows(memory, texts, engine, model, written):
    """Rows for ``texts`` written now for ``memory`` by ``engine``/``model``."""
    return [Utterance(memory.slug, text, memory.hash, engine, model or "-", written, 0) for text in texts]


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
