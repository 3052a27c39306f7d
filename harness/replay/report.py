"""The replay report: every figure and list of one run, built session by session.

``run_replay`` reads the selected sessions one at a time and replays each
(``transcripts.replay``) and folds it into a ``Tally``, which keeps counters and the
listed prompts only (each shortened to ``LISTED_PROMPT_CHARS``), so memory stays bounded by the
largest session, not the history. ``Tally.to_json`` is the ``--json`` object; the face prints
it. A ``sink`` (the ``--suite`` writer, or ``tokens report --history``) is handed every replayed
prompt as it goes.
"""

import os

from harness.replay import cost as cost_mod
from transcripts.replay import epoch_of, printable, replay_history

LISTED_PROMPT_CHARS = 300
# Damaged lines are counted in full and listed up to this many (file:line and why).
LISTED_DAMAGE = 50
# Claude Code versions whose transcripts show no compaction (no compact_boundary line): the
# cost of their sessions assumes none (tests/fixtures/README.md: 1.0.x has neither).
NO_COMPACTION_BEFORE = (2, 0)


def _short(text, width=LISTED_PROMPT_CHARS):
    text = " ".join(printable(text).split())
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def short_session(path):
    """A session file as the report names it: its id's first 8 characters (what ``--session``
    takes), or its whole name when that is short or not an id."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem[:8] if len(stem) >= 32 and stem.count("-") == 4 else os.path.basename(path)


def _ratio(part, whole):
    return round(part / whole, 4) if whole else None


def _version_tuple(version):
    from transcripts.reader import version_tuple

    return version_tuple(version)


class Tally:
    """What a replay found, folded in one session at a time."""

    def __init__(self, cluster_path, sizes=None, sizes_problem=None):
        self.cluster_path = cluster_path
        self.sizes, self.sizes_problem = sizes, sizes_problem
        self.sessions = 0
        self.prompts = 0
        self.skipped_turns = 0
        self.first = self.last = None
        self.routed = 0
        self.sending = 0
        self.routed_lines = 0
        self.routed_bytes = 0
        self.evidence_prompts = 0
        self.needs = 0
        self.met = {"sent": 0, "held": 0}
        self.misses = []
        self.quiet_routed = []
        self.quiet = 0
        self.costs = []
        self.damaged = {"bad_lines": 0, "invalid_utf8_lines": 0, "truncated_last_lines": 0}
        self.damage_list = []
        self.unlisted_damage = 0
        self.skipped_files = []
        self.versions = {}
        self.no_compaction = []

    # ------------------------------------------------------------------ folding

    def add(self, session, prompts):
        self.sessions += 1
        self.skipped_turns += session.skipped_turns
        for version in session.versions:
            self.versions[version] = self.versions.get(version, 0) + 1
        parsed = [v for v in (_version_tuple(v) for v in session.versions) if v]
        if parsed and max(parsed) < NO_COMPACTION_BEFORE:
            self.no_compaction.append(session.path)
        reader = session.reader
        self.damaged["bad_lines"] += reader.get("bad_lines", 0)
        self.damaged["invalid_utf8_lines"] += reader.get("invalid_utf8_lines", 0)
        self.damaged["truncated_last_lines"] += 1 if reader.get("truncated_last_line") else 0
        for note in session.diagnostics:
            if len(self.damage_list) < LISTED_DAMAGE:
                self.damage_list.append({"at": f"{session.path}:{note.line}", "kind": note.kind,
                                         "message": note.message})
            else:
                self.unlisted_damage += 1
        self.unlisted_damage += reader.get("unlisted_warnings", 0)
        for prompt in prompts:
            self._add_prompt(prompt)
        if self.sizes:
            figures = cost_mod.session_cost(session.turns, self.sizes["flat_bytes"], self.sizes["slim_bytes"])
            self.costs.append(dict(figures, session_id=session.session_id, path=session.path))

    def _add_prompt(self, prompt):
        self.prompts += 1
        stamp = prompt.timestamp
        if stamp and epoch_of(stamp) is not None:
            self.first = stamp if self.first is None or stamp < self.first else self.first
            self.last = stamp if self.last is None or stamp > self.last else self.last
        if prompt.routed:
            self.routed += 1
            self.routed_lines += prompt.sent_lines
            self.routed_bytes += prompt.sent_bytes
        if prompt.sent:
            self.sending += 1
        where = {"session_id": prompt.session_id, "path": prompt.path, "line": prompt.line,
                 "at": f"{short_session(prompt.path)}:{prompt.line}", "prompt": _short(prompt.prompt)}
        if not prompt.needs:
            self.quiet += 1
            if prompt.sent:
                self.quiet_routed.append(dict(where, routed=list(prompt.routed), sent=list(prompt.sent),
                                              bytes=prompt.sent_bytes))
            return
        self.evidence_prompts += 1
        for need in prompt.needs:
            self.needs += 1
            if need.met:
                self.met[need.met] += 1
                continue
            self.misses.append(dict(where, memory=need.slug, how=need.how,
                                    seen_at=f"{need.path}:{need.line}",
                                    routed_instead=list(prompt.routed), sent_instead=list(prompt.sent),
                                    why=_short(prompt.explanation, 200)))

    # ------------------------------------------------------------------ the report

    def ordered_misses(self):
        """Worst first: the memory missed most often, then a prompt that was sent something else
        (a miss and a false lead) before one that was sent nothing, then history order."""
        count = {}
        for miss in self.misses:
            count[miss["memory"]] = count.get(miss["memory"], 0) + 1
        ranked = sorted(enumerate(self.misses), key=lambda item: (-count[item[1]["memory"]], item[1]["memory"],
                                                                  not item[1]["sent_instead"], item[0]))
        return [dict(miss, misses_of_memory=count[miss["memory"]]) for _i, miss in ranked]

    def cost_totals(self):
        if not self.sizes or not self.costs:
            return None  # no session replayed (say, the only match was a FIFO): nothing to total
        flat = sum(c["flat_bytes"] for c in self.costs)
        slim = sum(c["slim_bytes"] for c in self.costs)
        return {"flat_bytes": flat, "slim_bytes": slim, "ratio": _ratio(slim, flat),
                "calls": sum(c["calls"] for c in self.costs),
                "compactions": sum(c["compactions"] for c in self.costs),
                "injection_bytes": sum(c["injection_bytes"] for c in self.costs)}

    def to_json(self, read_from, command):
        met = self.met["sent"] + self.met["held"]
        return {
            "cluster_file": os.path.abspath(self.cluster_path),
            "read": read_from,
            "sessions": self.sessions,
            "prompts": self.prompts,
            "not_routed_turns": self.skipped_turns,
            "span": {"first": self.first, "last": self.last},
            "routed": {"prompts": self.routed, "share": _ratio(self.routed, self.prompts),
                       "sending": self.sending,
                       "lines_per_routed_prompt": round(self.routed_lines / self.routed, 2) if self.routed else None,
                       "bytes_per_routed_prompt": round(self.routed_bytes / self.routed, 1) if self.routed else None},
            "evidence": {"prompts": self.evidence_prompts, "needs": self.needs, "met": met,
                         "sent": self.met["sent"], "held": self.met["held"], "recall": _ratio(met, self.needs),
                         "misses": self.ordered_misses()},
            "quiet": {"prompts": self.quiet, "routed": len(self.quiet_routed), "listed": self.quiet_routed,
                      "note": QUIET_NOTE},
            "cost": {"per_session": self.costs, "total": self.cost_totals(), "sizes": self.sizes,
                     "problem": self.sizes_problem or (None if self.costs else "no session was replayed"),
                     "model": COST_MODEL},
            "transcripts": {"damaged": dict(self.damaged, listed=self.damage_list, unlisted=self.unlisted_damage),
                            "skipped_files": [{"path": p, "why": why} for p, why in self.skipped_files],
                            "claude_code_versions": self.versions,
                            "no_compaction_recorded": self.no_compaction},
            "command": command,
        }


QUIET_NOTE = ("a prompt with no memory evidence that the router sends something is not always false priming: "
              "the agent may have used a memory it was given without reading or naming it")
COST_MODEL = ("bytes; flat: the loaded MEMORY.md on every API call; slim + router: the slim index on every call, "
              "each injection on every call from its prompt to the next compaction, and what is sent again after "
              "a compaction; calls and compactions as the transcript records them")


def run_replay(files, table, settings, cluster_path, session=None, since=None, limit=None, sizes=None,
               sizes_problem=None, sink=None, slugs=None):
    """Replay ``files`` and return the ``Tally``. ``sink(prompt_replay)`` sees each replayed prompt."""
    from router.store.clusterfile import load_cluster_file

    if slugs is None:
        slugs = {member.slug for member in load_cluster_file(cluster_path).members}
    tally = Tally(cluster_path, sizes, sizes_problem)
    for replayed, prompts in replay_history(files, table, settings, cluster_path, slugs, session=session, since=since,
                                            limit=limit, skipped=tally.skipped_files):
        if sink is not None:
            for prompt in prompts:
                sink(prompt)
        tally.add(replayed, prompts)
    return tally
