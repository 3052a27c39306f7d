"""A BM25 peer baseline, written as a custom provider (``provider = "bm25_provider:make"`` with
this directory on PYTHONPATH): also a worked example of the provider interface.

Each cluster is one document: its tags, its label and its member lines (slugs and hooks),
tokenised by the router's own rule. A prompt goes to the top cluster when its BM25 score
(rank-bm25's BM25Okapi, k1 1.5, b 0.75) reaches ``bm25_threshold`` (a settings key only this
provider reads; the benchmark fits it on the bundled suites). Lines: the cluster's members,
the ones sharing most words with the prompt first, at most ``line_cap``.

Needs the ``bench`` extra (rank-bm25, which imports numpy: that import is this provider's cost
on every prompt, and the benchmark's hook-latency column shows it).
"""

from rank_bm25 import BM25Okapi

from router.tokens import slug_words, tokenize

DEFAULT_THRESHOLD = 4.0
_INDEXES = {}


def _index(table):
    # One index per routing table object: the benchmark routes hundreds of prompts per table.
    key = id(table)
    found = _INDEXES.get(key)
    if found is None or found[0] is not table:
        clusters = table["clusters"]
        documents = []
        for position in range(len(clusters)):
            _cluster_id, tags, label, members = clusters[position]
            words = []
            for text in list(tags) + [label or ""] + [hook for _slug, _type, hook in members]:
                words.extend(sorted(tokenize(text)))
            for slug, _type, _hook in members:
                words.extend(sorted(slug_words(slug)))
            documents.append(words or ["\x00"])
        found = _INDEXES[key] = (table, BM25Okapi(documents))
    return found[1]


def make(settings):
    threshold = settings.get("bm25_threshold", DEFAULT_THRESHOLD)

    def provider(request):
        table = request["table"]
        words = tokenize(request["prompt"][: request["settings"]["max_prompt_chars"]])
        if not words:
            return {"clusters": [], "lines": [], "confidence": 0.0, "explanation": "no routing words"}
        scores = _index(table).get_scores(sorted(words))
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        top = float(scores[best])
        confidence = top / (top + threshold) if top > 0 else 0.0
        cluster_id, _tags, _label, members = table["clusters"][best]
        if top < threshold:
            return {"clusters": [], "lines": [], "confidence": confidence,
                    "explanation": f"BM25 {top:.2f} for {cluster_id} under the threshold {threshold}"}
        ranked = sorted(range(len(members)),
                        key=lambda i: (-len(words & (slug_words(members[i][0]) | tokenize(members[i][2]))), i))
        keep = sorted(ranked[: request["settings"]["line_cap"]])
        lines = [{"cluster_id": cluster_id, "slug": members[i][0], "hook": members[i][2]} for i in keep]
        return {"clusters": [cluster_id], "lines": lines, "confidence": confidence,
                "explanation": f"BM25 {top:.2f} for {cluster_id} (threshold {threshold})"}

    return provider
