"""Parse, check and render the cluster file (../shared/spec/cluster-format.md).

Both forms (Markdown and TSV) parse into one immutable ``ClusterIndex``. The module is on
the hook's hot path, so it uses plain named tuples and the standard library only.

``scan_*`` functions collect every violation (for ``clusters check``); ``parse_cluster_text``
raises the first one as a ``ClusterFileError`` (for every other command; the hook fails open).
"""

import os
import re
from collections import namedtuple

from router.errors import ClusterFileError, read_utf8

Member = namedtuple("Member", "slug type hook line")
Member.__doc__ = "One memory: its slug, type, one-line hook and the source line it came from."

Cluster = namedtuple("Cluster", "cluster_id size retier tags label members line")
Cluster.__doc__ = "One cluster: id, declared size, [RETIER] flag, tag tuple, label, members, source line."

Violation = namedtuple("Violation", "line column message fix")

LAYER0_HEADING = "## Layer 0 - Cluster Router"
LAYER1_HEADING = "## Layer 1 - Member Lines"
TSV_HEADER = ("cluster_id", "size", "retier", "tags", "label", "slug", "type", "hook")

_DASH = "[-\u2013\u2014]"
_LAYER0_RE = re.compile(r"^##\s+Layer\s+0\s*" + _DASH + r"\s*Cluster\s+Router\s*$", re.I)
_LAYER1_RE = re.compile(r"^##\s+Layer\s+1\s*" + _DASH + r"\s*Member\s+Lines\s*$", re.I)
_CLUSTER_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_SLUG_RE = re.compile(r"^[a-z0-9_]+$")
_TYPE_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
# ' · ' as the format writes it; a tab or several spaces around the dot are the same separator.
_LAYER0_SEP_RE = re.compile(r"[ \t]+\u00b7[ \t]+")
_MEMBER_RE = re.compile(r"^-\s+(\S+)\s+" + _DASH + r"\s+([^;\s]+);\s?(.*)$")


class ClusterIndex:
    """An immutable, ordered set of clusters with lookups by cluster id and by member slug."""

    __slots__ = ("clusters", "path", "_by_id", "_by_slug")

    def __init__(self, clusters, path=None):
        clusters = tuple(clusters)
        setattr_ = object.__setattr__
        setattr_(self, "clusters", clusters)
        setattr_(self, "path", path)
        setattr_(self, "_by_id", {c.cluster_id: c for c in clusters})
        setattr_(self, "_by_slug", {m.slug: (c, m) for c in clusters for m in c.members})

    def __setattr__(self, name, value):
        raise AttributeError(f"ClusterIndex is immutable (cannot set {name!r})")

    def __delattr__(self, name):
        raise AttributeError(f"ClusterIndex is immutable (cannot delete {name!r})")

    def __iter__(self):
        return iter(self.clusters)

    def __len__(self):
        return len(self.clusters)

    def __eq__(self, other):
        return isinstance(other, ClusterIndex) and _comparable(self) == _comparable(other)

    __hash__ = None

    def cluster(self, cluster_id):
        return self._by_id[cluster_id]

    def has_cluster(self, cluster_id):
        return cluster_id in self._by_id

    def find_member(self, slug):
        """Return ``(cluster, member)`` for ``slug``, or ``None``."""
        return self._by_slug.get(slug)

    @property
    def members(self):
        return tuple(m for c in self.clusters for m in c.members)

    @property
    def cluster_ids(self):
        return tuple(c.cluster_id for c in self.clusters)


def _comparable(index):
    # Line numbers differ between the two forms; the information does not.
    return tuple(
        (c.cluster_id, c.size, c.retier, c.tags, c.label,
         tuple((m.slug, m.type, m.hook) for m in c.members))
        for c in index.clusters
    )


def split_tags(text):
    return tuple(t.strip() for t in text.split(",") if t.strip())


# --------------------------------------------------------------------------- Markdown


def _parse_layer0_line(text, lineno, violations):
    fields = [f.strip() for f in _LAYER0_SEP_RE.split(text[1:].strip())]
    cluster_id = fields[0] if fields else ""
    if not _CLUSTER_ID_RE.match(cluster_id):
        violations.append(Violation(lineno, 3, f"invalid cluster id {cluster_id!r}",
                                    "start the bullet with a cluster id made of letters, digits and _"))
        return None
    if len(fields) < 2 or not fields[1].isdigit():
        got = fields[1] if len(fields) > 1 else "nothing"
        violations.append(Violation(lineno, len(cluster_id) + 4,
                                    f"expected the size (an integer) after ' \u00b7 ', got {got!r}",
                                    "write '- <cluster id> \u00b7 <size> \u00b7 tags: a, b \u00b7 label: text'"))
        return None
    size = int(fields[1])
    retier = False
    tags = None
    label = ""
    rest = fields[2:]
    i = 0
    while i < len(rest):
        field = rest[i]
        if field == "[RETIER]":
            retier = True
        elif field.startswith("tags:"):
            tags = split_tags(field[5:])
        elif field.startswith("label:"):
            # A label is free text and may itself contain the separator.
            label = " \u00b7 ".join([field[6:].strip()] + rest[i + 1:])
            break
        else:
            violations.append(Violation(lineno, text.find(field) + 1,
                                        f"unexpected field {field!r} in cluster {cluster_id}",
                                        "fields are: id \u00b7 size \u00b7 [RETIER] \u00b7 tags: \u2026 \u00b7 label: \u2026"))
        i += 1
    if tags is None:
        violations.append(Violation(lineno, 1, f"cluster {cluster_id} has no 'tags:' field",
                                    "add ' \u00b7 tags: a, b' after the size"))
        tags = ()
    return Cluster(cluster_id, size, retier, tags, label, (), lineno)


def scan_markdown(text):
    """Parse the Markdown form; return ``(clusters, violations)``."""
    violations = []
    layer0 = []
    layer1 = {}
    layer1_order = []
    section = None
    current = None
    seen_layer0 = seen_layer1 = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if line.startswith("## ") or line.startswith("##\t"):
            if _LAYER0_RE.match(line):
                section, seen_layer0 = "layer0", True
            elif _LAYER1_RE.match(line):
                section, seen_layer1 = "layer1", True
            else:
                section = None
            current = None
            continue
        if line.startswith("# "):
            section, current = None, None
            continue
        if section == "layer0":
            if stripped.startswith("- ") or stripped == "-":
                cluster = _parse_layer0_line(stripped, lineno, violations)
                if cluster is not None:
                    layer0.append(cluster)
        elif section == "layer1":
            if line.startswith("### "):
                cluster_id = line[4:].strip()
                if not _CLUSTER_ID_RE.match(cluster_id):
                    violations.append(Violation(lineno, 5, f"invalid cluster id {cluster_id!r} in heading",
                                                "write '### <cluster id>' as listed in Layer 0"))
                    current = None
                    continue
                if cluster_id in layer1:
                    violations.append(Violation(lineno, 5, f"cluster {cluster_id} has a second Layer 1 heading",
                                                "merge its member lines under one heading"))
                else:
                    layer1[cluster_id] = [lineno, []]
                    layer1_order.append(cluster_id)
                current = cluster_id
            elif stripped.startswith("-"):
                match = _MEMBER_RE.match(stripped)
                if current is None:
                    violations.append(Violation(lineno, 1, "member line before any '### <cluster id>' heading",
                                                "put member lines under their cluster's heading"))
                elif not match:
                    violations.append(Violation(lineno, 1, "malformed member line",
                                                "write '- <slug> - <type>; <hook text>'"))
                else:
                    slug, mtype, hook = match.groups()
                    if not _SLUG_RE.match(slug):
                        violations.append(Violation(lineno, 3, f"invalid slug {slug!r}",
                                                    "slugs use only a-z, 0-9 and _"))
                    elif not _TYPE_RE.match(mtype):
                        violations.append(Violation(lineno, stripped.find(mtype) + 1,
                                                    f"invalid type {mtype!r}", "the type is one lowercase word"))
                    else:
                        layer1[current][1].append(Member(slug, mtype, hook.strip(), lineno))
    if not seen_layer0:
        violations.append(Violation(1, 1, f"no '{LAYER0_HEADING}' section",
                                    f"add a '{LAYER0_HEADING}' heading above the cluster list"))
    if not seen_layer1:
        violations.append(Violation(1, 1, f"no '{LAYER1_HEADING}' section",
                                    f"add a '{LAYER1_HEADING}' heading above the member lines"))
    clusters = []
    seen_ids = set()
    for cluster in layer0:
        if cluster.cluster_id in seen_ids:
            violations.append(Violation(cluster.line, 3, f"cluster {cluster.cluster_id} is listed twice in Layer 0",
                                        "keep one Layer 0 line per cluster"))
            continue
        seen_ids.add(cluster.cluster_id)
        entry = layer1.get(cluster.cluster_id)
        if entry is None:
            if seen_layer1:
                violations.append(Violation(cluster.line, 3, f"cluster {cluster.cluster_id} has no Layer 1 heading",
                                            f"add '### {cluster.cluster_id}' with its member lines"))
            continue
        clusters.append(cluster._replace(members=tuple(entry[1])))
    for cluster_id in layer1_order:
        if cluster_id not in seen_ids and seen_layer0:
            violations.append(Violation(layer1[cluster_id][0], 5, f"cluster {cluster_id} is not listed in Layer 0",
                                        f"add '- {cluster_id} \u00b7 <size> \u00b7 tags: \u2026' to Layer 0"))
    _check_clusters(clusters, violations)
    return clusters, violations


# --------------------------------------------------------------------------- TSV


def scan_tsv(text):
    """Parse the TSV form; return ``(clusters, violations)``."""
    violations = []
    lines = text.splitlines()
    if not lines or tuple(f.strip() for f in lines[0].split("\t")) != TSV_HEADER:
        violations.append(Violation(1, 1, "expected the header row " + "\\t".join(TSV_HEADER),
                                    "make the first row the eight tab-separated column names"))
        return [], violations
    order = []
    by_id = {}
    for lineno, raw in enumerate(lines[1:], 2):
        if not raw.strip():
            continue
        fields = raw.split("\t")
        if len(fields) < len(TSV_HEADER):
            violations.append(Violation(lineno, 1, f"expected 8 tab-separated fields, got {len(fields)}",
                                        "fill every column: " + ", ".join(TSV_HEADER)))
            continue
        cluster_id, size, retier, tags, label, slug, mtype = (f.strip() for f in fields[:7])
        hook = "\t".join(fields[7:]).strip()
        column = len("\t".join(fields[:5])) + 2
        if not _CLUSTER_ID_RE.match(cluster_id):
            violations.append(Violation(lineno, 1, f"invalid cluster id {cluster_id!r}",
                                        "use letters, digits and _"))
            continue
        if not size.isdigit():
            violations.append(Violation(lineno, len(fields[0]) + 2, f"size {size!r} is not an integer",
                                        "write the cluster's member count"))
            continue
        if retier not in ("0", "1"):
            violations.append(Violation(lineno, len(fields[0]) + len(fields[1]) + 3,
                                        f"retier must be 1 or 0, got {retier!r}", "write 1 or 0"))
            continue
        if not _SLUG_RE.match(slug):
            violations.append(Violation(lineno, column, f"invalid slug {slug!r}", "slugs use only a-z, 0-9 and _"))
            continue
        if not _TYPE_RE.match(mtype):
            violations.append(Violation(lineno, column + len(fields[5]) + 1, f"invalid type {mtype!r}",
                                        "the type is one lowercase word"))
            continue
        head = (int(size), retier == "1", split_tags(tags), label)
        if cluster_id not in by_id:
            by_id[cluster_id] = [lineno, head, []]
            order.append(cluster_id)
        elif by_id[cluster_id][1] != head:
            violations.append(Violation(lineno, 1,
                                        f"cluster fields of {cluster_id} disagree with its row on line {by_id[cluster_id][0]}",
                                        "repeat the same size, retier, tags and label on every row of a cluster"))
        by_id[cluster_id][2].append(Member(slug, mtype, hook, lineno))
    clusters = [
        Cluster(cid, by_id[cid][1][0], by_id[cid][1][1], by_id[cid][1][2], by_id[cid][1][3],
                tuple(by_id[cid][2]), by_id[cid][0])
        for cid in order
    ]
    _check_clusters(clusters, violations)
    return clusters, violations


# --------------------------------------------------------------------------- shared checks


def _check_clusters(clusters, violations):
    owner = {}
    for cluster in clusters:
        if cluster.size != len(cluster.members):
            violations.append(Violation(cluster.line, 1,
                                        f"cluster {cluster.cluster_id} declares size {cluster.size} "
                                        f"but has {len(cluster.members)} member lines",
                                        f"set its size to {len(cluster.members)}"))
        if not cluster.members:
            violations.append(Violation(cluster.line, 1, f"cluster {cluster.cluster_id} has no members",
                                        "remove the cluster or give it member lines"))
        for member in cluster.members:
            if member.slug in owner:
                violations.append(Violation(member.line, 3,
                                            f"memory {member.slug} is already in cluster {owner[member.slug]}",
                                            "a memory belongs to exactly one cluster: remove one of the lines"))
            else:
                owner[member.slug] = cluster.cluster_id


def detect_format(path, text):
    """'tsv' or 'md', by extension first, then by the header row."""
    lower = str(path).lower()
    if lower.endswith(".tsv"):
        return "tsv"
    if lower.endswith((".md", ".markdown")):
        return "md"
    return "tsv" if text.startswith("cluster_id\t") else "md"


def scan_cluster_text(text, path="<clusters>", fmt=None):
    """Return ``(ClusterIndex, violations)``; the index holds whatever parsed cleanly."""
    fmt = fmt or detect_format(path, text)
    clusters, violations = (scan_tsv if fmt == "tsv" else scan_markdown)(text)
    violations.sort(key=lambda v: (v.line, v.column))
    return ClusterIndex(clusters, path), violations


def parse_cluster_text(text, path="<clusters>", fmt=None):
    """Parse a cluster file's text; raise ``ClusterFileError`` at the first violation."""
    index, violations = scan_cluster_text(text, path, fmt)
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more; run 'memory-router clusters check')" if len(violations) > 1 else ""
        raise ClusterFileError(first.message + more, path=path, line=first.line,
                               column=first.column, fix=first.fix)
    return index


def read_text(path):
    """Read a UTF-8 cluster file, turning OS and decoding errors into ``ClusterFileError``."""
    return read_utf8(path, "cluster file", "pass an existing file with --clusters", ClusterFileError)


def load_cluster_file(path):
    """Read and parse a cluster file in either form."""
    path = os.fspath(path)
    return parse_cluster_text(read_text(path), path)


# --------------------------------------------------------------------------- rendering


def render_markdown(index, title="Memory clusters"):
    out = [f"# {title}", "", LAYER0_HEADING, ""]
    for c in index.clusters:
        fields = [c.cluster_id, str(len(c.members))]
        if c.retier:
            fields.append("[RETIER]")
        fields.append("tags: " + ", ".join(c.tags))
        if c.label:
            fields.append("label: " + c.label)
        out.append("- " + " \u00b7 ".join(fields))
    out += ["", LAYER1_HEADING]
    for c in index.clusters:
        out += ["", f"### {c.cluster_id}"]
        out += [f"- {m.slug} - {m.type}; {m.hook}" for m in c.members]
    return "\n".join(out) + "\n"


def render_tsv(index):
    rows = ["\t".join(TSV_HEADER)]
    for c in index.clusters:
        head = [c.cluster_id, str(len(c.members)), "1" if c.retier else "0", ", ".join(c.tags),
                _tsv_safe(c.label)]
        for m in c.members:
            rows.append("\t".join(head + [m.slug, m.type, _tsv_safe(m.hook)]))
    return "\n".join(rows) + "\n"


def _tsv_safe(text):
    return text.replace("\t", " ").replace("\n", " ")


def render_cluster_file(index, fmt):
    return render_tsv(index) if fmt == "tsv" else render_markdown(index)
