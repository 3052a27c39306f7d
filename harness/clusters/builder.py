"""Build a cluster file from memories: zero-AI, deterministic clustering, tags, ids, labels. Pure.

Pipeline (docs/builder.md explains each choice and the measurements behind it):

1. **Terms.** A member's terms are the router's own tokens (``router.tokens.tokenize``) of its
   slug words and of its hook, so the tags chosen here are words the router can match. A leading
   type word in the slug (``feedback_``, ``env_``...) is left out: it says what kind of memory
   it is, not what it is about. The member's type itself is never used, so a store read from a
   flat index (types inferred) clusters exactly like the same store read from its files.
2. **Weights.** Each term weighs its inverse document frequency, ``ln(n / df)``; a member is the
   unit-length vector of its terms' weights (TF-IDF with set-valued term frequency).
3. **Clusters.** Average-linkage agglomerative clustering on cosine similarity, stopped at the
   target count, never merging past the size ceiling (so a cluster above it is split by
   construction), never joining clusters that share no term, and never merging two clusters
   pinned to different ids by the labels file. Members are sorted by slug first, ties break on
   member order and similarities are rounded, so the result depends neither on input order nor
   on hash seeds or float noise.
4. **Tags.** Per cluster, the terms its members use that best tell it apart from the others
   (in-cluster document frequency x IDF x the share of the term's uses inside the cluster,
   doubled for slug words); a term is a tag of at most one cluster; terms used by two or more
   members come first; everyday words (``GENERIC_WORDS``) never become tags, because a tag hit
   alone reaches the router's score floor.
5. **Ids.** Old and new clusters are matched by the Jaccard overlap of their member sets
   (>= 0.5, greedy by best overlap), so a rebuild keeps the old id; a pinned cluster takes its
   pin's id; any other cluster gets a fresh ``layer1_<tag>_<tag>`` id that no old id, pin or
   label entry uses.

Steps 1-4 are in ``harness.clusters.clustering``, the labels file in ``harness.clusters.labels``; this module
matches ids, assembles the ``BuildResult`` and reports what changed and how members self-route.
"""

import re
from dataclasses import dataclass, field

from harness.clusters.clustering import (
    COST_DIGITS,
    DEFAULT_MAX_SIZE,
    agglomerate,
    choose_tags,
    default_target,
    document_frequencies,
    idf_weights,
    member_terms,
    place_new_members,
    slug_topic_words,
    surface_forms,
    unit_vector,
)
from harness.clusters.labels import Labels, check_labels
from router.store.clusterfile import Cluster, ClusterIndex, Member
from router.errors import InputError
from router.tokens import tokenize

MATCH_JACCARD = 0.5
ID_PREFIX = "layer1_"


# --------------------------------------------------------------------------- ids


def jaccard(a, b):
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def match_ids(old_groups, new_groups, threshold=MATCH_JACCARD, reserved=()):
    """``{new group position: old id}`` for old and new member sets that overlap enough.

    ``old_groups`` is ``{old id: set of slugs}``, ``new_groups`` a list of sets. Pairs at or above
    ``threshold`` Jaccard are taken greedily, best first (then larger overlap, then old id, then
    position), each old id and each new group at most once. ``reserved`` old ids are not offered.
    """
    pairs = []
    for old_id in sorted(old_groups):
        if old_id in reserved:
            continue
        old = old_groups[old_id]
        for position, new in enumerate(new_groups):
            score = jaccard(old, new)
            if score >= threshold:
                pairs.append((-round(score, COST_DIGITS), -len(old & new), old_id, position))
    pairs.sort()
    taken_old, result = set(), {}
    for _score, _overlap, old_id, position in pairs:
        if old_id in taken_old or position in result:
            continue
        taken_old.add(old_id)
        result[position] = old_id
    return result


def fresh_id(tags, taken, fallback="cluster"):
    """``layer1_<first two tags>`` (or ``layer1_<fallback>``), made unique against ``taken``."""
    words = "_".join(re.sub(r"[^a-z0-9]+", "_", t.lower()).strip("_") for t in tags[:2])
    words = re.sub(r"_+", "_", words).strip("_") or fallback
    base = ID_PREFIX + words[:40].rstrip("_")
    candidate, counter = base, 2
    while candidate in taken:
        candidate = f"{base}_{counter}"
        counter += 1
    return candidate


# --------------------------------------------------------------------------- the build


@dataclass(frozen=True)
class BuildResult:
    index: ClusterIndex
    target: int
    max_size: int
    carried: dict = field(default_factory=dict)      # new id -> Jaccard with the old cluster it continues
    warnings: tuple = ()


def build_clusters(memories, target=None, max_size=DEFAULT_MAX_SIZE, labels=None, previous=None,
                   keep_clusters=False):
    """Cluster ``memories`` (objects with slug, type, hook) into a ``BuildResult``.

    ``labels`` is a ``Labels`` (pins, extra tags and aliases, labels by cluster id); ``previous``
    a ``ClusterIndex`` whose ids are carried over where membership mostly carries over, and
    whose labels are kept for those clusters unless the labels file names one. With
    ``keep_clusters`` the previous clusters' surviving members stay together under their ids
    (like pins) and only new memories are placed. The result depends only on the set of
    memories, the options, the labels and the previous file, never on input order.
    """
    if max_size < 1:
        raise InputError(f"the size ceiling must be at least 1, got {max_size}", fix="pass --max-size 12")
    by_slug = {}
    for memory in memories:
        by_slug.setdefault(memory.slug, memory)
    slugs = sorted(by_slug)
    n = len(slugs)
    if n == 0:
        raise InputError("no memories to cluster", fix="point --memory-dir or --index at a store with memories")
    if target is None:
        target = default_target(n)
    if target < 1:
        raise InputError(f"the cluster count must be at least 1, got {target}", fix="pass --clusters 1 or more")
    target = min(target, n)
    labels = labels or Labels()
    check_labels(labels, slugs)
    warnings = []

    position = {slug: i for i, slug in enumerate(slugs)}
    term_sets = [member_terms(slug, by_slug[slug].hook) for slug in slugs]
    df = document_frequencies(term_sets)
    idf = idf_weights(df, n)
    vectors = [unit_vector(terms, idf) for terms in term_sets]

    # Members that must stay together under a given id: labels-file pins, and with
    # keep_clusters every previous cluster's surviving members (a pin wins over the old cluster).
    seeded_of = {position[s]: entry.cluster_id for entry in labels.clusters for s in entry.pins}
    if keep_clusters and previous is not None:
        for cluster in previous.clusters:
            for member in cluster.members:
                if member.slug in position:
                    seeded_of.setdefault(position[member.slug], cluster.cluster_id)
    seeds = {}
    for i, cluster_id in seeded_of.items():
        seeds.setdefault(cluster_id, []).append(i)
    if keep_clusters and previous is not None:
        placed = place_new_members(vectors, seeds, [i for i in range(n) if i not in seeded_of], max_size)
        for i, cluster_id in placed.items():
            seeded_of[i] = cluster_id
            seeds[cluster_id].append(i)
        unplaced = n - len(seeded_of)
        target = len(seeds) + (default_target(unplaced) if unplaced else 0)
    seeds = sorted((cluster_id, sorted(indices)) for cluster_id, indices in seeds.items())
    for cluster_id, indices in seeds:
        if len(indices) > max_size:
            warnings.append(f"cluster {cluster_id} has {len(indices)} members that must stay together, above "
                            f"the size ceiling {max_size}; it is kept whole and flagged [RETIER]")
    groups = agglomerate(vectors, target, max_size, seeds)
    slug_sets = [frozenset(tokenize(slug_topic_words(slug))) for slug in slugs]
    spelled = surface_forms([slug_topic_words(s) + " " + by_slug[s].hook for s in slugs])
    tags = [tuple(spelled.get(t, t) for t in group_tags)
            for group_tags in choose_tags(groups, term_sets, df, n, slug_sets)]

    group_sets = [{slugs[i] for i in g} for g in groups]
    ids = {}
    for g, indices in enumerate(groups):
        seeded = {seeded_of[i] for i in indices if i in seeded_of}
        if seeded:
            ids[g] = seeded.pop()  # agglomerate never joins two different seeds
    old_groups = {}
    old_labels = {}
    if previous is not None:
        for cluster in previous.clusters:
            old_groups[cluster.cluster_id] = {m.slug for m in cluster.members}
            old_labels[cluster.cluster_id] = cluster.label
    free_positions = [g for g in range(len(groups)) if g not in ids]
    matched = match_ids(old_groups, [group_sets[g] for g in free_positions], reserved=set(ids.values()))
    for local, old_id in matched.items():
        ids[free_positions[local]] = old_id
    carried = {cluster_id: round(jaccard(old_groups[cluster_id], group_sets[g]), 3)
               for g, cluster_id in ids.items() if cluster_id in old_groups}
    taken = set(old_groups) | set(ids.values()) | {entry.cluster_id for entry in labels.clusters}
    # Fresh ids in member order, so which cluster gets a suffix never depends on input order.
    for g in range(len(groups)):
        if g not in ids:
            ids[g] = fresh_id(tags[g], taken, fallback=slugs[groups[g][0]])
            taken.add(ids[g])

    named = labels.by_id()
    built_ids = set(ids.values())
    for entry in labels.clusters:
        if entry.cluster_id not in built_ids:
            warnings.append(f"{labels.path}:{entry.line}: cluster {entry.cluster_id} is not in this build; "
                            "its label, tags and aliases were not used")
    clusters = []
    for g, indices in enumerate(groups):
        cluster_id = ids[g]
        entry = named.get(cluster_id)
        cluster_tags = list(tags[g])
        label = old_labels.get(cluster_id, "")
        if entry is not None:
            for extra in entry.tags + entry.aliases:
                if extra not in cluster_tags:
                    cluster_tags.append(extra)
            if entry.label:
                label = entry.label
        members = tuple(Member(slugs[i], by_slug[slugs[i]].type, by_slug[slugs[i]].hook, 0) for i in indices)
        clusters.append(Cluster(cluster_id, len(members), len(members) >= max_size, tuple(cluster_tags),
                                label, members, 0))
    clusters.sort(key=lambda c: c.cluster_id)
    return BuildResult(ClusterIndex(clusters), target, max_size, dict(sorted(carried.items())), tuple(warnings))


# --------------------------------------------------------------------------- reports


def compare_builds(previous, index):
    """What changed from ``previous`` to ``index`` (both ``ClusterIndex``; previous may be None)."""
    new_owner = {m.slug: c.cluster_id for c in index.clusters for m in c.members}
    if previous is None:
        return {"previous": False, "new": [c.cluster_id for c in index.clusters], "removed": [], "kept": [],
                "split": [], "merged": [], "moved": [], "added": sorted(new_owner), "dropped": []}
    old_owner = {m.slug: c.cluster_id for c in previous.clusters for m in c.members}
    old_ids = set(previous.cluster_ids)
    new_ids = set(index.cluster_ids)
    moved = [{"slug": slug, "from": old_owner[slug], "to": new_owner[slug]}
             for slug in sorted(set(old_owner) & set(new_owner)) if old_owner[slug] != new_owner[slug]]
    flows = {}
    for slug in set(old_owner) & set(new_owner):
        key = (old_owner[slug], new_owner[slug])
        flows[key] = flows.get(key, 0) + 1
    # A split: an old cluster whose surviving members went, two or more each, to several new
    # clusters; a merge: a new cluster that took two or more members from each of several old ones.
    split, merged = [], []
    for old_id in sorted(old_ids):
        into = sorted(new for (old, new), count in flows.items() if old == old_id and count >= 2)
        if len(into) >= 2:
            split.append({"cluster_id": old_id, "into": into})
    for new_id in sorted(new_ids):
        came = sorted(old for (old, new), count in flows.items() if new == new_id and count >= 2)
        if len(came) >= 2:
            merged.append({"cluster_id": new_id, "from": came})
    return {
        "previous": True,
        "new": sorted(new_ids - old_ids),
        "removed": sorted(old_ids - new_ids),
        "kept": sorted(old_ids & new_ids),
        "split": split,
        "merged": merged,
        "moved": moved,
        "added": sorted(set(new_owner) - set(old_owner)),
        "dropped": sorted(set(old_owner) - set(new_owner)),
    }


def self_routing(index, settings):
    """Route each member's own hook text against ``index``; say where it lands.

    A member *reaches itself* when its own cluster is among the routed clusters and its own line
    is injected. Status per member: ``own`` (its cluster routed first), ``second`` (routed as the
    clear second), ``capped`` (its cluster routed but its line cut by the line cap), ``elsewhere``
    (only other clusters routed) or ``nowhere`` (nothing routed).
    """
    from router.providers.provider import build_table
    from router.hooks.session import route_fresh

    table = build_table(index)
    counts = {"own": 0, "second": 0, "capped": 0, "elsewhere": 0, "nowhere": 0}
    misses = []
    for cluster in index.clusters:
        for member in cluster.members:
            decision = route_fresh(member.hook, table, settings, log_as="build")
            routed = decision["routed"]
            injected = any(line["slug"] == member.slug for line in decision["lines"])
            if not routed:
                status = "nowhere"
            elif cluster.cluster_id not in routed:
                status = "elsewhere"
            elif not injected:
                status = "capped"
            elif routed[0] == cluster.cluster_id:
                status = "own"
            else:
                status = "second"
            counts[status] += 1
            if status not in ("own", "second"):
                own_score = next((s["score"] for s in decision["scores"]
                                  if s["cluster_id"] == cluster.cluster_id), 0)
                misses.append({"slug": member.slug, "cluster_id": cluster.cluster_id, "status": status,
                               "routed": routed, "top_score": decision["top_score"], "own_score": own_score})
    total = sum(counts.values())
    reached = counts["own"] + counts["second"]
    return {"total": total, "reached": reached, "share": round(reached / total, 4) if total else 0.0,
            "counts": counts, "misses": misses}
