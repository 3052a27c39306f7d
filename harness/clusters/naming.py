"""``clusters build --engine E``: the engine names each built cluster (id, label, tags) through
the ``memory-router.label/1`` request, and the names are applied under the builder's rules. Pure.

What the engine may change, and what it may not:

- **ids**: a cluster whose id carried over from the previous file (members mostly the same) or
  that a labels file names keeps it: canary suites, learned terms and people refer to it. Every
  other cluster takes the engine's id (``layer1_`` added) unless it is malformed or another
  cluster's, old or new; then the builder's fresh id stays.
- **labels**: the labels file's label wins; then a label carried over from the previous file;
  then the engine's; then the builder's (empty).
- **tags**: the engine's, each a single word that is neither an everyday word (the builder's
  ``GENERIC_WORDS``: a tag hit alone reaches the router's score floor, so a tag any chat prompt
  contains would prime unrelated prompts), a type word, nor another cluster's tag (first
  cluster in file order keeps it); filled up to ``MIN_TAGS`` with the builder's own tags; the
  labels file's tags and aliases are appended as the builder appends them.
"""

from collections import namedtuple

from harness.clusters.enrich_plan import memory_texts
from harness.clusters.enrich_answers import check_label_answer
from harness.clusters.enrich_protocol import MIN_TAGS, MAX_TAGS, label_request
from router.store.clusterfile import ClusterIndex
from router.tokens import tokenize

NamingJob = namedtuple("NamingJob", "cluster request")


def is_everyday(word):
    """True for a word the builder never makes a tag (everyday English, generic programming
    words, the type words), an inflection of one (``working``, ``failed``: the builder's list
    holds ``work`` and ``fail``), or a word that tokenizes to nothing (a stop word)."""
    from router.stem import stem

    words, stems = _banned()
    tokens = tokenize(word)
    return not tokens or any(t in words or stem(t) in stems for t in tokens)


_BANNED = []


def _banned():
    if not _BANNED:
        from harness.clusters.clustering import GENERIC_WORDS, TYPE_PREFIXES
        from router.stem import stem

        words = GENERIC_WORDS | set(TYPE_PREFIXES)
        _BANNED.append((words, frozenset(stem(w) for w in words)))
    return _BANNED[0]


def naming_jobs(index, bodies, old_ids=()):
    """One ``memory-router.label/1`` request per cluster of a built ``index``."""
    texts = memory_texts(index, bodies)
    taken = set(old_ids) | set(index.cluster_ids)
    jobs = []
    for cluster in index.clusters:
        memories = [texts[m.slug] for m in cluster.members]
        jobs.append(NamingJob(cluster, label_request(cluster, memories, taken - {cluster.cluster_id})))
    return jobs


# The note of an answer with nothing usable: the request counts as failed (clusters build exits 1).
NAMES_REFUSED = "names refused: "


def apply_names(index, answers, keep_ids=(), labels=None, old_ids=()):
    """``(ClusterIndex, {cluster id as built: [note, ...]})``: ``index`` with the engine's
    ``answers`` ({cluster id as built: parsed answer}) applied under the rules above; a cluster
    without an answer (its request failed) keeps what the builder gave it."""
    named = labels.by_id() if labels is not None else {}
    keep = set(keep_ids) | set(named)
    # every id of the build is taken from the start: a cluster whose request failed keeps its
    # builder id, and no other cluster's new name may collide with it
    taken = set(old_ids) | set(named) | set(index.cluster_ids)
    claimed = set()
    clusters, notes = [], {}
    for cluster in index.clusters:
        said = notes.setdefault(cluster.cluster_id, [])
        answer = answers.get(cluster.cluster_id)
        if answer is None:
            clusters.append(cluster)
            claimed |= set(cluster.tags)
            taken.add(cluster.cluster_id)
            continue
        check = check_label_answer(answer, taken - {cluster.cluster_id}, is_everyday, claimed)
        said += check.notes
        if check.refused:
            said.append(f"{NAMES_REFUSED}{check.refused}; the builder's are kept")
            clusters.append(cluster)
            claimed |= set(cluster.tags)
            taken.add(cluster.cluster_id)
            continue
        cluster_id = cluster.cluster_id
        if cluster_id not in keep and check.cluster_id:
            cluster_id = check.cluster_id
        elif cluster_id in keep and check.cluster_id and check.cluster_id != cluster_id:
            said.append(f"id {cluster_id} kept (carried over or named in the labels file)")
        taken.add(cluster_id)
        entry = named.get(cluster_id)
        extras = list(entry.tags + entry.aliases) if entry is not None else []
        label = cluster.label or check.label or ""
        if entry is not None and entry.label:
            label = entry.label
        tags = [t for t in check.tags if t not in claimed][:MAX_TAGS]
        for own in cluster.tags:
            if len(tags) >= MIN_TAGS:
                break
            if own not in tags and own not in claimed and own not in extras and not is_everyday(own):
                tags.append(own)
        tags += [extra for extra in extras if extra not in tags]
        claimed |= set(tags)
        clusters.append(cluster._replace(cluster_id=cluster_id, label=label, tags=tuple(tags)))
    clusters.sort(key=lambda c: c.cluster_id)
    return ClusterIndex(clusters), notes


def renamed(before, after):
    """``{old id: new id}`` for the clusters whose id the names changed (matched by members)."""
    owner = {m.slug: c.cluster_id for c in after.clusters for m in c.members}
    return {c.cluster_id: owner[c.members[0].slug] for c in before.clusters
            if c.members and owner[c.members[0].slug] != c.cluster_id}
