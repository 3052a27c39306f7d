"""Steps 1-4 of the cluster build (``harness.clusters.builder`` gives the pipeline and the reasons):
a member's terms and their weights, average-linkage clustering under a size ceiling, and the
tags that tell each cluster apart. Pure and deterministic."""

import heapq
import math
import re

from router.tokens import tokenize

DEFAULT_MAX_SIZE = 12
MEMBERS_PER_CLUSTER = 5
MIN_TAGS = 3
MAX_TAGS = 6
TYPE_PREFIXES = ("env", "feedback", "project", "reference", "user")
# Similarities are rounded before they are compared, so two merges that differ only by float
# noise tie and the tie breaks on member order instead of on summation order.
COST_DIGITS = 9


# Everyday English, generic programming words and everyday language and file-format names that
# a tag must not be: a tag hit alone is worth the whole score floor, so a tag that any chat
# prompt may contain ("add", "test", "new", "function", "json", "bash") would prime unrelated
# prompts. Members still match these words through their hook text (at member weight, which
# needs three hits to fire). Plurals fold like the router's.
_GENERIC_WORDS_TEXT = """
able accept accepted access account act action actual add added address addresses after
afternoon again age agent agents ago agree ahead allow almost alone along already although
always amount another answer anyone anything anywhere apart api app appear apply approach apps
april area argument array arrive article aside attempt attention august available average avoid
away back bad base bash basic become before begin behind believe best better big bit block body
book books both bottom box boxes branches break brief bring broken bug bugs build business busy
buy call came camera capital care careful carry case cause central certain chance change
character characters chat cheap check child choice choose city class classes clean clear clever
cli client close code cold color colour come command comment common company compare compile
complete complex computer concept condition confirm consider console contain content context
continue control convert copy correct cost count country couple course cover cpp crash crashes
create css csv current cut daily data date day dead deal dear debug debugging december decide
deep default define delete describe design detail develop difference different difficult dir
direct direction directory discuss display doc docs document documentation doing double draft
draw drive drop due early easy edit effect either element email empty end endpoint enough enter
entire entry error even evening event everyone everything exact example except exist exit expect
expected experience explain extra face fact fail fair fall false family far fast feature
february feel field figure file fill final find fine finish first fit fix fixes folder folders
follow food force form format forward framework free friday friend front full fun function
future game gb general get give given glad global go goal golang good great green group grow
guess guide haiku half hand handle happen happy hard head hear heart heavy hello high hit hold
home hope hot hour house html huge human id idea ids image important improve include increase
index information input inside instead interest issue issues item january java javascript job
join joke js json july june kb keep key kind lands language large last late later latest lead
learn least leave left less letter letters level library life light likely limit line lines link
list little live load local lock long loop lose loss lot love low main major manage many march
mark markdown match matches matter may maybe mb md mean meaning meet meeting member message
method middle mind minute miss mistake mode model modern module moment monday money month
morning move movie multi name natural near nearly necessary never new next nice night notes
nothing notice november number numbers object obvious october often okay old one open option
order original others output outside package page pair paper paragraph parameter part pass
passes past paste path pay people perfect performance perhaps person php pick piece place plain
plan play please poem point poor popular possible post power practice prefer present pretty
previous print private probably problem problems process processes produce program project
prompt prompts proper provide public pull purpose push pushes put python question quick quickly
quiet random rather raw reach read ready real reason receive recent recipe record red reduce
refactor regex remember remove rename repeat replace reply report request require required
response rest result return reverse review rich role room round ruby rule run rust safe saturday
save say script searches second section seem select send sense sentence separate september
serious server service session sessions set several sh shape share shared shell short show side
sign simple since single site size slow small smart sometimes sorry sort sound source space
special speed spend sql stand start state status stay step stop store story straight strange
string strong student study style subject success suggest sum summarise summary sunday support
suppose surface syntax system table tag tags take talk task tb team tell term terminal test text
thanks thing third thought three thursday time today together token tokens tomorrow tonight top
topic total touch toward true ts tuesday turn two txt type typescript understand unit unknown
unlock until update upon url use used useful user uses usual usually value variable various
version view visit wait walk wall watch water weather web website wednesday week weekend weird
whole wide without word words work world worry write wrong xml yaml year yes yesterday yml young
"""


# --------------------------------------------------------------------------- terms and weights


def slug_topic_words(slug):
    """The slug's words without a leading type word (``feedback_never_x`` -> ``never x``)."""
    words = slug.split("_")
    if len(words) > 1 and words[0] in TYPE_PREFIXES:
        words = words[1:]
    return " ".join(words)


def member_terms(slug, hook):
    """The routing tokens a member is clustered and tagged on."""
    return frozenset(tokenize(slug_topic_words(slug)) | tokenize(hook))


def document_frequencies(term_sets):
    df = {}
    for terms in term_sets:
        for term in terms:
            df[term] = df.get(term, 0) + 1
    return df


def idf_weights(df, n):
    return {term: math.log(n / count) for term, count in df.items()}


def unit_vector(terms, idf):
    """``((term, weight), ...)`` sorted by term, of unit length (empty when every weight is 0)."""
    pairs = [(term, idf[term]) for term in sorted(terms) if idf.get(term, 0.0) > 0.0]
    norm = math.sqrt(sum(w * w for _t, w in pairs))
    if norm == 0.0:
        return ()
    return tuple((t, w / norm) for t, w in pairs)


def default_target(n):
    """About one cluster per five members (at least one)."""
    return max(1, round(n / MEMBERS_PER_CLUSTER))


# --------------------------------------------------------------------------- clustering


def agglomerate(vectors, target, max_size, groups=()):
    """Average-linkage agglomerative clustering of unit vectors; a list of sorted index lists.

    The similarity of two clusters is the mean cosine similarity of their members' vectors,
    ``sum(A) . sum(B) / (|A| |B|)``, kept exact by adding the rows of a running dot-product
    table on each merge. ``groups`` is a sequence of ``(key, indices)`` that start as one
    cluster each (labels-file pins); clusters holding different keys never merge. No merge
    creates a cluster larger than ``max_size`` and none joins clusters that share no term.
    Merging stops at ``target`` clusters or when no allowed merge is left. Ties break on the
    lowest member index, so the input order of members never matters.
    """
    n = len(vectors)
    members, pin = {}, {}
    grouped = set()
    cid = 0
    for key, indices in groups:
        members[cid] = sorted(set(indices))
        pin[cid] = key
        grouped.update(members[cid])
        cid += 1
    for i in range(n):
        if i not in grouped:
            members[cid] = [i]
            pin[cid] = None
            cid += 1

    # dot[a][b] = sum(A) . sum(B) for clusters that share a term; absent means 0.
    postings = {}
    for c in sorted(members):
        acc = {}
        for i in members[c]:
            for term, weight in vectors[i]:
                acc[term] = acc.get(term, 0.0) + weight
        for term in sorted(acc):
            postings.setdefault(term, []).append((c, acc[term]))
    dot = {c: {} for c in members}
    for term in sorted(postings):
        row = postings[term]
        for x, (a, wa) in enumerate(row):
            for b, wb in row[x + 1:]:
                dot[a][b] = dot[a].get(b, 0.0) + wa * wb
                dot[b][a] = dot[b].get(a, 0.0) + wa * wb

    def entry(a, b):
        similarity = round(dot[a][b] / (len(members[a]) * len(members[b])), COST_DIGITS)
        first = (min(members[a][0], members[b][0]), max(members[a][0], members[b][0]))
        return (-similarity, first, a, b)

    def allowed(a, b):
        if dot[a].get(b, 0.0) <= 0.0 or len(members[a]) + len(members[b]) > max_size:
            return False
        return pin[a] is None or pin[b] is None or pin[a] == pin[b]

    heap = [entry(a, b) for a in sorted(dot) for b in sorted(dot[a]) if a < b and allowed(a, b)]
    heapq.heapify(heap)
    count = len(members)
    while count > target and heap:
        _sim, _first, a, b = heapq.heappop(heap)
        if a not in members or b not in members:
            continue  # one side was merged since this pair was queued
        merged = cid
        cid += 1
        members[merged] = sorted(members.pop(a) + members.pop(b))
        pin_a, pin_b = pin.pop(a), pin.pop(b)
        pin[merged] = pin_a if pin_a is not None else pin_b
        row_a, row_b = dot.pop(a), dot.pop(b)
        row = {}
        for c in set(row_a) | set(row_b):
            if c in (a, b):
                continue
            value = row_a.get(c, 0.0) + row_b.get(c, 0.0)
            dot[c].pop(a, None)
            dot[c].pop(b, None)
            row[c] = value
            dot[c][merged] = value
        dot[merged] = row
        count -= 1
        for c in sorted(row):
            if allowed(c, merged):
                heapq.heappush(heap, entry(c, merged))
    return sorted(members.values(), key=lambda m: m[0])


def cosine(u, v):
    """Dot product of two unit vectors given as sorted ``((term, weight), ...)`` tuples."""
    if len(u) > len(v):
        u, v = v, u
    weights = dict(v)
    return sum(w * weights.get(t, 0.0) for t, w in u)


def place_new_members(vectors, groups, newcomers, max_size):
    """``{index: group key}``: each newcomer (in index order) joins the group it is most similar
    to on average, if that similarity is above 0 and the group has room under ``max_size``.

    Similarity is measured against each group's members as the group stood before any newcomer
    joined, so where one newcomer goes never depends on where another went (only room does).
    """
    placed = {}
    sizes = {key: len(indices) for key, indices in groups.items()}
    for i in sorted(newcomers):
        best = None
        for key in sorted(groups):
            indices = groups[key]
            if not indices or sizes[key] >= max_size:
                continue
            similarity = round(sum(cosine(vectors[i], vectors[j]) for j in indices) / len(indices), COST_DIGITS)
            if similarity > 0.0 and (best is None or similarity > best[0]):
                best = (similarity, key)
        if best is not None:
            placed[i] = best[1]
            sizes[best[1]] += 1
    return placed


# --------------------------------------------------------------------------- tags


GENERIC_WORDS = frozenset(t for word in _GENERIC_WORDS_TEXT.split() for t in tokenize(word))


def tag_candidates(term_sets, slug_sets):
    """Per member, the terms that may become tags: not generic, not a type word, no ``_``."""
    banned = GENERIC_WORDS | set(TYPE_PREFIXES)
    return [frozenset(t for t in terms if "_" not in t and t not in banned) for terms in term_sets]


def choose_tags(groups, term_sets, df, n, slug_sets=None, min_tags=MIN_TAGS, max_tags=MAX_TAGS):
    """Tags for each group (a list of member indices): a list of tag tuples, same order.

    Score of term t for cluster C: df_C(t) x ln(n / df(t)) x df_C(t) / df(t), doubled when a
    member of C has t in its slug (slug words are the words the memory's author chose to name
    it by). A term is a tag of at most one cluster (the one it scores highest in; ties go to
    the earlier cluster). Terms two or more members use come first; a cluster with fewer than
    ``min_tags`` of those fills up with its other terms. Generic words, type words and
    identifiers (whose parts the router would also count as tags) are never tags.
    """
    slug_sets = slug_sets or [frozenset()] * len(term_sets)
    candidates = tag_candidates(term_sets, slug_sets)
    scored = []
    for indices in groups:
        local, in_slug = {}, set()
        for i in indices:
            for term in candidates[i]:
                local[term] = local.get(term, 0) + 1
            in_slug |= slug_sets[i]
        rows = []
        for term, count in local.items():
            idf = math.log(n / df[term]) if n > 1 else 1.0
            if idf <= 0.0 and n > 1:
                continue
            score = count * idf * count / df[term] * (2.0 if term in in_slug else 1.0)
            rows.append((term, count, round(score, COST_DIGITS)))
        scored.append(rows)
    owner = {}
    for g, rows in enumerate(scored):
        for term, count, score in rows:
            best = owner.get(term)
            if best is None or (count >= 2, score) > (best[1], best[2]):
                owner[term] = (g, count >= 2, score)
    tags = []
    for g, rows in enumerate(scored):
        mine = sorted((count < 2, -score, term) for term, count, score in rows if owner[term][0] == g)
        picked = [term for single, _score, term in mine if not single][:max_tags]
        if len(picked) < min_tags:
            picked += [term for single, _score, term in mine if single][: min_tags - len(picked)]
        tags.append(tuple(picked))
    return tags


def surface_forms(texts):
    """``{token: the word as members most often write it}``, so a tag reads ``postgres``, not
    the folded token ``postgre`` (both tokenize the same, so routing is unchanged)."""
    counts = {}
    for text in texts:
        for word in re.findall(r"\w+", text.lower()):
            found = tokenize(word)
            if len(found) == 1:
                key = (next(iter(found)), word)
                counts[key] = counts.get(key, 0) + 1
    best = {}
    for (token, word), count in sorted(counts.items()):
        current = best.get(token)
        if current is None or count > current[1]:
            best[token] = (word, count)
    return {token: word for token, (word, _count) in best.items()}
