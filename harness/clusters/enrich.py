"""``memory-router clusters enrich``: utterances for each memory, written by the engine the user
chose, one request per cluster (docs/enrich.md). The model of the command: the plan is
``harness.clusters.enrich_plan``, the protocol ``enrich_protocol`` (answers: ``enrich_answers``), the engines ``engines``; this
module estimates, asks (with retries), checks each answer and writes the file after every
finished cluster, so an interrupted run keeps what finished and the next run resumes there.

Nothing here prints or reads argv: the face (``harness.clusters.enrich_cli``) passes values in and
gets events (``on_event``) and an ``EnrichResult`` back.
"""

import os
import re
import time
from collections import namedtuple

from harness.clusters.engine_process import StopPolicy
from harness.clusters.engines import EngineError, answer_tokens
from harness.clusters.enrich_answers import check_enrich_answer, check_near_misses
from harness.clusters.enrich_plan import merge_near_rows, merge_rows, new_rows
from harness.clusters.enrich_protocol import (
    DEFAULT_NEAR_MISSES,
    SYSTEM_PROMPT,
    asked_slugs,
    enrich_request,
    prompt_text,
    request_problems,
)
from router.store.learned import utc_stamp
from router.store.nearmisses import NearMiss, render_nearmisses
from router.store.utterances import render_utterances

RETRIES = 3                    # a transient failure is tried again this many times
BACKOFF_SECONDS = 2.0          # then 4, 8: exponential, capped
MAX_BACKOFF_SECONDS = 60.0

Estimate = namedtuple("Estimate", "requests input_tokens output_tokens")
Outcome = namedtuple("Outcome", "cluster_id slugs written notes error attempts near_misses", defaults=(0,))
Outcome.__doc__ = ("One cluster's result: the slugs asked, how many rows were written, notes on what was "
                   "dropped and why, the error (None when it succeeded), the attempts made, and how many "
                   "near-misses were written.")
Event = namedtuple("Event", "kind index total cluster_id detail")
Event.__doc__ = ("Progress: kind is start, retry, done or stopped; detail is the Outcome (done), the error (retry), "
                 "or why the run stopped, with the fix and how many clusters were not asked (stopped).")


def estimate_tokens(text):
    """One token per 4 bytes of UTF-8, rounded up: an estimate, not a count."""
    return -(-len(text.encode("utf-8")) // 4)


def estimate(requests, engine):
    """``Estimate`` of sending ``requests`` (protocol dicts) through ``engine``."""
    input_tokens = output_tokens = 0
    for request in requests:
        input_tokens += estimate_tokens(SYSTEM_PROMPT + prompt_text(request)) + engine.overhead_tokens
        output_tokens += answer_tokens(request)
    return Estimate(len(requests), input_tokens, output_tokens)


def job_requests(jobs, per_memory):
    """One ``memory-router.enrich/2`` request per job, checked against the protocol before sending."""
    requests = []
    for job in jobs:
        request = enrich_request(job.cluster, job.memories, per_memory, job.neighbours, job.near_misses)
        problems = request_problems(request)
        if problems:  # a bug here, not the user's input: never send a request that breaks the protocol
            raise AssertionError(f"enrich request for {job.cluster.cluster_id} breaks the protocol: {problems}")
        requests.append(request)
    return requests


def ask_with_retries(engine, request, retries=RETRIES, backoff=BACKOFF_SECONDS, sleep=time.sleep,
                     on_retry=None):
    """``(answer, attempts)``; a transient ``EngineError`` is retried after ``backoff``, then twice
    that, ... (or what the server's Retry-After says), at most ``retries`` times."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return engine.ask(request), attempt
        except EngineError as err:
            if not err.transient or attempt > retries:
                err.attempts = attempt
                raise
            delay = err.retry_after if err.retry_after is not None else backoff * 2 ** (attempt - 1)
            delay = min(MAX_BACKOFF_SECONDS, delay)
            if on_retry is not None:
                on_retry(attempt, delay, err)
            sleep(delay)


class UtterancesWriter:
    """The utterances file (or, with ``render`` and ``what``, the near-misses file), rewritten
    whole and atomically (temp file, fsync, rename) after each finished cluster. The file as it
    was when the run began is archived beside it before the first overwrite; a file changed by
    someone else meanwhile is never overwritten (the run stops with a ``RefusedError``).
    ``dry_run`` keeps the text in memory and writes nothing. ``near``: the near-misses file's
    writer, beside the utterances file's (``prepare`` sets it)."""

    near = None

    def __init__(self, path, dry_run=False, render=render_utterances, what="utterances file"):
        from harness.fileops import Snapshot

        self.path = os.fspath(path)
        self.dry_run = dry_run
        self.render = render
        self.what = what
        self.snapshot = Snapshot(self.path, what)
        self.original = self.snapshot.data
        self.existed = self.snapshot.exists
        self.text = self.original.decode("utf-8", "replace")
        self.archived = None
        self.writes = 0
        self.rows = None

    def write(self, rows):
        text = self.render(rows)
        self.rows = len(rows)
        if text == self.text:
            return False
        self.text = text
        if self.dry_run:
            return False
        from harness.archives import write_archive
        from harness.fileops import Snapshot

        data = text.encode("utf-8")
        if self.existed and self.archived is None and self.writes == 0:
            self.snapshot.require_unchanged()
            directory = os.path.dirname(os.path.abspath(self.path))
            stem = os.path.basename(self.path)[: -len(".tsv")] if self.path.endswith(".tsv") else \
                os.path.basename(self.path)
            self.archived = write_archive(directory, stem + ".archive", ".tsv", self.original)
        self.snapshot.replace(data, note=f"; the archive {self.archived} is kept" if self.archived else "")
        self.writes += 1
        self.snapshot = Snapshot(self.path, self.what)
        return True

    def diff(self):
        """The unified diff from the file as the run found it to what it holds (or would) now."""
        from harness.output import unified_diff

        return unified_diff(self.original if self.existed else None, self.text, self.path, self.path)


EnrichResult = namedtuple("EnrichResult", "outcomes rows written archived")


# A topic file's front matter, as harness.memorydir reads it; only the body after it is sent, so
# it is cut off unparsed (YAML parsing of 130 files was a third of a first run's bookkeeping).
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


def read_bodies(directory):
    """``{slug: body}`` of the topic files in a memory directory (``{}`` without one): every
    ``*.md`` but MEMORY.md and its archives, slug from the file name as ``harness.memorydir``
    makes it, body the text after the front matter."""
    if not directory:
        return {}
    from router.errors import InputError, read_utf8
    from router.store.memorystore import normalise_slug

    if not os.path.isdir(directory):
        raise InputError("memory directory does not exist" if not os.path.exists(directory)
                         else "is a file, not a memory directory", path=directory,
                         fix="pass your Claude Code memory directory (the one holding MEMORY.md)")
    from harness.memorydir import memory_file_paths

    bodies = {}
    for name, path in memory_file_paths(directory):   # a FIFO among them is named and passed over
        text = read_utf8(path, "memory file", "pass your Claude Code memory directory")
        match = _FRONT_MATTER_RE.match(text)
        bodies.setdefault(normalise_slug(name[:-3]), text[match.end():] if match else text)
    return bodies


def prepare(cluster_path, memory_dir=None, force=False, dry_run=False, index=None, near_misses=DEFAULT_NEAR_MISSES):
    """``(plan, writer)`` for the cluster file at ``cluster_path`` (or ``index``, its content when
    the caller has it), its utterances file and (``writer.near``) its near-misses file, with
    ``near_misses`` asked per cluster (0: none): a damaged utterances or near-misses file is an
    ``InputError`` (exit 2) and is never rewritten."""
    from harness.clusters.enrich_plan import plan_enrich
    from router.config import nearmisses_path, utterances_path
    from router.errors import decode_utf8
    from router.store.clusterfile import load_cluster_file
    from router.store.nearmisses import NearMissesFileError, parse_nearmisses_text
    from router.store.utterances import UtterancesFileError, parse_utterances_text

    index = index if index is not None else load_cluster_file(cluster_path)
    path = utterances_path(cluster_path)
    writer = UtterancesWriter(path, dry_run)
    rows = []
    if writer.existed:
        text = decode_utf8(writer.original, path, "utterances file", UtterancesFileError,
                           fix="save it as UTF-8, or delete it and run memory-router clusters enrich")
        rows = parse_utterances_text(text, path)
    near_path = nearmisses_path(cluster_path)
    writer.near = UtterancesWriter(near_path, dry_run, render_nearmisses, "near-misses file")
    near_rows = []
    if writer.near.existed:
        text = decode_utf8(writer.near.original, near_path, "near-misses file", NearMissesFileError,
                           fix="save it as UTF-8, or delete it and run memory-router clusters enrich")
        near_rows = parse_nearmisses_text(text, near_path)
    return plan_enrich(index, read_bodies(memory_dir), rows, force, near_rows, near_misses,
                       writer.near.existed), writer


def run_enrich(plan, engine, per_memory, writer, *, on_event=None, sleep=time.sleep, now=time.time,
               retries=RETRIES, backoff=BACKOFF_SECONDS):
    """Ask ``engine`` for each job of ``plan``, write after each cluster that succeeded, and
    return the ``EnrichResult``. A cluster whose request failed (after retries) or whose answer
    was refused writes nothing and leaves its memories' rows as they were; the run goes on with
    the next, unless ``StopPolicy`` stops it (a refused login or key; no answer on two clusters in
    a row): then one ``stopped`` event says why, with the fix, and the remaining clusters are
    reported as not asked, without an event each.
    Rows of memories that left the store go with the first write (or at the end when no cluster
    was asked)."""
    emit = on_event or (lambda event: None)
    requests = job_requests(plan.jobs, per_memory)
    rows = list(plan.rows)
    near_rows = list(plan.near_rows)
    order = list(plan.store)
    cluster_order = list(plan.cluster_hashes)
    told_no_near = False
    outcomes, policy, stopped_after = [], StopPolicy(), None
    total = len(plan.jobs)
    for index, (job, request) in enumerate(zip(plan.jobs, requests)):
        cluster_id = job.cluster.cluster_id
        slugs = asked_slugs(request)
        if stopped_after is not None:
            outcomes.append(Outcome(cluster_id, slugs, 0, [], f"not asked: the run stopped after {stopped_after}", 0))
            continue
        emit(Event("start", index, total, cluster_id, None))

        def on_retry(attempt, delay, err, cluster_id=cluster_id, index=index):
            emit(Event("retry", index, total, cluster_id, f"{err.message}; trying again in {delay:g} s"))

        try:
            answer, attempts = ask_with_retries(engine, request, retries, backoff, sleep, on_retry)
        except EngineError as err:
            outcome = Outcome(cluster_id, slugs, 0, [], err.message, getattr(err, "attempts", 1))
            policy.record(err)
        else:
            policy.record(None)
            check = check_enrich_answer(answer, slugs, per_memory)
            if check.refused:
                outcome = Outcome(cluster_id, slugs, 0, check.notes, f"answer refused: {check.refused}", attempts)
            else:
                stamp = utc_stamp(now())
                memories = {m.slug: m for m in job.memories}
                replacements = {slug: new_rows(memories[slug], texts, engine.name, engine.model, stamp)
                                for slug, texts in check.utterances.items()}
                rows = merge_rows(rows, replacements, order)
                writer.write(rows)
                notes, near_written = list(check.notes), 0
                if job.near_misses:
                    near = check_near_misses(answer, job.near_misses)
                    notes += near.notes
                    if not near.answered and not told_no_near:
                        told_no_near = True   # said once a run: an enrich/1 engine never writes them
                        notes.append("the engine answers without near_misses (a memory-router.enrich/1 engine): "
                                     "its clusters get none, and the veto uses the generic requests alone")
                    elif near.texts:
                        fresh = [NearMiss(cluster_id, text, plan.cluster_hashes[cluster_id], engine.name,
                                          engine.model or "-", stamp, 0) for text in near.texts]
                        near_rows = merge_near_rows(near_rows, cluster_id, fresh, cluster_order)
                        near_written = len(fresh)
                        if writer.near is not None:
                            writer.near.write(near_rows)
                outcome = Outcome(cluster_id, slugs, sum(len(r) for r in replacements.values()), notes,
                                  None, attempts, near_written)
        outcomes.append(outcome)
        emit(Event("done", index, total, cluster_id, outcome))
        if policy.reason is not None and stopped_after is None:
            stopped_after = cluster_id
            if index + 1 < total:
                emit(Event("stopped", index, total, cluster_id, stopped_line(policy.reason, total - index - 1)))
    if not plan.jobs and plan.dropped:
        rows = merge_rows(rows, {}, order)
        writer.write(rows)
    answered = any(not outcome.error for outcome in outcomes)
    if writer.near is not None and not writer.near.writes and (
            plan.near_dropped                                     # rows of clusters that left the store
            or (answered and not writer.near.existed and any(job.near_misses for job in plan.jobs))):
        writer.near.write(near_rows)  # asked once: even empty, the file says so (not asked again each run)
    written = writer.writes > 0 or (writer.near is not None and writer.near.writes > 0)
    return EnrichResult(outcomes, rows, written, writer.archived)


def stopped_line(reason, not_asked):
    """The one line a stopped run prints: why, the fix, and how many clusters were not asked."""
    return f"stopped: {reason}; {not_asked} cluster(s) not asked"


def failed(outcomes):
    return [o for o in outcomes if o.error]


def summary_line(outcome):
    """One line per cluster: what was kept or why nothing was, and what was dropped and why."""
    if outcome.error:
        text = f"{outcome.cluster_id}: FAILED, nothing written for {len(outcome.slugs)} memories: {outcome.error}"
    else:
        text = f"{outcome.cluster_id}: {outcome.written} utterances for {len(outcome.slugs)} memories"
        if outcome.near_misses:
            text += f", {outcome.near_misses} near-misses"
    if outcome.notes:
        text += "; " + "; ".join(outcome.notes)
    if outcome.attempts > 1:
        text += f" (after {outcome.attempts} attempts)"
    return text

