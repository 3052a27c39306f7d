"""``clusters build --engine E``: between building and writing, the engine names each cluster
(``harness.clusters.naming``); after writing, the built store is enriched in the same run
(``harness.clusters.enrich``). One estimate and one confirmation cover both; each stage prints one
line per cluster. ``EngineStage`` is handed to ``harness.clusters.build.build`` as its ``namer``
by the face, with values, not argv."""

from harness.clusters.engine_process import StopPolicy
from harness.clusters.engines import EngineError


class EngineStage:
    """The engine part of one build: ``stage(result, previous, labels, md_path, source)`` names the
    built clusters (after the estimate and the confirmation) and returns ``(index, report)``;
    ``stage.enrich(md_path)`` then enriches the named store."""

    def __init__(self, engine, per_memory, dry_run=False, quiet=False, yes=False, say=print):
        self.engine = engine
        self.per_memory = per_memory
        self.dry_run = dry_run
        self.quiet = quiet
        self.yes = yes
        self.say = say
        self.memory_dir = None
        self.index = None
        self.enrich_requests = 0
        self.archived = []              # the archives enrich wrote beside the files it rewrote
        self.stopped = None             # why naming stopped the run (then enrich asks nothing)

    def __call__(self, result, previous, labels, md_path, source):
        from harness.clusters.enrich import read_bodies

        self.memory_dir = source["path"] if source.get("kind") == "memory_dir" else None
        bodies = read_bodies(self.memory_dir)
        jobs = self.confirm(result, previous, md_path, bodies)
        from harness.clusters.enrich_cli import run_with_progress

        self.index, report = run_with_progress(
            lambda on_event: name_clusters(self.engine, jobs, result, previous, labels, on_event), len(jobs),
            self.quiet, label="naming", lines=False)
        self.stopped = report["stopped"]
        if not self.quiet:
            for line in report["lines"]:
                self.say(line)
        return self.index, report

    def confirm(self, result, previous, md_path, bodies):
        """Print the estimate of naming and enriching ``result``, ask, and return the naming jobs."""
        from harness.clusters import enrich
        from harness.clusters.enrich_cli import confirm, estimate_line
        from harness.clusters.naming import naming_jobs

        old_ids = set(previous.cluster_ids) if previous is not None else set()
        jobs = naming_jobs(result.index, bodies, old_ids)
        plan, _writer = enrich.prepare(md_path, self.memory_dir, dry_run=True, index=result.index)
        requests = [job.request for job in jobs] + enrich.job_requests(plan.jobs, self.per_memory)
        self.enrich_requests = len(plan.jobs)
        figure = enrich.estimate(requests, self.engine)
        if not self.quiet:
            self.say(f"engine: {len(jobs)} naming and {len(plan.jobs)} enrich request(s); "
                     f"estimate: {estimate_line(figure, self.engine)}")
        self.engine.check()
        confirm(f"Send {figure.requests} request(s) to {self.engine.describe()}?", self.yes)
        return jobs

    def enrich(self, md_path):
        """Enrich the named store beside ``md_path`` (written, or in a dry run not); the report."""
        from harness.clusters import enrich
        from harness.clusters.enrich_cli import run_with_progress

        plan, writer = enrich.prepare(md_path, self.memory_dir, dry_run=self.dry_run, index=self.index)
        if self.stopped is not None:     # naming showed the engine cannot answer: asking again would wait as long
            outcomes = [enrich.Outcome(job.cluster.cluster_id, [m.slug for m in job.memories], 0, [],
                                       "not asked: the run stopped while naming", 0) for job in plan.jobs]
            if not self.quiet and outcomes:
                self.say(f"enrich: {len(outcomes)} cluster(s) not asked (the run stopped while naming)")
            return {"utterances_file": writer.path, "asked": len(plan.reasons), "dropped": plan.dropped,
                    "clusters": [o._asdict() for o in outcomes], "failed": len(outcomes), "written": False,
                    "archived": None, "rows": len(plan.rows)}
        try:
            result = run_with_progress(
                lambda on_event: enrich.run_enrich(plan, self.engine, self.per_memory, writer, on_event=on_event),
                len(plan.jobs), self.quiet)
        finally:  # for the init record (clusters build records what it wrote in the project)
            self.archived += [w.archived for w in (writer, writer.near) if w is not None and w.archived]
        return {"utterances_file": writer.path, "asked": len(plan.reasons), "dropped": plan.dropped,
                "clusters": [o._asdict() for o in result.outcomes], "failed": len(enrich.failed(result.outcomes)),
                "written": result.written, "archived": result.archived, "rows": len(result.rows)}


def name_clusters(engine, jobs, result, previous, labels, on_event=None):
    """``(named index, report)``: ask ``engine`` to name each cluster of ``jobs``, apply the names."""
    from harness.clusters.enrich import Event, Outcome, ask_with_retries, stopped_line
    from harness.clusters.naming import NAMES_REFUSED, apply_names, renamed

    emit = on_event or (lambda event: None)
    answers, errors, policy = {}, {}, StopPolicy()
    for number, job in enumerate(jobs):
        cluster_id = job.cluster.cluster_id
        emit(Event("start", number, len(jobs), cluster_id, None))
        try:
            answers[cluster_id], _attempts = ask_with_retries(engine, job.request)
            policy.record(None)
        except EngineError as err:
            errors[cluster_id] = err.message
            policy.record(err)
        emit(Event("done", number, len(jobs), cluster_id, Outcome(cluster_id, [], 0, [], errors.get(cluster_id), 1)))
        if policy.reason is not None:
            break
    keep = set(result.carried) | ({entry.cluster_id for entry in labels.clusters} if labels is not None else set())
    old_ids = set(previous.cluster_ids) if previous is not None else set()
    index, notes = apply_names(result.index, answers, keep, labels, old_ids)
    moved = renamed(result.index, index)
    lines = []
    for job in jobs:
        built_id = job.cluster.cluster_id
        if built_id not in answers:
            if built_id in errors:
                lines.append(f"{built_id}: naming FAILED, the builder's names are kept: {errors[built_id]}")
            continue

        final = moved.get(built_id, built_id)
        cluster = index.cluster(final)
        text = f"{built_id}: " + (f"named {final}" if final != built_id else "id kept") + \
            f"; tags {', '.join(cluster.tags) or '-'}; label {cluster.label or '-'}"
        if notes.get(built_id):
            text += "; " + "; ".join(notes[built_id])
        lines.append(text)
    # A request failed when it got no answer, or an answer with nothing usable (all its names refused).
    failed = [job.cluster.cluster_id for job in jobs if job.cluster.cluster_id not in answers
              or any(note.startswith(NAMES_REFUSED) for note in notes.get(job.cluster.cluster_id, ()))]
    not_asked = [job.cluster.cluster_id for job in jobs if job.cluster.cluster_id not in set(answers) | set(errors)]
    if policy.reason is not None:
        lines.append(stopped_line(policy.reason, len(not_asked)) + " (the builder's names are kept)")
    return index, {"engine": engine.name, "model": engine.model, "renamed": moved, "failed": failed, "lines": lines,
                   "stopped": policy.reason}
