"""The labels file a person keeps beside a cluster build (docs/builder.md): per cluster id a
label, extra tags, aliases and pinned members. Parsed with every schema problem named by line,
and checked against the store's slugs."""

import re
from dataclasses import dataclass

from router.errors import InputError
from router.tokens import tokenize

CLUSTER_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")



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
    from router.store.memorystore import normalise_slug

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
            if not CLUSTER_ID_RE.match(cluster_id):
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
