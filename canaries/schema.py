"""Validating a parsed suite against the schema in ``canaries.suite``'s docstring: types, unknown
keys, ids, cluster ids and slugs that must exist, contradictions. Every problem is collected
(with its line) rather than stopping at the first; the typed field reads are ``canaries.checker``'s."""

from canaries.cases import (
    BEHAVIOURAL_KEYS,
    CASE_KEYS,
    CONTROL_STEPS,
    DEFAULT_KEYS,
    SESSION_KEYS,
    STEP_EXPECTATIONS,
    STEP_KEYS,
    SUITE_KEYS,
    BehaviouralCase,
    Case,
    SessionCase,
    SessionStep,
)
from canaries.checker import type_name
from canaries.yamllines import LocatedList, compose_located

# What check_case returns for a case facts_only leaves nothing to check in.
SKIPPED = object()


def check_defaults(checker, raw, line=None):
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        # A scalar carries no line of its own: report the line of the 'defaults:' value.
        checker.add(getattr(raw, "line", None) or line, f"'defaults' must be a mapping, got {type_name(raw)}",
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


def check_case(checker, raw, line, defaults, seen_ids, index, cluster_label, facts_only=False):
    if not isinstance(raw, dict):
        checker.add(line, f"a case must be a mapping, got {type_name(raw)}",
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
                        f"names to reasons, got {type_name(value)}",
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


def check_behavioural(checker, raw, line, seen_ids, index, cluster_label):
    if not isinstance(raw, dict):
        checker.add(line, f"a behavioural case must be a mapping, got {type_name(raw)}",
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


def check_session(checker, raw, line, seen_ids, index, cluster_label):
    """A ``SessionCase`` from one item of ``sessions:``, or ``None`` after adding its problems."""
    if not isinstance(raw, dict):
        checker.add(line, f"a session case must be a mapping, got {type_name(raw)}",
                    "write '- id: ...' with 'steps:' under it")
        return None
    before = len(checker.problems)
    checker.unknown_keys(raw, SESSION_KEYS, "session case")
    case_id = checker.case_id(raw, seen_ids, "session case")
    tags = checker.string_list(raw, "tags") or []
    note = checker.string(raw, "note")
    xfail = None
    if "xfail" in raw:
        value = raw["xfail"]
        if isinstance(value, str) and value.strip():
            xfail = value.strip()
        else:
            checker.add(raw.value_lines["xfail"], f"'xfail' must be the reason (a string), got {type_name(value)}",
                        "write 'xfail: why this known residual still fails'")
    steps = []
    raw_steps = raw.get("steps")
    if "steps" not in raw:
        checker.add(raw.line, "session case has no 'steps'", "add 'steps:' with prompt steps")
    elif not isinstance(raw_steps, list) or not raw_steps:
        checker.add(raw.value_lines["steps"], f"'steps' must be a non-empty list, got {type_name(raw_steps)}",
                    "write 'steps:' followed by '- prompt: ...' items")
    else:
        for item, item_line in zip(raw_steps, raw_steps.item_lines):
            step = _check_step(checker, item, item_line, index, cluster_label)
            if step is not None:
                steps.append(step)
    if len(checker.problems) > before or case_id is None:
        return None
    if not any(step.kind == "prompt" for step in steps):
        checker.add(raw.line, f"session {case_id} has no prompt step", "add '- prompt: ...' steps")
        return None
    if not any(step.expectations() for step in steps):
        checker.add(raw.line, f"session {case_id} has no expectation, so it could never fail",
                    "give a step injects, not_injects, silent, new_lines or max_chars")
        return None
    return SessionCase(id=case_id, steps=tuple(steps), tags=tuple(t for t, _ in tags), xfail=xfail, line=raw.line,
                       note=note)


def _check_step(checker, raw, line, index, cluster_label):
    if isinstance(raw, str) and raw.strip() in CONTROL_STEPS:
        return SessionStep(kind=raw.strip(), line=line)
    if not isinstance(raw, dict):
        checker.add(line, f"a step must be a mapping with 'prompt', or 'compact' or 'clear', got {type_name(raw)}",
                    "write '- prompt: \"...\"' or '- compact'")
        return None
    checker.unknown_keys(raw, STEP_KEYS, "session step")
    before = len(checker.problems)
    controls = [key for key in CONTROL_STEPS if key in raw]
    kind = "prompt"
    prompt = None
    if controls:
        kind = controls[0]
        # A compact step may state what the SessionStart hook sends again; nothing else goes with it.
        allowed = {kind} | (set(STEP_EXPECTATIONS) if kind == "compact" else set())
        others = [k for k in raw if k not in allowed]
        if raw[kind] is not True:
            checker.add(raw.value_lines[kind], f"'{kind}' must be true, got {type_name(raw[kind])}",
                        f"write '- {kind}'")
        elif others:
            checker.add(raw.key_lines[others[0]], f"a '{kind}' step takes no {others[0]!r}",
                        f"put '{others[0]}' on a prompt step")
    else:
        prompt = checker.string(raw, "prompt", required=True, what="session step")
    injects = checker.string_list(raw, "injects") or []
    not_injects = checker.string_list(raw, "not_injects") or []
    silent = checker.boolean(raw, "silent")
    new_lines = checker.integer(raw, "new_lines")
    max_chars = checker.integer(raw, "max_chars")
    if index is not None:
        for key, slugs in (("injects", injects), ("not_injects", not_injects)):
            for slug, slug_line in slugs:
                if index.find_member(slug) is None:
                    checker.add(slug_line, f"unknown member slug {slug!r} in {key} (not in {cluster_label})",
                                "use a member slug from the cluster file")
    if silent is True:
        for key in ("injects", "new_lines"):
            if key in raw and (key == "injects" or raw[key]):
                checker.add(raw.key_lines[key], f"'silent: true' contradicts '{key}': the step could never pass",
                            f"remove '{key}' or 'silent'")
    if silent is False and new_lines == 0:
        checker.add(raw.key_lines["new_lines"], "'silent: false' contradicts 'new_lines: 0': the step could never pass",
                    "remove one of them")
    if new_lines is not None and len(injects) > new_lines:
        checker.add(raw.value_lines["new_lines"], f"new_lines {new_lines} is below the {len(injects)} slugs in injects: "
                    "the step could never pass", "raise new_lines")
    for slug in sorted({s for s, _ in injects} & {s for s, _ in not_injects}):
        checker.add(raw.key_lines["not_injects"], f"{slug!r} is in both injects and not_injects",
                    "keep it in one of them")
    if len(checker.problems) > before:
        return None
    return SessionStep(kind=kind, prompt=prompt, injects=tuple(s for s, _ in injects),
                       not_injects=tuple(s for s, _ in not_injects), silent=silent, new_lines=new_lines,
                       max_chars=max_chars, line=line)


def parse_top(text, checker):
    data = compose_located(text, checker.problems)
    if data is None:
        if not checker.problems:
            checker.add(1, "the suite file is empty", "add 'cases:' with at least one case")
        return None
    if not isinstance(data, dict):
        checker.add(getattr(data, "line", 1), f"a suite must be a mapping, got {type_name(data)}",
                    "start the file with 'cases:'")
        return None
    checker.unknown_keys(data, SUITE_KEYS, "suite")
    return data


def list_section(checker, data, key, required):
    if key not in data:
        if required:
            checker.add(1, f"the suite has no '{key}'", f"add '{key}:' with a list of cases")
        return _empty_list()
    value = data[key]
    if value is None:
        return _empty_list()
    if not isinstance(value, list):
        checker.add(data.value_lines[key], f"'{key}' must be a list, got {type_name(value)}",
                    f"write '{key}:' followed by '- id: ...' entries")
        return _empty_list()
    return value


def _empty_list():
    empty = LocatedList()
    empty.item_lines = []
    return empty
