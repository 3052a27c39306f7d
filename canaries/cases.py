"""What a canary suite holds once validated (``canaries.suite`` gives the YAML schema): its keys,
the ``Case``, ``BehaviouralCase`` and ``Suite`` records, and ``SuiteError`` with every problem
by line."""

import re
from dataclasses import dataclass, field

from router.errors import InputError

SUITE_KEYS = {
    "clusters": "cluster file, relative to the suite file (default: the bundled example store)",
    "description": "free text",
    "defaults": "expectations applied to every case that does not set its own",
    "cases": "the routing cases (a list)",
    "behavioural": "fresh-session behavioural cases (a list)",
    "sessions": "ordered prompts in one session, with compact/clear steps (a list)",
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

SESSION_KEYS = {
    "id": "unique name of the session case",
    "steps": "the steps in order: a prompt step (a mapping with 'prompt'), or 'compact' or 'clear'",
    "tags": "free labels; -k matches them",
    "xfail": "reason: a known residual that must still fail",
    "note": "free text",
}

STEP_KEYS = {
    "prompt": "the prompt, typed in this session after the steps before it",
    "injects": "member slugs that must be among the lines sent at this step",
    "not_injects": "member slugs that must not be sent at this step (held or not routed)",
    "silent": "true: nothing is sent at this step; false: something is",
    "new_lines": "exactly this many member lines are sent at this step",
    "max_chars": "at most this many characters are sent at this step",
    "compact": "true: the context is compacted here (earlier injections are gone; the SessionStart hook sends "
               "again what the last prompt relied on, which this step's expectations judge)",
    "clear": "true: /clear here (a new session: earlier injections are gone)",
}

STEP_EXPECTATIONS = ("injects", "not_injects", "silent", "new_lines", "max_chars")
CONTROL_STEPS = ("compact", "clear")

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


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
class SessionStep:
    """One step of a session case: ``kind`` is ``prompt``, ``compact`` or ``clear``."""

    kind: str
    prompt: str | None = None
    injects: tuple = ()
    not_injects: tuple = ()
    silent: bool | None = None
    new_lines: int | None = None
    max_chars: int | None = None
    line: int | None = None

    def expectations(self):
        return [name for name in STEP_EXPECTATIONS if getattr(self, name) not in (None, ())]


@dataclass(frozen=True)
class SessionCase:
    """Prompts typed one after another in one session, with what each step must send."""

    id: str
    steps: tuple
    tags: tuple = ()
    xfail: str | None = None
    line: int | None = None
    note: str | None = None

    @property
    def prompts(self):
        return [step.prompt for step in self.steps if step.kind == "prompt"]


@dataclass(frozen=True)
class Suite:
    path: str
    cluster_path: str
    defaults: dict
    cases: tuple
    behavioural: tuple = ()
    description: str | None = None
    sessions: tuple = ()
    # The parsed cluster file the cases were validated against (not part of equality).
    index: object = field(default=None, compare=False, repr=False)

    @property
    def prompts(self):
        """Every prompt, routing cases then behavioural cases, in file order."""
        return [c.prompt for c in self.cases] + [b.prompt for b in self.behavioural]

    def session(self, case_id):
        for case in self.sessions:
            if case.id == case_id:
                return case
        raise KeyError(case_id)

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
