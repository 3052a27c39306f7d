"""Score a prompt against every cluster and choose what to inject (spec §5 and §10). Pure.

``build_routing_table`` turns a ``ClusterIndex`` into plain dicts, sets and tuples (cheap to
cache with ``marshal``); ``route_prompt`` scores one prompt against a table and returns the
decision as a plain dict; ``render_context`` turns chosen lines into the injected text.

Score of a cluster = tag_weight x |prompt tokens among its tag words|
                   + member_weight x |prompt tokens among its member words, minus tag words|
where a member's words are its slug's words and its hook text. Ranking: score, then more tag
hits, then the cluster's position in the file, so ties always break the same way.

Choice: the top cluster if its score reaches score_floor. The second joins only when it is a
*clear* second: it also reaches the floor, scores at least second_ratio of the top score, and
scores strictly more than the third (a three-way tie is noise, not a runner-up).
"""

from router.tokens import slug_words, tokenize

HEADER_SINGLE = "Routed memory cluster: "
HEADER_PLURAL = "Routed memory clusters: "


def build_routing_table(index):
    """Precompute token postings for ``index``; the result holds only marshal-safe types."""
    clusters = []
    tag_postings = {}
    member_postings = {}
    for position, cluster in enumerate(index.clusters):
        tag_tokens = set()
        for tag in cluster.tags:
            tag_tokens |= tokenize(tag)
        member_tokens = set()
        for member in cluster.members:
            member_tokens |= slug_words(member.slug)
            member_tokens |= tokenize(member.hook)
        member_tokens -= tag_tokens
        for token in tag_tokens:
            tag_postings.setdefault(token, []).append(position)
        for token in member_tokens:
            member_postings.setdefault(token, []).append(position)
        clusters.append((
            cluster.cluster_id,
            tuple(cluster.tags),
            cluster.label,
            tuple((m.slug, m.type, m.hook) for m in cluster.members),
        ))
    return {
        "clusters": tuple(clusters),
        "tag_postings": {t: tuple(p) for t, p in tag_postings.items()},
        "member_postings": {t: tuple(p) for t, p in member_postings.items()},
    }


def prompt_for_scoring(prompt, max_chars):
    """A huge prompt (a pasted log) is scored on its first and last halves of ``max_chars``."""
    if max_chars and len(prompt) > max_chars:
        half = max_chars // 2
        return prompt[:half] + "\n" + prompt[-half:]
    return prompt


def score_clusters(prompt_tokens, table, settings):
    """Every cluster with a non-zero score, ranked: list of (position, score, tag_hits, member_hits)."""
    tag_hits = {}
    member_hits = {}
    tag_postings = table["tag_postings"]
    member_postings = table["member_postings"]
    for token in prompt_tokens:
        for position in tag_postings.get(token, ()):
            tag_hits.setdefault(position, []).append(token)
        for position in member_postings.get(token, ()):
            member_hits.setdefault(position, []).append(token)
    tag_weight = settings["tag_weight"]
    member_weight = settings["member_weight"]
    scored = []
    for position in set(tag_hits) | set(member_hits):
        tags = sorted(tag_hits.get(position, ()))
        members = sorted(member_hits.get(position, ()))
        scored.append((position, tag_weight * len(tags) + member_weight * len(members), tags, members))
    scored.sort(key=lambda row: (-row[1], -len(row[2]), row[0]))
    return scored


def choose_clusters(scored, settings):
    """Positions of the clusters to inject: top-1, plus a clear top-2 (see module docstring)."""
    floor = settings["score_floor"]
    if not scored or scored[0][1] < floor or scored[0][1] <= 0:
        return []
    chosen = [scored[0][0]]
    if len(scored) > 1:
        top, second = scored[0][1], scored[1][1]
        third = scored[2][1] if len(scored) > 2 else None
        if second >= floor and second >= settings["second_ratio"] * top and (third is None or second > third):
            chosen.append(scored[1][0])
    return chosen


def select_lines(prompt_tokens, table, chosen, line_cap):
    """Member lines of the chosen clusters, at most ``line_cap`` of them.

    When the cap bites, the lines that share most words with the prompt survive (then cluster
    rank, then file order), so the fact the prompt asks about is not the one dropped.
    Returns (kept, total) where kept is a list of (cluster_position, member_index, slug, hook).
    """
    candidates = []
    for rank, position in enumerate(chosen):
        for index, (slug, _mtype, hook) in enumerate(table["clusters"][position][3]):
            candidates.append((rank, position, index, slug, hook))
    total = len(candidates)
    if total > line_cap:
        def relevance(row):
            words = slug_words(row[3]) | tokenize(row[4])
            return (-len(prompt_tokens & words), row[0], row[2])
        candidates = sorted(sorted(candidates, key=relevance)[:line_cap], key=lambda row: (row[0], row[2]))
    return [(row[1], row[2], row[3], row[4]) for row in candidates], total


def render_context(cluster_ids, lines, total_lines, max_chars):
    """The additionalContext text: a header naming the clusters, then ``- <slug> — <hook>`` lines.

    Whole lines are dropped from the end until the text fits ``max_chars``; the header says how
    many lines were left out and why. Returns (text, kept_lines).
    """
    body = [f"- {slug} \u2014 {hook}" for (_pos, _idx, slug, hook) in lines]
    names = ", ".join(cluster_ids)
    base = (HEADER_PLURAL if len(cluster_ids) > 1 else HEADER_SINGLE) + names
    kept = len(body)
    while True:
        header = base
        if kept < total_lines:
            header += f" (showing {kept} of {total_lines} member lines"
            if kept < len(body):
                header += "; the rest exceeded the size cap)"
            else:
                header += "; capped)"
        text = "\n".join([header] + body[:kept])
        if len(text) <= max_chars or kept == 0:
            return text, kept
        kept -= 1


def route_prompt(prompt, table, settings):
    """Route one prompt. Returns a dict (the ``route --json`` core; see README for the shape)."""
    tokens = tokenize(prompt_for_scoring(prompt, settings["max_prompt_chars"]))
    scored = score_clusters(tokens, table, settings)
    chosen = choose_clusters(scored, settings)
    clusters = table["clusters"]
    text = None
    lines = []
    total = 0
    size_capped = 0
    if chosen:
        lines, total = select_lines(tokens, table, chosen, settings["line_cap"])
        text, kept = render_context([clusters[p][0] for p in chosen], lines, total, settings["max_context_chars"])
        size_capped = len(lines) - kept
        lines = lines[:kept]
        if not kept:
            text = None  # a header without one member line tells the model nothing: inject nothing
    floor = settings["score_floor"]
    top = scored[0][1] if scored else 0
    second = scored[1][1] if len(scored) > 1 else 0
    return {
        "prompt_tokens": sorted(tokens),
        "scores": [
            {"cluster_id": clusters[p][0], "score": s, "tag_hits": t, "member_hits": m}
            for (p, s, t, m) in scored
        ],
        "floor": floor,
        "top_score": top,
        "second_score": second,
        "margin_over_floor": top - floor,
        "lead_over_second": top - second,
        "routed": [clusters[p][0] for p in chosen],
        "lines": [{"cluster_id": clusters[p][0], "slug": slug, "hook": hook} for (p, _i, slug, hook) in lines],
        "total_member_lines": total,
        # The session stage re-renders the header from ``lines``: this is how it still knows the
        # size cap, not just the line cap, left lines out.
        "size_capped_lines": size_capped,
        "additional_context": text,
    }




def parse_header(text):
    """Cluster ids named by a router header line, or ``None`` if ``text`` is not a router injection.

    Shared with the transcript audit so writer and reader agree on the header.
    """
    first = text.split("\n", 1)[0].strip()
    for prefix in (HEADER_PLURAL, HEADER_SINGLE):
        if first.startswith(prefix):
            names = first[len(prefix):].split(" (", 1)[0]
            return [name.strip() for name in names.split(",") if name.strip()]
    return None
