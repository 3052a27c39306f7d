"""``memory-router learn TRANSCRIPT|DIR ...``: learned terms from the user's own sessions.

Where the agent read a memory file, or named a memory's slug, that the router had not injected
for that prompt (``transcripts.evidence``), the prompt's words become learned terms of that
memory through ``router.store.learned`` (one write, the same caps and hand-tag rule as every other
feedback), in the reviewable file beside the cluster file. ``--dry-run`` prints the file's
unified diff and writes nothing.

Writing needs ``learning = true`` in the config, as the MCP ``record_feedback`` tool does: that
one switch says whether learned terms exist and are read at all (with it off, ``search_memory``
and the default provider ignore the file), so a ``learn`` that wrote with learning off would
leave terms that silently do nothing until someone turned it on for another reason. A dry run
needs nothing: it is how to see what turning learning on would learn.
"""

import calendar
import os
import re
import sys
import time

from harness import options
from harness.context import is_bundled, resolve_cli_clusters
from harness.output import unified_diff
from router import config as config_mod
from router.configfile import load_config
from transcripts.evidence import transcript_files
from router.errors import InputError, RefusedError

_SURROGATE = re.compile("[\ud800-\udfff]")


def epoch_of(stamp):
    """Seconds since the epoch of a transcript timestamp (``2026-11-30T17:16:32.108Z``), else ``None``."""
    if not isinstance(stamp, str) or len(stamp) < 19:
        return None
    try:
        return calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def printable(value):
    """``value`` with every lone surrogate (half an emoji, as JSON can carry it: ``"\\ud83d"``)
    replaced by U+FFFD, through dicts, lists and tuples: such a string cannot be encoded, so one
    in a prompt made every output mode crash."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {printable(key): printable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(printable(item) for item in value)
    return value


def gather(files, slugs):
    """``(sessions, feedbacks)``: each session's evidence (only the prompts that met a memory are
    kept, so a directory of long sessions stays small) and the feedbacks to apply, oldest first.
    Prompt texts come out printable (``printable``)."""
    from transcripts.evidence import session_evidence

    sessions, found = [], []
    for path in files:
        session = session_evidence(path, slugs)
        kept = tuple(p._replace(prompt=printable(p.prompt)) for p in session.prompts if p.evidence or p.ignored)
        sessions.append((session._replace(prompts=kept), len(session.prompts)))
        for prompt in kept:
            for sighting in prompt.evidence:
                found.append((prompt.timestamp or "", prompt, sighting))
    found.sort(key=lambda item: item[0])  # stable: one session's evidence keeps its order
    return sessions, [(prompt, sighting) for _stamp, prompt, sighting in found]


def utterance_words(cluster_path):
    """``(stems by slug, utterances file, problem)``: each memory's utterance stems
    (``router.routing.uttertable``), so a report can say which evidence words its utterances already hold.
    A damaged utterances file is a ``problem`` (reported; learning does not depend on it)."""
    from router.routing.uttertable import read_beside, stems_of_text

    utterances, path, problem = read_beside(cluster_path)
    stems = {slug: set().union(*(stems_of_text(text) for text in texts)) for slug, texts in utterances.items()}
    return stems, path, problem


def utterance_hits(prompt, stems):
    """The prompt's routing words whose stem is among ``stems`` (one memory's utterance stems)."""
    from router.tokens import tokenize
    from router.routing.uttertable import stems_of_text

    return sorted(word for word in tokenize(prompt) if stems_of_text(word) & stems) if stems else []


def cmd_learn(args):
    config = load_config(args.config)
    learning = bool(config and config.get("learning"))
    cap = config["learned_cap"] if config else config_mod.LEARNING_DEFAULTS["learned_cap"]
    skipped = []  # a FIFO or device in a transcript folder: named below, never opened
    files = transcript_files(args.paths, skipped)  # transcripts.evidence: what replay reads too
    cluster_path = resolve_cli_clusters(args.clusters, config, quiet=args.json)
    bundled = is_bundled(cluster_path)
    if not args.dry_run:
        where = (config or {}).get("source") or "memory-router.toml"
        if not learning:
            raise RefusedError("learning is off, so nothing is learned; nothing was written",
                               fix=f"set learning = true in {where} (docs/learning.md), or pass --dry-run to "
                                   "see what would be learned")
        if bundled:
            raise RefusedError("the cluster file is the bundled example store; learned terms are never written "
                               "into the installed package", fix="point --clusters or clusters in "
                                                                 "memory-router.toml at your own cluster file")
    from router.store.clusterfile import load_cluster_file
    from router.config import learned_path
    from router.store.feedback import add_feedbacks

    index = load_cluster_file(cluster_path)
    slugs = {member.slug for member in index.members}
    sessions, found = gather(files, slugs)
    target = learned_path(cluster_path)
    feedbacks = [(prompt.prompt, sighting.slug, True, epoch_of(prompt.timestamp)) for prompt, sighting in found]
    report = RunReport(args, cluster_path, target, learning, cap, sessions, found, utterance_words(cluster_path))
    report.skipped = skipped
    # Everything printed is rendered before the file is written: a run that fails, fails first.
    plan = add_feedbacks(target, feedbacks, index=index, cap=cap, source="learn", dry_run=True)
    will_write = not args.dry_run and plan["after"] is not None and plan["after"] != plan["before"]
    output = report.render(plan, will_write)
    if will_write:
        from harness import setuprecord
        from harness.project import project_dir

        # recorded with its hash, so uninstall --all takes it out again if nobody changed it since
        with setuprecord.recording(project_dir(None), [target], "learn"):
            result = add_feedbacks(target, feedbacks, index=index, cap=cap, source="learn")
        if (result["before"], result["after"], result["written"]) != (plan["before"], plan["after"], True):
            output = report.render(result, result["written"])   # another writer came between
        if result["written"]:
            from harness.context import compile_hook_table

            compile_hook_table(cluster_path, config)
    sys.stdout.write(output)
    return 0


class RunReport:
    """What one ``learn`` run prints, for a result of ``add_feedbacks`` (planned or written)."""

    def __init__(self, args, cluster_path, target, learning, cap, sessions, found, utterances):
        self.args, self.cluster_path, self.target = args, cluster_path, target
        self.learning, self.cap, self.sessions, self.found = learning, cap, sessions, found
        self.utterance_stems, self.utterances_file, self.utterances_problem = utterances
        self.skipped = []

    def render(self, result, written):
        diff = unified_diff(result["before"], result["after"], self.target, self.target) \
            if result["after"] is not None else ""
        learned = [{"path": prompt.path, "line": prompt.line, "prompt": prompt.prompt, "slug": sighting.slug,
                    "how": sighting.how, "seen_at": {"path": sighting.path, "line": sighting.line},
                    "added": report["added"], "refreshed": report["refreshed"], "skipped": report["skipped"],
                    "evicted": report["evicted"],
                    "utterance_hits": utterance_hits(prompt.prompt, self.utterance_stems.get(sighting.slug))}
                   for (prompt, sighting), report in zip(self.found, result["reports"])]
        if self.args.json:
            import json

            return json.dumps(printable({
                "cluster_file": os.path.abspath(self.cluster_path), "learned_file": result["path"],
                "dry_run": self.args.dry_run, "learning": self.learning, "learned_cap": self.cap,
                "written": written, "utterances_file": self.utterances_file,
                "utterances_problem": self.utterances_problem,
                "sessions": [dict(s.as_dict(), prompt_count=count) for s, count in self.sessions],
                "learned": learned, "diff": diff,
                "skipped_files": [{"path": path, "why": why} for path, why in self.skipped],
            }), indent=2, ensure_ascii=False) + "\n"
        return printable(self._human(learned, result, diff, written))

    def _human(self, learned, result, diff, written):
        from harness.output import console, table

        out = console()
        with out.capture() as captured:
            for path, why in self.skipped:
                out.print(f"not a transcript, skipped: {path}: {why}", markup=False, soft_wrap=True)
            for session, count in self.sessions:
                evidence = session.evidence_count
                out.print(f"{session.path}: {count} prompt{'s' if count != 1 else ''}, {evidence} "
                          f"piece{'s' if evidence != 1 else ''} of evidence", markup=False)
                if not session.injections_visible:
                    out.print(f"  nothing learned from it: {session.visibility}", markup=False)
                for prompt in session.prompts:
                    for slug, why in prompt.ignored:
                        reason = "it was injected for this prompt" if why == "injected" else "it was already in context"
                        out.print(f"  line {prompt.line}: {slug} not evidence ({reason})", markup=False)
            if learned:
                rows = [(f"{os.path.basename(item['path'])}:{item['line']}", _short(item["prompt"], 50), item["slug"],
                         item["how"], ", ".join(item["added"] + item["refreshed"]) or "-",
                         ", ".join(sum(item["skipped"].values(), [])) or "-",
                         ", ".join(item["utterance_hits"]) or "-")
                        for item in learned]
                out.print(table("Evidence: memories the agent needed that the router did not inject",
                                ["prompt at", "prompt", "memory", "how", "terms", "skipped", "in its utterances"],
                                [printable(row) for row in rows]))
            else:
                out.print("no evidence: every memory the agent read or named had been injected (or none was)")
            if self.utterances_problem:
                out.print(f"utterances not read ({self.utterances_problem}); learning does not need them",
                          markup=False)
            evicted = sum(len(item["evicted"]) for item in learned)
            if evicted:
                out.print(f"{evicted} older learned term(s) leave to keep each cluster under its cap")
            if self.args.dry_run:
                out.print(f"dry run: {result['path']} is unchanged" + ("" if self.learning else
                          " (learning is off: set learning = true to write)"), markup=False)
            elif written:
                out.print(f"wrote {result['path']}", markup=False)
            else:
                out.print(f"nothing to change in {result['path']}", markup=False)
        text = captured.get()
        # The diff goes out as plain text, unwrapped, so it can be read (or applied) as a patch.
        return text + (diff or "(no change)\n") if self.args.dry_run else text


def _short(text, width=70):
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def register(subparsers):
    import argparse

    learn = subparsers.add_parser(
        "learn", help="learn terms from sessions where the agent read a memory the router had not injected",
        description="Reads session transcripts (a .jsonl file, or a directory: every session under it, each with "
                    "its subagent transcripts). For each typed prompt, a memory file the agent Read (or fetched "
                    "with the MCP get_memory tool), or a memory slug it named in its reply, that the router had "
                    "not injected for that prompt and that was not already in context is evidence: the prompt's "
                    "words become learned terms of that memory, in <cluster file stem>.learned.tsv beside the "
                    "cluster file (docs/learning.md). Hand tags always win; at most learned_cap terms per "
                    "cluster, the oldest leave first. Writing needs learning = true; --dry-run shows the diff and "
                    "writes nothing.",
        epilog="learning defaults (memory-router.toml or [tool.memory-router]):\n"
               + "\n".join(f"  {key} = {str(value).lower()}: {config_mod.LEARNING_DOCS[key]}"
                           for key, value in config_mod.LEARNING_DEFAULTS.items())
               + "\n\nexit codes: 0 learned (or nothing to learn, or a dry run); 1 refused (learning is off, or "
                 "the cluster file is the bundled example store); 2 a transcript, cluster, config or "
                 "learned-terms file cannot be read",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    learn.add_argument("paths", nargs="+", metavar="TRANSCRIPT|DIR", help="session transcript(s) or directories")
    options.clusters_and_config(learn)
    options.dry_run(learn, "show the learned file's diff; write nothing")
    options.json_output(learn)
    learn.set_defaults(handler=cmd_learn)
