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
"""

import heapq
import math
import re
from dataclasses import dataclass, field

from router.clusterfile import Cluster, ClusterIndex, Member
from router.errors import InputError
from router.tokens import tokenize

DEFAULT_MAX_SIZE = 12
MEMBERS_PER_CLUSTER = 5
MIN_TAGS = 3
MAX_TAGS = 6
MATCH_JACCARD = 0.5
ID_PREFIX = "layer1_"
TYPE_PREFIXES = ("env", "feedback", "project", "reference", "user")
# Similarities are rounded before they are compared, so two merges that differ only by float
# noise tie and the tie breaks on member order instead of on summation order.
_COST_DIGITS = 9
_CLUSTER_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


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
        similarity = round(dot[a][b] / (len(members[a]) * len(members[b])), _COST_DIGITS)
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
            similarity = round(sum(cosine(vectors[i], vectors[j]) for j in indices) / len(indices), _COST_DIGITS)
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
            rows.append((term, count, round(score, _COST_DIGITS)))
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


# --------------------------------------------------------------------------- labels file


@dataclass(frozen=True)
class ClusterLabel:
    """What a labels file says about one cluster id."""

    cluster_id: str
    line: int
    label: str = ""
    tags: tuple = ()
    aliases: tuple = ()
    pins: tuple = ()          # slugs
    pin_lines: tuple = ()     # the line of each pin, same order


@dataclass(frozen=True)
class Labels:
    path: str = ""
    clusters: tuple = ()

    def by_id(self):
        return {c.cluster_id: c for c in self.clusters}


LABEL_KEYS = ("label", "tags", "aliases", "pin")
LABELS_EXAMPLE = "clusters: {layer1_x: {label: text, tags: [a, b], aliases: [c], pin: [slug]}}"


class LabelsError(InputError):
    """A labels file that breaks the schema; ``problems`` holds every (line, column, message, fix)."""

    def __init__(self, problems, path):
        self.problems = list(problems)
        line, column, message, fix = self.problems[0]
        if len(self.problems) > 1:
            rest = "; ".join(f"line {p[0]}: {p[2]}" for p in self.problems[1:])
            message += f" (and {len(self.problems) - 1} more: {rest})"
        super().__init__(message, path=path, line=line, column=column, fix=fix)


def _node_line(node):
    return node.start_mark.line + 1, node.start_mark.column + 1


def _scalar_text(node):
    import yaml

    if isinstance(node, yaml.ScalarNode) and node.tag != "tag:yaml.org,2002:null":
        return " ".join(str(node.value).split())
    return None


def _word_list(node, what, problems):
    """A list of words from a YAML sequence of scalars or one comma-separated scalar."""
    import yaml

    items = []
    if node.tag == "tag:yaml.org,2002:null":
        return items
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            text = _scalar_text(item)
            if text is None:
                problems.append((*_node_line(item), f"each entry of {what} must be a plain word or phrase",
                                 f"write {what}: [word, other word]"))
            else:
                items += [(part.strip(), _node_line(item)[0]) for part in text.split(",") if part.strip()]
    else:
        text = _scalar_text(node)
        if text is None:
            problems.append((*_node_line(node), f"{what} must be a list", f"write {what}: [word, other word]"))
        else:
            items += [(part.strip(), _node_line(node)[0]) for part in text.split(",") if part.strip()]
    for word, line in items:
        if "\u00b7" in word:
            problems.append((line, 1, f"{what} entry {word!r} contains '\u00b7', the cluster file's field separator",
                             "leave the middle dot out"))
    return [(word, line) for word, line in items if "\u00b7" not in word]


def pin_slug(text):
    """The member slug a pin names: a slug, or a memory file's name with or without ``.md``."""
    from harness.memorydir import normalise_slug

    stem = text[:-3] if text.lower().endswith(".md") else text
    return normalise_slug(stem)


def parse_labels_text(text, path="<labels>"):
    """Parse a labels file; raise ``LabelsError`` listing every schema problem with its line.

    Schema (docs/builder.md)::

        clusters:
          <cluster id>:
            label: free text          # the cluster's label
            tags: [word, two words]   # extra tags
            aliases: [word]           # extra tag words people use for this cluster
            pin: [slug, slug]         # members that always go in this cluster
    """
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise InputError(f"invalid YAML: {getattr(err, 'problem', None) or err}", path=path,
                         line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
                         fix="correct the YAML syntax") from None
    if root is None:
        return Labels(path, ())
    problems = []
    if not isinstance(root, yaml.MappingNode):
        raise LabelsError([(*_node_line(root), "a labels file is a mapping with a 'clusters:' key",
                            f"write {LABELS_EXAMPLE}")], path)
    clusters = []
    seen_ids = {}
    for key_node, value_node in root.value:
        key = _scalar_text(key_node)
        if key != "clusters":
            problems.append((*_node_line(key_node), f"unknown key {key!r}", "the only top-level key is 'clusters'"))
            continue
        if _scalar_text(value_node) == "" or value_node.tag == "tag:yaml.org,2002:null":
            continue
        if not isinstance(value_node, yaml.MappingNode):
            problems.append((*_node_line(value_node), "'clusters' must map cluster ids to their settings",
                             f"write {LABELS_EXAMPLE}"))
            continue
        for id_node, body in value_node.value:
            cluster_id = _scalar_text(id_node) or ""
            line, column = _node_line(id_node)
            if not _CLUSTER_ID_RE.match(cluster_id):
                problems.append((line, column, f"invalid cluster id {cluster_id!r}",
                                 "use letters, digits and _ (e.g. layer1_docker)"))
                continue
            if cluster_id in seen_ids:
                problems.append((line, column, f"cluster {cluster_id} is listed twice (first on line "
                                 f"{seen_ids[cluster_id]})", "merge the two entries"))
                continue
            seen_ids[cluster_id] = line
            entry = {"label": "", "tags": (), "aliases": (), "pins": (), "pin_lines": ()}
            if body.tag == "tag:yaml.org,2002:null":
                body = None
            elif not isinstance(body, yaml.MappingNode):
                problems.append((*_node_line(body), f"cluster {cluster_id} must map to label/tags/aliases/pin",
                                 f"write {cluster_id}: {{label: text}}"))
                continue
            for field_node, field_value in (body.value if body is not None else ()):
                name = _scalar_text(field_node)
                if name not in LABEL_KEYS:
                    problems.append((*_node_line(field_node), f"unknown key {name!r} in cluster {cluster_id}",
                                     "use one of: " + ", ".join(LABEL_KEYS)))
                    continue
                if name == "label":
                    label = _scalar_text(field_value)
                    if label is None:
                        problems.append((*_node_line(field_value), f"the label of {cluster_id} must be text",
                                         "write label: some words"))
                    else:
                        entry["label"] = label
                    continue
                words = _word_list(field_value, name, problems)
                if name == "pin":
                    # A pin may name the memory file (prefers-bun.md): slugs are its normalised stem.
                    entry["pins"] = tuple(pin_slug(w) for w, _l in words)
                    entry["pin_lines"] = tuple(line_ for _w, line_ in words)
                    continue
                kept = []
                for word, word_line in words:
                    if not tokenize(word):
                        problems.append((word_line, 1, f"{name} entry {word!r} of {cluster_id} has no routable word "
                                         "(only stopwords, digits or single letters)", "use a content word"))
                    else:
                        kept.append(word.lower())
                entry[name] = tuple(kept)
            clusters.append(ClusterLabel(cluster_id, line, entry["label"], entry["tags"], entry["aliases"],
                                         entry["pins"], entry["pin_lines"]))
    if problems:
        problems.sort()
        raise LabelsError(problems, path)
    return Labels(path, tuple(clusters))


def check_labels(labels, slugs):
    """Raise ``LabelsError`` for pins naming an unknown slug, or one slug pinned twice."""
    known = set(slugs)
    problems = []
    pinned = {}
    for entry in labels.clusters:
        for slug, line in zip(entry.pins, entry.pin_lines):
            if slug not in known:
                problems.append((line, 1, f"pin {slug!r} of {entry.cluster_id} is not a memory in this store",
                                 "correct the slug (the memory file's name without .md) or remove the pin"))
            elif slug in pinned:
                problems.append((line, 1, f"{slug} is pinned to {pinned[slug][0]} on line {pinned[slug][1]} "
                                 f"and again to {entry.cluster_id}", "pin a memory to one cluster"))
            else:
                pinned[slug] = (entry.cluster_id, line)
    if problems:
        problems.sort()
        raise LabelsError(problems, labels.path)


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
                pairs.append((-round(score, _COST_DIGITS), -len(old & new), old_id, position))
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
    from router.score import build_routing_table, route_prompt

    table = build_routing_table(index)
    counts = {"own": 0, "second": 0, "capped": 0, "elsewhere": 0, "nowhere": 0}
    misses = []
    for cluster in index.clusters:
        for member in cluster.members:
            decision = route_prompt(member.hook, table, settings)
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
