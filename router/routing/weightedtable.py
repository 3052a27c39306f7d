"""Build time of the ``weighted`` provider: the postings it adds to a spec §10 routing table.

Apart from ``router.routing.weighted`` (route time) because the hook reads a cached table: with a current
cache nothing here is imported, and routing a prompt never computes a logarithm or walks the store.
What the postings mean is ``router.routing.weighted``'s docstring.
"""

from router.stem import stem
from router.tokens import slug_words, tokenize
from router.routing.weightedscore import STOP_STEMS, LABEL, TAGS, idf
from router.routing.wordmatch import FUZZY_MIN_LENGTH, deletes, key_filter

BESIDE = "beside"


def extend_table(table, index, learned_terms=None, word_frequency=None, utterances=BESIDE, near_misses=BESIDE,
                 generics=BESIDE):
    """Add the weighted provider's postings to a spec §10 routing table (in place; returned).

    ``term_postings``: stem -> (idf, position, member_index, position, member_index, ...) where
    member_index is ``TAGS`` for a cluster's tags and ``LABEL`` for its label (the idf is
    computed here, so routing needs no logarithm). ``fuzzy_postings``: each
    one-letter deletion of a stem (and the stem itself) -> the stems it comes from; ``fuzzy_filter``:
    a Bloom filter of those keys (``router.routing.wordmatch.key_filter``), so the spelling repair
    reads no shard for a variant the store has no key for.
    ``weighted_meta``: {"documents": N}. With learned terms, ``learned_line_postings``: learned
    word (as ``tokenize`` gives it) -> (position, member_index, ...) of the lines it was learned
    for, so a decision can say which of its lines the prompt reached through them. With ``word_frequency`` (word -> Zipf frequency in
    general English, see ``router.routing.priors``), ``prior_postings``: stem -> the highest frequency
    among the store's words with that stem.

    ``utterances``: ``{slug: (utterance, ...)}`` to route on (``router.routing.uttertable``), or the default
    ``BESIDE``: those of the utterances file beside the index's cluster file, when there is one (a
    damaged one is logged once and left out: the table is then the cluster file's alone). ``None``
    or ``{}``: none. Without utterances the table is what it was before they existed.

    With utterances, the veto's exemplars (``router.routing.exemplars``) are added too:
    ``near_misses`` (``{cluster id: texts}``, or ``BESIDE``: the near-misses file beside the cluster
    file; a damaged one is logged and left out) and ``generics`` (texts, or ``BESIDE``: the shipped
    generic negatives).
    """
    learned_terms = learned_terms or {}
    postings = {}
    learned_lines = {}
    forms = {}
    documents = 0

    def add(words, position, member_index):
        for word in words:
            postings.setdefault(word, []).extend((position, member_index))

    def stems_of(tokens):
        out = set()
        for token in tokens:
            key = token if "_" in token else stem(token)
            if key not in STOP_STEMS:
                out.add(key)
                if word_frequency is not None and "_" not in token:
                    forms.setdefault(key, set()).add(token)
        return out

    for position, cluster in enumerate(index.clusters):
        tag_stems = set()
        for tag in cluster.tags:
            tag_stems |= stems_of(tokenize(tag))
        add(tag_stems, position, TAGS)
        add(stems_of(tokenize(cluster.label or "")) - tag_stems, position, LABEL)
        documents += 2
        for member_index, member in enumerate(cluster.members):
            words = slug_words(member.slug) | tokenize(member.hook)
            taught = set()
            for extra in learned_terms.get(member.slug, ()):
                taught |= tokenize(extra)
            for term in taught - words:
                learned_lines.setdefault(term, []).extend((position, member_index))
            add(stems_of(words | taught), position, member_index)
            documents += 1
    fuzzy = {}
    for word in postings:
        if len(word) >= FUZZY_MIN_LENGTH and word.isalpha():
            for variant in deletes(word) | {word}:
                fuzzy.setdefault(variant, []).append(word)
    table["term_postings"] = {word: (idf(len(flat) // 2, documents),) + tuple(flat)
                              for word, flat in postings.items()}
    table["fuzzy_postings"] = {variant: tuple(sorted(words)) for variant, words in fuzzy.items()}
    table["weighted_meta"] = {"documents": documents}
    if learned_lines:
        table["learned_line_postings"] = {term: tuple(flat) for term, flat in learned_lines.items()}
    table["fuzzy_filter"] = key_filter(set(table["fuzzy_postings"]))
    _add_utterances(table, index, utterances, near_misses, generics)
    if word_frequency is not None:
        table["prior_postings"] = {key: max(word_frequency(form) for form in words) for key, words in forms.items()}
    return table


# Skipped rows a table names at most (each is logged when the table is built; doctor lists them all).
MAX_SKIPPED_ROWS = 50


def note_skipped_rows(table, errors, what):
    """Log each row a reader skipped (``errors``) and name it in the table's ``skipped_rows``
    (``router.store.learned.skipped_rows``: ``((file:line:col, message), ...)``), so ``route``,
    the MCP tools and doctor can say what the hook left out."""
    if not errors:
        return
    from router.hookio import log_diagnostic
    from router.store.learned import skipped_rows

    rows = skipped_rows(errors)
    for _where, message in rows[:3]:
        log_diagnostic(what, f"{message}; that row is skipped, the rest are used")
    if len(rows) > 3:
        log_diagnostic(what, f"and {len(rows) - 3} more bad rows skipped (memory-router doctor names them)")
    table["skipped_rows"] = (tuple(table.get("skipped_rows", ())) + rows)[:MAX_SKIPPED_ROWS]
    table["skipped_row_count"] = table.get("skipped_row_count", 0) + len(rows)


def _add_utterances(table, index, utterances, near_misses=None, generics=None):
    source = problem = None
    if utterances == BESIDE:
        path = getattr(index, "path", None)
        if not path or str(path).startswith("<"):
            return
        from router.routing.uttertable import read_beside

        skipped = []
        utterances, source, problem = read_beside(path, skipped)
        note_skipped_rows(table, skipped, "utterances")
        if problem:
            from router.hookio import log_diagnostic

            log_diagnostic("utterances", f"{problem}; routing on the cluster file alone until it is fixed")
    if utterances or problem:
        from router.routing.uttertable import add_utterance_postings

        add_utterance_postings(table, index, utterances or {}, source, problem)
    if utterances:
        _add_exemplars(table, index, utterances, near_misses, generics)


def _add_exemplars(table, index, utterances, near_misses, generics):
    from router.routing.exemplars import add_exemplar_postings
    from router.store.nearmisses import read_generic_negatives

    problem = None
    if near_misses == BESIDE:
        skipped = []
        near_misses, problem = _near_misses_beside(index, skipped)
        note_skipped_rows(table, skipped, "near-misses")
    if generics == BESIDE:
        generics = read_generic_negatives()
    add_exemplar_postings(table, index, utterances, near_misses or {}, generics or ())
    if problem:
        table["exemplar_meta"]["problem"] = problem


def _near_misses_beside(index, skipped):
    """``({cluster id: texts}, problem)`` from the near-misses file beside the index's cluster file
    (a bad row goes to ``skipped``, the rest are used)."""
    path = getattr(index, "path", None)
    if not path or str(path).startswith("<"):
        return {}, None
    from router.config import nearmisses_path
    from router.errors import InputError
    from router.store.nearmisses import nearmisses_by_cluster, read_nearmisses

    try:
        return nearmisses_by_cluster(read_nearmisses(nearmisses_path(path), skipped)), None
    except InputError as err:
        from router.hookio import log_diagnostic

        problem = err.format()
        log_diagnostic("near-misses", f"{problem}; routing without near-misses until it is fixed")
        return {}, problem
