"""The fresh-session behavioural canary checklist (spec §6.2, §10, §11, §13). Pure: facts in,
checks and Markdown out; ``harness.canary.checklist`` gathers the facts from disk.

A behavioural run proves something only when the fact could reach the agent in no way but the
router's injection: Phase 2 slim in place, the fact's slug nowhere in the always-loaded
MEMORY.md, the hook installed and routing the prompt to the fact, no project file naming it, and
the prompt asked cold as the first prompt of a fresh interactive top-level session.
"""

import re
from dataclasses import dataclass

from canaries.memoryindex import HOT_HEADING, ROUTER_HEADING

MET, NOT_MET, UNKNOWN, MANUAL = "met", "not met", "unknown", "manual"
BOX = {MET: "[x]", NOT_MET: "[ ]", UNKNOWN: "[?]", MANUAL: "[ ]"}

MANUAL_STEPS = (
    "Start a fresh top-level interactive session in the project directory: a new `claude`, not "
    "`--resume`/`--continue`, not a subagent or Task, and not `claude -p`. Subagents inherit the "
    "parent's context (spec \u00a710) and print mode is not the interactive fresh session the canary "
    "was defined and recorded in (\u00a711, \u00a713), so neither is a substitute.",
    "Make the prompt below the session's very first prompt, pasted as is: no \"check your memory\" "
    "hint, nothing typed before it.",
    "Let the reply finish, then end the session without asking anything else, so the verdict reads "
    "one clean turn.",
    "Do not point the agent at MEMORY.md, the memory files or the cluster file during the turn; a "
    "reply that follows such a read is INCONCLUSIVE, never PASS.",
)


@dataclass(frozen=True)
class Check:
    status: str       # MET, NOT_MET, UNKNOWN or MANUAL
    text: str
    evidence: str = ""

    def as_dict(self):
        return {"status": self.status, "text": self.text, "evidence": self.evidence}


# --------------------------------------------------------------------------- MEMORY.md facts


def within_load_limit(facts):
    return not facts["truncated"]


# --------------------------------------------------------------------------- the checks


def check_slim(memory_path, facts):
    what = "Phase 2 slim index in place (MEMORY.md has the hot-strip and cluster-router headings)"
    if facts is None:
        return Check(UNKNOWN, what, f"no MEMORY.md at {memory_path}; pass --memory-dir" if memory_path
                     else "memory directory unknown; pass --memory-dir or set memory_dir")
    missing = [h for h, ok in ((HOT_HEADING, facts["has_hot_heading"]),
                               (ROUTER_HEADING, facts["has_router_heading"])) if not ok]
    size = f"{facts['lines']} lines, {facts['bytes']} bytes"
    if missing:
        return Check(NOT_MET, what, f"{memory_path} lacks {', '.join(repr(h) for h in missing)} ({size}); "
                                    "run `memory-router slim render` first (spec \u00a710: in Phase 1 the flat "
                                    "index answers regardless of the hook)")
    return Check(MET, what, f"{memory_path} ({size}, {len(facts['router_clusters'])} router lines, "
                            f"{len(facts['hot_slugs'])} hot-strip lines)")


def check_not_hot(slug, memory_path, facts, config_hot=(), flagged_hot=()):
    what = f"The fact `{slug}` is not always loaded (not in the hot strip, nowhere in MEMORY.md)"
    leaks = []
    if slug in config_hot:
        leaks.append("listed in the config's hot_strip")
    if slug in flagged_hot:
        leaks.append("its memory file says hot: true")
    if facts is not None:
        if facts["slug_in_hot_strip"]:
            leaks.append("in MEMORY.md's hot strip")
        if facts["slug_lines"]:
            leaks.append(f"named at {memory_path}:{', '.join(map(str, facts['slug_lines'][:5]))}")
        if facts["hook_lines"]:
            leaks.append(f"its hook text at {memory_path}:{', '.join(map(str, facts['hook_lines'][:5]))}")
    if leaks:
        return Check(NOT_MET, what, "; ".join(leaks) + " (passive priming: the run would prove nothing)")
    if facts is None:
        return Check(UNKNOWN, what, "MEMORY.md not found, so the hot strip cannot be read")
    return Check(MET, what, f"absent from {memory_path}")


def check_routes(slug, decision, cluster_path):
    """``decision`` is ``router.routing.score.route_prompt``'s result for the case's prompt."""
    what = f"The router injects `{slug}` for this prompt (deterministic routing check, spec \u00a710)"
    if decision is None:
        return Check(UNKNOWN, what, "no cluster file to route against")
    lines = [line for line in decision["lines"] if line["slug"] == slug]
    routed = ", ".join(decision["routed"]) or "nothing"
    if not lines:
        return Check(NOT_MET, what, f"{cluster_path}: the prompt routes to {routed} (top score "
                                    f"{decision['top_score']}, floor {decision['floor']}) without that line")
    return Check(MET, what, f"{cluster_path}: routes to {routed} (top score {decision['top_score']}), "
                            f"injecting `- {slug} \u2014 {lines[0]['hook']}`")


def check_hook_installed(entries, settings_problems=()):
    """``entries``: ``(location label, settings path, Entry)`` of router hooks found."""
    what = "The router hook is installed where Claude Code will run it"
    if settings_problems:
        return Check(NOT_MET, what, "; ".join(settings_problems))
    if not entries:
        return Check(NOT_MET, what, "no memory-router hook in the project, project-local or user "
                                    "settings.json; run `memory-router install`")
    return Check(MET, what, "; ".join(f"{label}: {path} {entry.where}" for label, path, entry in entries))


def check_hooks_enabled(disabled_in):
    what = "Hooks are enabled (no disableAllHooks: true)"
    if disabled_in:
        return Check(NOT_MET, what, "disableAllHooks is true in " + ", ".join(disabled_in))
    return Check(MET, what, "not set in any settings file read")


def check_no_repo_leak(slug, hits, scanned, capped, root):
    what = f"No project file names `{slug}` (spec \u00a76: a fact reached by repo grep does not count)"
    if root is None:
        return Check(UNKNOWN, what, "no project directory")
    if hits:
        shown = ", ".join(hits[:5]) + (f" and {len(hits) - 5} more" if len(hits) > 5 else "")
        return Check(NOT_MET, what, f"named in {shown}")
    if capped:
        return Check(UNKNOWN, what, f"stopped after {scanned} files under {root} without a hit")
    return Check(MET, what, f"{scanned} file{'' if scanned == 1 else 's'} under {root} scanned (memory-router's cluster file in both forms "
                            "and its archives, the suite, config and state, and the memory dir, excepted)")


def check_load_limit(memory_path, facts):
    what = "MEMORY.md fits Claude Code's load limit (first 200 lines / 25 KB)"
    if facts is None:
        return Check(UNKNOWN, what, "MEMORY.md not found")
    size = f"{facts['lines']} lines, {facts['bytes']} bytes"
    if within_load_limit(facts):
        return Check(MET, what, size)
    return Check(NOT_MET, what, f"{memory_path}: {size}; what lies past the limit is never loaded")


# --------------------------------------------------------------------------- rendering


def _inline(text):
    """Text safe inside a Markdown inline code span."""
    ticks = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (ticks + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fenced(text, info="text"):
    ticks = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * max(3, ticks + 1)
    return f"{fence}{info}\n{text}\n{fence}"


RECORD_NAME = "behavioural-canaries.jsonl"


def verdict_commands(case_id, project_dir, record=None, suite=None):
    """The shell lines a person runs after the session. The record goes beside memory-router's
    other state in ``.claude/memory-router/``, out of the project files a later run's leak scan
    reads (each record names the fact's slug)."""
    import os

    from harness import printedcommands
    from harness.project import project_state_dir

    if record is None:
        record = os.path.join(project_state_dir(project_dir or "."), RECORD_NAME)
    locate = ("transcript", "locate", "--project", project_dir or ".")
    return [
        printedcommands.memory_router(*locate),
        printedcommands.memory_router("canary", "verdict",
                                      printedcommands.substitution(printedcommands.PROGRAM, *locate),
                                      "--case", case_id, *printedcommands.option("--suite", suite),
                                      "--record", record),
    ]


def render_checklist(case, checks, context):
    """The Markdown checklist for one behavioural ``case`` (id, prompt, fact, expect_any, forbid).

    ``checks``: automatic ``Check``s; ``context``: dict with ``suite``, ``project_dir``,
    ``memory_dir``, ``commands`` (shell lines to run afterwards)."""
    out = [f"# Behavioural canary: {case.id}", ""]
    out.append(f"- suite: {_inline(str(context.get('suite') or '(bundled)'))}")
    out.append(f"- fact: {_inline(case.fact)}")
    out.append(f"- project: {_inline(str(context.get('project_dir') or '(unknown)'))}")
    if context.get("store_lines"):
        out += [f"- {line}" for line in context["store_lines"]]
    else:
        out.append(f"- memory dir: {_inline(str(context.get('memory_dir') or '(unknown)'))}")
    out += ["", "Does the router's injection, on its own, change the answer (spec \u00a76.2, \u00a711)? "
                "The run proves that only if every box below is ticked.", ""]
    out += ["## 1. Preconditions", "", "Checked just now (`[x]` met, `[ ]` not met, `[?]` could not be checked):", ""]
    for check in checks:
        line = f"- {BOX[check.status]} {check.text}"
        if check.evidence:
            prefix = "**not met:** " if check.status == NOT_MET else ""
            line += f" \u2014 {prefix}{check.evidence}"
        out.append(line)
    out += ["", "For you to do and tick:", ""]
    out += [f"- [ ] {step}" for step in MANUAL_STEPS]
    out += ["", "## 2. The prompt", "", "Paste exactly this as the first prompt of the fresh session:", "",
            _fenced(case.prompt), ""]
    out.append("The verdict looks for any of " + ", ".join(_inline(p) for p in case.expect_any)
               + " in the reply (case-insensitive, whole words)"
               + (", and none of " + ", ".join(_inline(p) for p in case.forbid) if case.forbid else "") + ".")
    out += ["", "## 3. Afterwards", "",
            "Find the session's transcript and record the verdict (exit 0 PASS, 1 FAIL, 3 INCONCLUSIVE):", "",
            _fenced("\n".join(context.get("commands") or ()), "sh"), ""]
    blocking = [c for c in checks if c.status == NOT_MET]
    if blocking:
        out.append(f"**Not ready:** {len(blocking)} precondition(s) not met; a run now would prove nothing.")
    else:
        unknown = [c for c in checks if c.status == UNKNOWN]
        if unknown:
            out.append(f"**Check by hand:** {len(unknown)} precondition(s) could not be checked automatically.")
        else:
            out.append("**Ready:** every automatic precondition is met.")
    return "\n".join(out) + "\n"


def checklist_summary(case, checks):
    """The --json shape."""
    return {
        "case": case.id,
        "prompt": case.prompt,
        "fact": case.fact,
        "expect_any": list(case.expect_any),
        "forbid": list(case.forbid),
        "preconditions": [c.as_dict() for c in checks],
        "manual_steps": list(MANUAL_STEPS),
        "ready": not any(c.status == NOT_MET for c in checks),
    }
