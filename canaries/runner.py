"""Evaluate canary cases against the router's decisions. Pure: no files, no output.

Verdicts:

- ``pass``: every expectation held.
- ``fail``: at least one expectation did not hold.
- ``xfail``: the case is marked ``xfail: <reason>`` (a known residual) and it still fails.
- ``xpass``: the case is marked ``xfail`` but passed. It is reported, and it fails the gate like
  ``fail`` does: a residual that quietly went away (or a case whose expectations went stale)
  must be looked at and the ``xfail`` removed, so the list of known residuals stays honest.
"""

from dataclasses import dataclass

from router.providers.provider import build_table, route
from router.hooks.session import after_compaction, route_fresh, session_step
from router.hooks.sessionrecord import new_record

VERDICTS = ("pass", "fail", "xfail", "xpass")
FAILING_VERDICTS = frozenset({"fail", "xpass"})


def _names(items):
    return ", ".join(items) if items else "nothing"


def differences(case, decision):
    """Every expectation of ``case`` that ``decision`` (a ``route_prompt`` dict) breaks, as text."""
    out = []
    routed = decision["routed"]
    injected = [line["slug"] for line in decision["lines"]]
    injected_set = set(injected)
    text = decision["additional_context"]
    chars = len(text) if text is not None else 0
    if case.routes_to is not None and set(routed) != set(case.routes_to):
        out.append(f"routes_to: expected {_names(sorted(case.routes_to))} got {_names(sorted(routed))}")
    for slug in case.injects:
        if slug not in injected_set:
            out.append(f"injects: missing {slug}")
    for slug in case.not_injects:
        if slug in injected_set:
            out.append(f"not_injects: injected {slug}")
    if case.silent is True and text is not None:
        out.append(f"silent: expected nothing injected got {_names(routed)} ({len(injected)} lines, {chars} chars)")
    if case.silent is False and text is None:
        out.append(f"silent: false expected an injection got nothing (top score {decision['top_score']}, "
                   f"floor {decision['floor']})")
    if case.max_lines is not None and len(injected) > case.max_lines:
        out.append(f"max_lines: expected at most {case.max_lines} got {len(injected)}")
    if case.max_chars is not None and chars > case.max_chars:
        out.append(f"max_chars: expected at most {case.max_chars} got {chars}")
    if case.min_margin is not None and decision["margin_over_floor"] < case.min_margin:
        out.append(f"min_margin: expected at least {_num(case.min_margin)} got {_num(decision['margin_over_floor'])} "
                   f"(top score {_num(decision['top_score'])}, floor {_num(decision['floor'])})")
    return out


def _num(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class CaseResult:
    case: object
    verdict: str
    differences: tuple
    routed: tuple
    injected: tuple
    chars: int
    top_score: float
    margin: float
    lead: float
    xfail: str | None = None

    @property
    def failed(self):
        return self.verdict in FAILING_VERDICTS

    def to_dict(self):
        case = self.case
        return {
            "id": case.id,
            "line": case.line,
            "verdict": self.verdict,
            "differences": list(self.differences),
            "expected": expected_dict(case),
            "routed": list(self.routed),
            "injected": list(self.injected),
            "lines": len(self.injected),
            "chars": self.chars,
            "score": self.top_score,
            "margin": self.margin,
            "lead_over_second": self.lead,
            "tags": list(case.tags),
            "xfail": self.xfail,
        }


def evaluate(case, decision):
    """The verdict of ``case`` given the router's ``decision`` for its prompt (an ``xfail`` mark
    for another provider than ``decision["provider"]`` does not apply)."""
    found = tuple(differences(case, decision))
    reason = case.xfail_for(decision.get("provider"))
    if reason:
        verdict = "xfail" if found else "xpass"
    else:
        verdict = "fail" if found else "pass"
    if verdict == "xpass":
        found = (f"xpass: marked xfail ({reason}) but every expectation held; remove 'xfail' "
                 "if the residual is fixed",)
    return CaseResult(
        case=case,
        verdict=verdict,
        differences=found,
        routed=tuple(decision["routed"]),
        injected=tuple(line["slug"] for line in decision["lines"]),
        chars=len(decision["additional_context"]) if decision["additional_context"] is not None else 0,
        top_score=decision["top_score"],
        margin=decision["margin_over_floor"],
        lead=decision["lead_over_second"],
        xfail=reason,
    )


def expected_dict(case):
    return {name: (list(getattr(case, name)) if isinstance(getattr(case, name), tuple) else getattr(case, name))
            for name in case.expectations()}


def expected_summary(case, sep="; ", defaults=None):
    """A short human summary of what a case expects, for the results table. Limits equal to the
    suite's ``defaults`` are left out (the table's title shows them once)."""
    defaults = defaults or {}
    parts = []
    if case.routes_to is not None:
        parts.append("\u2192\u00a0" + ", ".join(case.routes_to))
    if case.silent is True:
        parts.append("silent")
    elif case.silent is False:
        parts.append("not silent")
    parts += [f"+{slug}" for slug in case.injects]
    parts += [f"-{slug}" for slug in case.not_injects]
    if case.max_lines is not None and case.max_lines != defaults.get("max_lines"):
        parts.append(f"\u2264{case.max_lines} lines")
    if case.max_chars is not None and case.max_chars != defaults.get("max_chars"):
        parts.append(f"\u2264{case.max_chars} chars")
    if case.min_margin is not None and case.min_margin != defaults.get("min_margin"):
        parts.append(f"margin\u2265{_num(case.min_margin)}")
    return sep.join(parts)


def defaults_summary(defaults):
    parts = []
    if "max_lines" in defaults:
        parts.append(f"\u2264{defaults['max_lines']} lines")
    if "max_chars" in defaults:
        parts.append(f"\u2264{defaults['max_chars']} chars")
    if "min_margin" in defaults:
        parts.append(f"margin\u2265{_num(defaults['min_margin'])} where a route is expected")
    return ", ".join(parts)


def matches(case, pattern):
    """``-k``: a case-insensitive substring of the case id or of one of its tags."""
    if not pattern:
        return True
    needle = pattern.lower()
    return needle in case.id.lower() or any(needle in tag.lower() for tag in case.tags)


@dataclass(frozen=True)
class SuiteResult:
    suite: object
    results: tuple
    settings: dict
    sessions: tuple = ()

    def counts(self):
        """Verdict counts over the routing cases and the session cases together."""
        out = {verdict: 0 for verdict in VERDICTS}
        for result in self.results + self.sessions:
            out[result.verdict] += 1
        out["total"] = len(self.results) + len(self.sessions)
        return out

    @property
    def ok(self):
        return not any(result.failed for result in self.results + self.sessions)

    def to_dict(self):
        return {
            "suite": self.suite.path,
            "clusters": self.suite.cluster_path,
            "counts": self.counts(),
            "ok": self.ok,
            "results": [result.to_dict() for result in self.results],
            "sessions": [result.to_dict() for result in self.sessions],
        }


# --------------------------------------------------------------------------- session cases


def step_differences(step, plan):
    """Every expectation of a prompt ``step`` that ``plan`` (``router.routing.injection.plan_injection``'s
    result for it, in its session) breaks, as text."""
    out = []
    sent = [line["slug"] for line in plan["lines"]]
    sent_set = set(sent)
    held = sorted(line["slug"] for line in plan["held"])
    chars = len(plan["text"]) if plan["text"] is not None else 0
    for slug in step.injects:
        if slug not in sent_set:
            why = " (the session already held it)" if slug in held else ""
            out.append(f"injects: missing {slug}{why}")
    for slug in step.not_injects:
        if slug in sent_set:
            out.append(f"not_injects: sent {slug}")
    if step.silent is True and plan["text"] is not None:
        out.append(f"silent: expected nothing sent got {len(sent)} lines ({_names(sent)}), {chars} chars")
    if step.silent is False and plan["text"] is None:
        out.append("silent: false expected lines sent got nothing"
                   + (f" (held already: {_names(held)})" if held else " (nothing routed)"))
    if step.new_lines is not None and len(sent) != step.new_lines:
        out.append(f"new_lines: expected {step.new_lines} got {len(sent)}")
    if step.max_chars is not None and chars > step.max_chars:
        out.append(f"max_chars: expected at most {step.max_chars} got {chars}")
    return out


@dataclass(frozen=True)
class SessionResult:
    case: object
    verdict: str
    differences: tuple
    steps: tuple  # per step: dict(step, kind, line, sent, held, chars, differences)

    @property
    def failed(self):
        return self.verdict in FAILING_VERDICTS

    def to_dict(self):
        return {"id": self.case.id, "line": self.case.line, "verdict": self.verdict,
                "differences": list(self.differences), "steps": [dict(s) for s in self.steps],
                "tags": list(self.case.tags), "xfail": self.case.xfail}


def run_session(case, table, settings):
    """Type ``case``'s prompts in one simulated session, through ``router.hooks.session.session_step``
    (the very function the hook calls), and judge each step. ``compact`` and ``clear`` forget
    what the session holds, as the SessionStart hook makes the hook do. A ``compact`` step is
    judged on what that hook sends again (``router.hooks.session.after_compaction``: the lines the last
    routed prompt relied on the session holding), which the session then holds."""
    record = new_record(case.id, ["canary", 0, 0])
    steps = []
    found = []
    for number, step in enumerate(case.steps, 1):
        if step.kind != "prompt":
            text, held = (after_compaction(record, settings["max_context_chars"], float(number))
                          if step.kind == "compact" else (None, None))
            kept = len(held["held"]) if held else 0
            lines = [{"slug": slug} for _cluster, slug, _hook in record["pending"][:kept]]
            record = held or new_record(case.id, ["canary", 0, 0])
            plan = {"lines": lines, "held": [], "text": text}
            differences = step_differences(step, plan)
            found += [f"step {number} ({step.kind}, line {step.line}): {d}" for d in differences]
            steps.append({"step": number, "kind": step.kind, "line": step.line, "sent": [l["slug"] for l in lines],
                          "chars": len(text) if text else 0, "differences": differences})
            continue
        decision = route(step.prompt, table, settings)
        if decision["additional_context"] is None:
            plan = {"lines": [], "held": [], "text": None}
        else:
            plan, updated = session_step(record, decision, step.prompt, settings, now=float(number))
            record = updated or record
        differences = step_differences(step, plan)
        found += [f"step {number} (line {step.line}): {d}" for d in differences]
        steps.append({"step": number, "kind": "prompt", "line": step.line, "prompt": step.prompt,
                      "routed": list(decision["routed"]), "sent": [l["slug"] for l in plan["lines"]],
                      "held": [l["slug"] for l in plan["held"]],
                      "chars": len(plan["text"]) if plan["text"] is not None else 0,
                      "differences": differences})
    if case.xfail:
        verdict = "xfail" if found else "xpass"
    else:
        verdict = "fail" if found else "pass"
    if verdict == "xpass":
        found = [f"xpass: marked xfail ({case.xfail}) but every step held; remove 'xfail' if the residual is fixed"]
    return SessionResult(case=case, verdict=verdict, differences=tuple(found), steps=tuple(steps))


def run_cases(cases, table, settings):
    """Route and evaluate each case; a list of ``CaseResult`` in the same order."""
    # What the hook sends a session that holds nothing yet (the line selection applied).
    return [evaluate(case, route_fresh(case.prompt, table, settings)) for case in cases]


def run_suite(suite, settings, table=None, pattern=None):
    """Run every case of ``suite`` (those matching ``pattern``) with ``settings``."""
    if table is None:
        table = build_table(suite.index)
    cases = [case for case in suite.cases if matches(case, pattern)]
    sessions = [run_session(case, table, settings) for case in suite.sessions if matches(case, pattern)]
    return SuiteResult(suite=suite, results=tuple(run_cases(cases, table, settings)), settings=dict(settings),
                       sessions=tuple(sessions))


def totals(suite_results):
    out = {verdict: 0 for verdict in VERDICTS}
    out["total"] = 0
    for suite_result in suite_results:
        for key, value in suite_result.counts().items():
            out[key] += value
    return out
