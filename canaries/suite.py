"""The canary suite schema: parse a YAML suite, validate it, report every problem as file:line.

A suite is a YAML mapping::

    clusters: ../brain/memory-layer1-clusters.md   # relative to this file; default: bundled store
    description: free text                          # optional
    defaults: {max_chars: 9500, tags: [spec]}       # optional, see DEFAULT_KEYS
    cases:
      - id: setx-plain
        prompt: "why doesn't my setx variable show up in the Bash tool?"
        routes_to: layer1_project_memory_router     # a cluster id or a list (order-insensitive)
        injects: [env_bash_tool_env_var_caching]
        tags: [spec]
    behavioural:                                    # optional (fresh-session checklist cases)
      - id: setx-cold
        prompt: "..."
        fact: env_bash_tool_env_var_caching
        expect_any: ["reboot didn't fix", "user-opened terminal"]
        forbid: ["restart the session"]

Validation is strict on purpose: an unknown key, a wrong type, an unknown cluster id or slug,
a duplicate id or a contradiction (``silent: true`` with ``routes_to``) would otherwise make a
case that can never fail or never pass, and a gate built from such cases proves nothing. Every
problem is collected and reported at once, each with the line it sits on.

Pure except for ``load_suite``/``suite_prompts``/``bundled_suites``, which read files.
"""

import os
import re
from dataclasses import dataclass, field

from router.errors import InputError

SUITE_KEYS = {
    "clusters": "cluster file, relative to the suite file (default: the bundled example store)",
    "description": "free text",
    "defaults": "expectations applied to every case that does not set its own",
    "cases": "the routing cases (a list)",
    "behavioural": "fresh-session behavioural cases (a list)",
}

CASE_KEYS = {
    "id": "unique name of the case",
    "prompt": "the prompt text, as a user would type it",
    "routes_to": "a cluster id or a list of them: exactly these clusters are routed (order-insensitive)",
    "injects": "member slugs that must appear among the injected lines",
    "not_injects": "member slugs that must not appear among the injected lines",
    "silent": "true: nothing is injected; false: something is injected",
    "max_lines": "at most this many member lines injected",
    "max_chars": "at most this many characters injected",
    "min_margin": "the top score exceeds the floor by at least this much",
    "tags": "free labels (spec, neutral, residual, ...); -k matches them",
    "xfail": "reason: a known residual that must still fail (a pass is reported and fails the gate); or a "
             "mapping {provider: reason} when only those providers get it wrong",
    "note": "free text, shown nowhere but the file",
}

# Keys of ``defaults:``. ``min_margin`` is applied only to cases that expect an injection
# (a silent case's margin is negative by definition); ``tags`` are added to each case's own.
DEFAULT_KEYS = ("max_lines", "max_chars", "min_margin", "tags")

EXPECTATION_KEYS = ("routes_to", "injects", "not_injects", "silent", "max_lines", "max_chars", "min_margin")

BEHAVIOURAL_KEYS = {
    "id": "unique name of the case",
    "prompt": "asked cold, as the first prompt of a fresh top-level session",
    "fact": "the member slug that carries the answer",
    "expect_any": "phrases, any one of which shows the documented fact in the reply",
    "forbid": "phrases of the confabulation; any one in the reply fails the case",
    "note": "free text",
}

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True)
class Problem:
    line: int | None
    column: int | None
    message: str
    fix: str | None = None


class SuiteError(InputError):
    """A suite file that cannot be used (exit 2). ``problems`` holds every one found, by line."""

    def __init__(self, path, problems):
        self.problems = tuple(sorted(problems, key=lambda p: (p.line or 0, p.column or 0)))
        first = self.problems[0]
        super().__init__(first.message, path=path, line=first.line, column=first.column, fix=first.fix)

    def format(self):
        lines = []
        for problem in getattr(self, "problems", ()):
            where = str(self.path)
            if problem.line is not None:
                where += f":{problem.line}"
                if problem.column is not None:
                    where += f":{problem.column}"
            text = f"{where}: {problem.message}"
            if problem.fix:
                text += f" (fix: {problem.fix})"
            lines.append(text)
        if not lines:
            return super().format()
        if len(lines) > 1:
            lines.append(f"{len(lines)} problems in {self.path}")
        return "\n".join(lines)

    def to_dict(self):
        return {"file": str(self.path), "problems": [
            {"line": p.line, "column": p.column, "message": p.message, "fix": p.fix} for p in self.problems]}


@dataclass(frozen=True)
class Case:
    """One routing case, with the suite's defaults already applied. ``None`` = not checked."""

    id: str
    prompt: str
    routes_to: tuple | None = None
    injects: tuple = ()
    not_injects: tuple = ()
    silent: bool | None = None
    max_lines: int | None = None
    max_chars: int | None = None
    min_margin: float | None = None
    tags: tuple = ()
    xfail: str | None = None
    line: int | None = None
    note: str | None = None
    xfail_by_provider: tuple = ()

    def xfail_for(self, provider=None):
        """The residual reason that applies when ``provider`` routes this case, or ``None``."""
        for name, reason in self.xfail_by_provider:
            if name == provider:
                return reason
        return self.xfail

    def expectations(self):
        """The expectation kinds this case checks, in a fixed order."""
        # None means "not checked"; so does an empty slug list.
        return [name for name in EXPECTATION_KEYS if getattr(self, name) not in (None, ())]

    @property
    def expects_route(self):
        return bool(self.routes_to) or bool(self.injects) or self.silent is False


@dataclass(frozen=True)
class BehaviouralCase:
    id: str
    prompt: str
    fact: str
    expect_any: tuple
    forbid: tuple = ()
    line: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class Suite:
    path: str
    cluster_path: str
    defaults: dict
    cases: tuple
    behavioural: tuple = ()
    description: str | None = None
    # The parsed cluster file the cases were validated against (not part of equality).
    index: object = field(default=None, compare=False, repr=False)

    @property
    def prompts(self):
        """Every prompt, routing cases then behavioural cases, in file order."""
        return [c.prompt for c in self.cases] + [b.prompt for b in self.behavioural]

    def case(self, case_id):
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)

    def behavioural_case(self, case_id):
        for case in self.behavioural:
            if case.id == case_id:
                return case
        raise KeyError(case_id)


# --------------------------------------------------------------------------- YAML with lines


class LocatedMap(dict):
    """A YAML mapping that remembers the 1-based line of itself, of each key and of each value."""

    line = None
    key_lines = None
    value_lines = None


class LocatedList(list):
    line = None
    item_lines = None


def _loader_class():
    import yaml

    # libyaml is ~10x faster, but a re-imported ``yaml`` (pytester restores sys.modules between
    # in-process runs) no longer shares its node classes with the C extension, which cannot be
    # re-imported; the tag resolver then fails. Use it only while the two agree.
    fast = getattr(yaml, "CSafeLoader", None)
    c_module = getattr(yaml, "_yaml", None)
    if fast is not None and getattr(c_module, "ScalarNode", None) is yaml.ScalarNode:
        return fast
    return yaml.SafeLoader


def compose_located(text, problems):
    """Parse YAML ``text`` into plain values whose mappings and lists know their lines.

    Returns ``None`` (after adding a problem) if the text is not valid YAML.
    """
    import yaml

    loader = _loader_class()(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as err:
            problems.append(_yaml_problem(err, text))
            return None
        except yaml.YAMLError as err:
            problems.append(Problem(None, None, f"invalid YAML: {err}", "correct the YAML syntax"))
            return None
        if node is None:
            return None
        try:
            return _convert(loader, node, problems)
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark or err.context_mark
            problems.append(Problem(mark.line + 1 if mark else None, mark.column + 1 if mark else None,
                                    f"invalid YAML: {err.problem or err}", "correct the YAML value"))
            return None
    finally:
        loader.dispose()


def _yaml_problem(err, text):
    mark = err.problem_mark or err.context_mark
    message = str(err.problem or err.context or "invalid YAML")
    if err.context and err.problem and err.context_mark is not None:
        message += f" ({err.context} on line {err.context_mark.line + 1})"
    line = column = None
    if mark is not None:
        # A problem found at the end of the input is reported on the last line, not past it.
        last_line = max(1, len(text.splitlines()))
        line = min(mark.line + 1, last_line)
        column = mark.column + 1 if mark.line + 1 <= last_line else None
    return Problem(line, column, f"invalid YAML: {message}", "correct the YAML syntax")


def _convert(loader, node, problems):
    # Dispatch on ``node.id``, not isinstance: libyaml's C parser keeps the node classes of the
    # first ``import yaml``, which differ from a re-imported module's (pytester does that).
    line = node.start_mark.line + 1
    if node.id == "mapping":
        loader.flatten_mapping(node)
        result = LocatedMap()
        result.line = line
        result.key_lines = {}
        result.value_lines = {}
        for key_node, value_node in node.value:
            key = _convert(loader, key_node, problems)
            key_line = key_node.start_mark.line + 1
            try:
                hash(key)
            except TypeError:
                problems.append(Problem(key_line, key_node.start_mark.column + 1,
                                        "a mapping key must be a plain word", "write 'key: value'"))
                continue
            if key in result:
                problems.append(Problem(key_line, key_node.start_mark.column + 1,
                                        f"duplicate key {key!r} (first on line {result.key_lines[key]})",
                                        "keep one of them"))
                continue
            result[key] = _convert(loader, value_node, problems)
            result.key_lines[key] = key_line
            result.value_lines[key] = value_node.start_mark.line + 1
        return result
    if node.id == "sequence":
        result = LocatedList()
        result.line = line
        result.item_lines = []
        for item in node.value:
            result.append(_convert(loader, item, problems))
            result.item_lines.append(item.start_mark.line + 1)
        return result
    if node.tag == _STR_TAG:
        return node.value  # the common case, without the constructor's bookkeeping
    return loader.construct_object(node, deep=True)


_STR_TAG = "tag:yaml.org,2002:str"


# --------------------------------------------------------------------------- validation


def _type_name(value):
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class _Checker:
    """Validates one parsed suite; collects problems instead of stopping at the first."""

    def __init__(self, problems):
        self.problems = problems

    def add(self, line, message, fix=None):
        self.problems.append(Problem(line, None, message, fix))

    def string(self, mapping, key, *, required=False, what=None):
        if key not in mapping:
            if required:
                self.add(mapping.line, f"{what or 'entry'} has no '{key}'", f"add '{key}: ...'")
            return None
        value = mapping[key]
        if not isinstance(value, str) or not value.strip():
            self.add(mapping.value_lines[key], f"'{key}' must be a non-empty string, got {_type_name(value)}",
                     f"write '{key}: \"text\"'")
            return None
        return value

    def string_list(self, mapping, key, *, allow_empty=False):
        """A string or a list of strings -> list of (value, line); ``None`` if absent or invalid."""
        if key not in mapping:
            return None
        value = mapping[key]
        line = mapping.value_lines[key]
        if isinstance(value, str) and value.strip():
            return [(value, line)]
        if not isinstance(value, list):
            self.add(line, f"'{key}' must be a string or a list of strings, got {_type_name(value)}",
                     f"write '{key}: [a, b]'")
            return None
        if not value and not allow_empty:
            fix = "write 'silent: true' to expect no route" if key == "routes_to" else f"name at least one, or remove '{key}'"
            self.add(line, f"'{key}' is an empty list", fix)
            return None
        items = []
        seen = set()
        ok = True
        for item, item_line in zip(value, value.item_lines):
            if not isinstance(item, str) or not item.strip():
                self.add(item_line, f"'{key}' items must be non-empty strings, got {_type_name(item)}",
                         "quote the item")
                ok = False
            elif item in seen:
                self.add(item_line, f"{item!r} is listed twice in '{key}'", "remove the repeat")
                ok = False
            else:
                seen.add(item)
                items.append((item, item_line))
        return items if ok else None

    def integer(self, mapping, key):
        if key not in mapping:
            return None
        value = mapping[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.add(mapping.value_lines[key], f"'{key}' must be a whole number >= 0, got {_type_name(value)}",
                     f"write '{key}: 12'")
            return None
        return value

    def number(self, mapping, key):
        if key not in mapping:
            return None
        value = mapping[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            self.add(mapping.value_lines[key], f"'{key}' must be a number >= 0, got {_type_name(value)}",
                     f"write '{key}: 2'")
            return None
        return value

    def boolean(self, mapping, key):
        if key not in mapping:
            return None
        value = mapping[key]
        if not isinstance(value, bool):
            self.add(mapping.value_lines[key], f"'{key}' must be true or false, got {_type_name(value)}",
                     f"write '{key}: true'")
            return None
        return value

    def unknown_keys(self, mapping, known, what):
        for key in mapping:
            if key not in known:
                self.add(mapping.key_lines[key], f"unknown key {key!r} in {what}",
                         "use one of: " + ", ".join(known))

    def case_id(self, mapping, seen_ids, what):
        case_id = self.string(mapping, "id", required=True, what=what)
        if case_id is None:
            return None
        line = mapping.value_lines["id"]
        if not _ID_RE.match(case_id):
            self.add(line, f"invalid id {case_id!r}",
                     "use letters, digits, '_', '.' and '-', starting with a letter or digit")
            return None
        if case_id in seen_ids:
            self.add(line, f"duplicate id {case_id!r} (first on line {seen_ids[case_id]})", "give each case its own id")
            return None
        seen_ids[case_id] = line
        return case_id


def _check_defaults(checker, raw, line=None):
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        # A scalar carries no line of its own: report the line of the 'defaults:' value.
        checker.add(getattr(raw, "line", None) or line, f"'defaults' must be a mapping, got {_type_name(raw)}",
                    "write 'defaults: {max_chars: 9500}'")
        return {}
    checker.unknown_keys(raw, DEFAULT_KEYS, "defaults")
    out = {}
    for key, value in (("max_lines", checker.integer(raw, "max_lines")),
                       ("max_chars", checker.integer(raw, "max_chars")),
                       ("min_margin", checker.number(raw, "min_margin"))):
        if value is not None:
            out[key] = value
    tags = checker.string_list(raw, "tags")
    if tags:
        out["tags"] = tuple(t for t, _ in tags)
    return out


def _check_case(checker, raw, line, defaults, seen_ids, index, cluster_label, facts_only=False):
    if not isinstance(raw, dict):
        checker.add(line, f"a case must be a mapping, got {_type_name(raw)}",
                    "write '- id: ...' with 'prompt: ...' under it")
        return None
    problems_before = len(checker.problems)
    checker.unknown_keys(raw, CASE_KEYS, "case")
    case_id = checker.case_id(raw, seen_ids, "case")
    prompt = checker.string(raw, "prompt", required=True, what=f"case {case_id or ''}".strip())
    routes_to = checker.string_list(raw, "routes_to")
    injects = checker.string_list(raw, "injects") or []
    not_injects = checker.string_list(raw, "not_injects") or []
    silent = checker.boolean(raw, "silent")
    max_lines = checker.integer(raw, "max_lines")
    max_chars = checker.integer(raw, "max_chars")
    min_margin = checker.number(raw, "min_margin")
    tags = checker.string_list(raw, "tags") or []
    note = checker.string(raw, "note")
    xfail = None
    xfail_by_provider = ()
    if "xfail" in raw:
        value = raw["xfail"]
        if isinstance(value, str) and value.strip():
            xfail = value.strip()
        elif (isinstance(value, dict) and value
              and all(isinstance(k, str) and k and isinstance(v, str) and v.strip() for k, v in value.items())):
            xfail_by_provider = tuple((k, v.strip()) for k, v in value.items())
        else:
            checker.add(raw.value_lines["xfail"], f"'xfail' must be the reason (a string) or a mapping of provider "
                        f"names to reasons, got {_type_name(value)}",
                        "write 'xfail: why this known residual still fails' or 'xfail: {spec: why}'")
    if facts_only:
        # Another cluster file (a built one) has other ids: judge only what reaches the agent.
        routes_to = None
        if xfail or xfail_by_provider:
            # A residual recorded against the hand-made ids says nothing about this file.
            xfail = None
            xfail_by_provider = ()
    if index is not None:
        for cluster_id, line in routes_to or ():
            if not index.has_cluster(cluster_id):
                checker.add(line, f"unknown cluster id {cluster_id!r} in routes_to (not in {cluster_label})",
                            "use a cluster id from the cluster file")
        for key, slugs in (("injects", injects), ("not_injects", not_injects)):
            for slug, line in slugs:
                if index.find_member(slug) is None:
                    checker.add(line, f"unknown member slug {slug!r} in {key} (not in {cluster_label})",
                                "use a member slug from the cluster file")
    routed_ids = {c for c, _ in routes_to or ()}
    if len(routed_ids) > 2:
        checker.add(raw.key_lines["routes_to"], f"routes_to names {len(routed_ids)} clusters, but the router "
                    "injects at most two (top-1 or a clear top-2): the case could never pass",
                    "name one or two clusters")
    if silent is True and "min_margin" in raw:
        checker.add(raw.key_lines["min_margin"], "'silent: true' contradicts 'min_margin' (a silent prompt's "
                    "top score is below the floor): the case could never pass", "remove 'min_margin' or 'silent'")
    if silent is True:
        for key in ("routes_to", "injects"):
            if key in raw:
                checker.add(raw.key_lines[key], f"'silent: true' contradicts '{key}': the case could never pass",
                            f"remove '{key}' or 'silent'")
    both = {s for s, _ in injects} & {s for s, _ in not_injects}
    for slug in sorted(both):
        checker.add(raw.key_lines["not_injects"], f"{slug!r} is in both injects and not_injects",
                    "keep it in one of them")
    if routes_to and index is not None:
        for slug, line in injects:
            found = index.find_member(slug)
            if found is not None and found[0].cluster_id not in routed_ids:
                checker.add(line, f"{slug!r} belongs to cluster {found[0].cluster_id}, which routes_to leaves out: "
                                  "the case could never pass", f"add {found[0].cluster_id} to routes_to")
    if max_lines is not None and len(injects) > max_lines:
        checker.add(raw.value_lines["max_lines"], f"max_lines {max_lines} is below the {len(injects)} slugs "
                    "in injects: the case could never pass", "raise max_lines")
    if case_id is None or prompt is None or len(checker.problems) > problems_before:
        return None

    effective = {
        "max_lines": max_lines, "max_chars": max_chars, "min_margin": min_margin,
    }
    for key in ("max_lines", "max_chars"):
        if effective[key] is None and key in defaults:
            effective[key] = defaults[key]
    expects_route = bool(routes_to) or bool(injects) or silent is False
    if effective["min_margin"] is None and "min_margin" in defaults and expects_route:
        effective["min_margin"] = defaults["min_margin"]
    all_tags = list(defaults.get("tags", ()))
    all_tags += [t for t, _ in tags if t not in all_tags]
    case = Case(
        id=case_id,
        prompt=prompt,
        routes_to=tuple(sorted(routed_ids)) if routes_to else None,
        injects=tuple(s for s, _ in injects),
        not_injects=tuple(s for s, _ in not_injects),
        silent=silent,
        max_lines=effective["max_lines"],
        max_chars=effective["max_chars"],
        min_margin=effective["min_margin"],
        tags=tuple(all_tags),
        xfail=xfail,
        line=raw.line,
        note=note,
        xfail_by_provider=xfail_by_provider,
    )
    if not case.expectations():
        if facts_only:
            return SKIPPED
        checker.add(raw.line, f"case {case_id} has no expectation, so it could never fail",
                    "add routes_to, injects, not_injects, silent, max_lines, max_chars or min_margin")
        return None
    return case


def _check_behavioural(checker, raw, line, seen_ids, index, cluster_label):
    if not isinstance(raw, dict):
        checker.add(line, f"a behavioural case must be a mapping, got {_type_name(raw)}",
                    "write '- id: ...' with prompt, fact, expect_any and forbid under it")
        return None
    checker.unknown_keys(raw, BEHAVIOURAL_KEYS, "behavioural case")
    before = len(checker.problems)
    case_id = checker.case_id(raw, seen_ids, "behavioural case")
    prompt = checker.string(raw, "prompt", required=True, what="behavioural case")
    fact = checker.string(raw, "fact", required=True, what="behavioural case")
    if "expect_any" not in raw:
        checker.add(raw.line, "behavioural case has no 'expect_any'",
                    "add 'expect_any: [phrases that show the documented fact]'")
    expect_any = checker.string_list(raw, "expect_any") or []
    forbid = checker.string_list(raw, "forbid", allow_empty=True) or []
    note = checker.string(raw, "note")
    if fact is not None and index is not None and index.find_member(fact) is None:
        checker.add(raw.value_lines["fact"], f"unknown member slug {fact!r} in fact (not in {cluster_label})",
                    "use the member slug that carries the answer")
    lowered_expect = {p.lower() for p, _ in expect_any}
    for phrase, line in forbid:
        if phrase.lower() in lowered_expect:
            checker.add(line, f"{phrase!r} is both expected and forbidden", "keep it in one list")
    if len(checker.problems) > before:
        return None
    return BehaviouralCase(id=case_id, prompt=prompt, fact=fact, expect_any=tuple(p for p, _ in expect_any),
                           forbid=tuple(p for p, _ in forbid), line=raw.line, note=note)


def _parse_top(text, checker):
    data = compose_located(text, checker.problems)
    if data is None:
        if not checker.problems:
            checker.add(1, "the suite file is empty", "add 'cases:' with at least one case")
        return None
    if not isinstance(data, dict):
        checker.add(getattr(data, "line", 1), f"a suite must be a mapping, got {_type_name(data)}",
                    "start the file with 'cases:'")
        return None
    checker.unknown_keys(data, SUITE_KEYS, "suite")
    return data


def _list_section(checker, data, key, required):
    if key not in data:
        if required:
            checker.add(1, f"the suite has no '{key}'", f"add '{key}:' with a list of cases")
        return _empty_list()
    value = data[key]
    if value is None:
        return _empty_list()
    if not isinstance(value, list):
        checker.add(data.value_lines[key], f"'{key}' must be a list, got {_type_name(value)}",
                    f"write '{key}:' followed by '- id: ...' entries")
        return _empty_list()
    return value


def _empty_list():
    empty = LocatedList()
    empty.item_lines = []
    return empty


SKIPPED = object()


def parse_suite_text(text, path, cluster_override=None, load_index=None, facts_only=False):
    """Validate a suite's ``text`` (read from ``path``) and return a ``Suite``.

    ``cluster_override`` replaces the suite's ``clusters:``. ``load_index(cluster_path)`` returns a
    ClusterIndex (default: ``router.clusterfile.load_cluster_file``); pass ``False`` to skip the
    cluster cross-checks (``suite_prompts`` does). ``facts_only`` drops every ``routes_to`` (and
    the ``xfail`` marks recorded against those ids), to judge a cluster file with other ids, such
    as a built one, by what it injects. Raises ``SuiteError`` listing every problem.
    """
    from router.config import bundled_cluster_file

    problems = []
    checker = _Checker(problems)
    data = _parse_top(text, checker)
    if data is None:
        raise SuiteError(path, problems)

    cluster_path = None
    cluster_line = None
    if cluster_override:
        cluster_path = os.fspath(cluster_override)
    elif "clusters" in data:
        value = checker.string(data, "clusters")
        cluster_line = data.value_lines["clusters"]
        if value is not None:
            base = os.path.dirname(os.path.abspath(path))
            cluster_path = os.path.normpath(os.path.join(base, os.path.expanduser(value)))
    else:
        cluster_path = bundled_cluster_file()

    index = None
    cluster_label = os.path.basename(cluster_path) if cluster_path else "the cluster file"
    if cluster_path and load_index is not False:
        if not os.path.isfile(cluster_path):
            if cluster_line is not None:
                checker.add(cluster_line, f"cluster file {cluster_path} does not exist",
                            "make 'clusters:' a path relative to this suite file")
            else:
                from router.errors import ClusterFileError

                raise ClusterFileError("cluster file does not exist", path=cluster_path,
                                       fix="pass an existing file with --clusters")
        else:
            # A broken cluster file is its own error (ClusterFileError, exit 2), naming its own lines.
            if load_index is None:
                from router.clusterfile import load_cluster_file as load_index
            index = load_index(cluster_path)

    description = checker.string(data, "description")
    defaults = _check_defaults(checker, data.get("defaults"), data.value_lines.get("defaults"))
    seen_ids = {}
    raw_cases = _list_section(checker, data, "cases", required=True)
    raw_behavioural = _list_section(checker, data, "behavioural", required=False)
    cases = [_check_case(checker, raw, line, defaults, seen_ids, index, cluster_label, facts_only)
             for raw, line in zip(raw_cases, raw_cases.item_lines)]
    cases = [case for case in cases if case is not SKIPPED]
    behavioural = [_check_behavioural(checker, raw, line, seen_ids, index, cluster_label)
                   for raw, line in zip(raw_behavioural, raw_behavioural.item_lines)]
    if not raw_cases and not raw_behavioural and not problems:
        checker.add(data.key_lines.get("cases", 1), "the suite has no cases, so it could never fail",
                    "add at least one case")
    if problems:
        raise SuiteError(path, problems)
    return Suite(path=os.fspath(path), cluster_path=cluster_path, defaults=dict(defaults), cases=tuple(cases),
                 behavioural=tuple(behavioural), description=description, index=index)


def read_suite_text(path):
    from router.errors import read_utf8

    try:
        return read_utf8(path, "suite file", "pass an existing YAML suite file")
    except InputError as err:
        raise SuiteError(path, [Problem(err.line, None, err.message, err.fix)]) from None


def load_suite(path, cluster_path=None, facts_only=False):
    """Read, validate and return the suite at ``path``; ``cluster_path`` overrides its ``clusters:``."""
    path = os.fspath(path)
    return parse_suite_text(read_suite_text(path), path, cluster_override=cluster_path, facts_only=facts_only)


def load_suite_unchecked(path):
    """The suite validated for structure but not against its cluster file, so a token report can
    use a suite's prompts with any store."""
    path = os.fspath(path)
    return parse_suite_text(read_suite_text(path), path, load_index=False)


def suite_prompts(path):
    """Every prompt of a suite (routing cases, then behavioural cases), in file order."""
    return load_suite_unchecked(path).prompts


def bundled_suite_dir():
    return os.path.dirname(os.path.abspath(__file__))


BUNDLED_SUITE_NAMES = ("spec.yaml", "example.yaml", "paraphrase.yaml")


def bundled_suites():
    """The suites shipped as package data (``canaries/spec.yaml``, ``example.yaml``, ``paraphrase.yaml``)."""
    base = bundled_suite_dir()
    return [os.path.join(base, name) for name in BUNDLED_SUITE_NAMES if os.path.isfile(os.path.join(base, name))]


_TOP_LEVEL_CASES_RE = re.compile(r"^cases\s*:", re.M)


def looks_like_suite(text):
    """A cheap test for a top-level ``cases:`` key (used to pick suites out of a directory)."""
    return _TOP_LEVEL_CASES_RE.search(text) is not None


def suite_files_in(directory):
    """YAML files directly in ``directory`` that look like canary suites, sorted by name."""
    found = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith((".yaml", ".yml")):
            continue
        full = os.path.join(directory, name)
        try:
            with open(full, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        if looks_like_suite(text):
            found.append(full)
    return found
