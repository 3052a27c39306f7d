"""Build time of the nearest-exemplar veto (``router.routing.veto``): its postings.

Exemplars: per member, its slug words with its hook line, and each of its utterances (the
positives); per cluster, the near-misses the engine wrote for it, and the shipped generic
requests (the negatives). Each becomes a unit vector over ``router.routing.veto.exemplar_terms``
with binary term frequency and idf over all exemplars; ``exemplar_postings`` maps a term to
``(idf, code, weight, ...)``. A term held by more than ``MAX_DF`` exemplars is not indexed (it
says little, and routing reads a prompt term's whole list), nor is its weight in any norm.

Standard library and ``router.*`` only, run when a table is compiled (never on a prompt).
"""

import math

from router.tokens import slug_words
from router.routing.veto import exemplar_terms, generic_code, member_code, near_miss_code
from router.routing.weightedscore import idf

MAX_DF = 2000


def add_exemplar_postings(table, index, utterances, near_misses, generics):
    """Add ``exemplar_postings`` and ``exemplar_meta`` to ``table`` (in place; returned).
    ``utterances``: {slug: texts}; ``near_misses``: {cluster id: texts}; ``generics``: texts."""
    memo = {}
    exemplars = []
    near_miss_rows = 0
    for position, cluster in enumerate(index.clusters):
        for member_index, member in enumerate(cluster.members):
            own = " ".join(sorted(slug_words(member.slug))) + " " + member.hook
            exemplars.append((member_code(position, member_index, 0), exemplar_terms(own, memo)))
            for number, text in enumerate(utterances.get(member.slug, ()), 1):
                exemplars.append((member_code(position, member_index, number), exemplar_terms(text, memo)))
        for number, text in enumerate(near_misses.get(cluster.cluster_id, ())):
            exemplars.append((near_miss_code(position, number), exemplar_terms(text, memo)))
            near_miss_rows += 1
    for number, text in enumerate(generics):
        exemplars.append((generic_code(number), exemplar_terms(text, memo)))
    frequency = {}
    for _code, terms in exemplars:
        for term in terms:
            frequency[term] = frequency.get(term, 0) + 1
    documents = len(exemplars)
    weights = {term: idf(count, documents) for term, count in frequency.items() if count <= MAX_DF}
    postings = {}
    for code, terms in exemplars:
        kept = [term for term in sorted(terms) if term in weights]  # sorted: a seed-free float sum
        norm = math.sqrt(sum(weights[term] ** 2 for term in kept))
        if norm <= 0:
            continue
        for term in kept:
            postings.setdefault(term, []).extend((code, round(weights[term] / norm, 5)))
    table["exemplar_postings"] = {term: (round(weights[term], 5),) + tuple(flat) for term, flat in postings.items()}
    table["exemplar_meta"] = {"exemplars": documents, "near_misses": near_miss_rows, "generics": len(generics),
                              "clusters_with_near_misses": sum(1 for c in index.clusters
                                                               if near_misses.get(c.cluster_id))}
    return table
