"""``memory-router tokens report``'s model: what the slim index saves, net of what the hook injects.

(a) always-loaded bytes, lines and tokens, flat vs slim; (b) per-prompt injection sizes over a
suite's prompts; (c) the modelled session (``harness.tokens.sessionmodel``); (d) the first API
call's input tokens measured in real transcripts; (e) request bytes measured from the real client
by ``memory-router lab`` (``harness.lab.report.tokens_section``). The counting is
``harness.tokens.counts``; ``harness.tokens.cli`` prints the report.
"""

import os

from harness.tokens import counts as tk
from harness.tokens import sessionmodel
from router.errors import InputError

DEFAULT_TURNS = 20


def default_compaction():
    """When the modelled session compacts (``sessionmodel``'s documented defaults)."""
    return {"threshold": sessionmodel.AUTOCOMPACT_AT, "base": sessionmodel.BASE_CONTEXT,
            "per_prompt": sessionmodel.CONTEXT_PER_PROMPT}


def flat_and_slim(flat=None, slim=None, memory_dir=None, config_path=None):
    """``(flat path, slim path)``: ``--flat``/``--slim``, filled from ``--memory-dir`` (or the
    config's ``memory_dir``: ``harness.project.resolve_memory_dir``'s policy, never a guess):
    the newest render archive there is the flat index, its MEMORY.md the slim one. An explicit
    ``--flat``/``--slim`` wins; a relative one is looked for in the current directory, then in
    the memory directory, so the Quick start's line works from anywhere."""
    return flat_slim_and_dir(flat, slim, memory_dir, config_path)[:2]


def flat_slim_and_dir(flat=None, slim=None, memory_dir=None, config_path=None):
    """``(flat path, slim path, memory directory or None, how it was found)`` (``flat_and_slim``)."""
    from harness.memorydir import index_path, require_memory_dir
    from harness.slim.index import newest_archive

    paths = {"flat": flat, "slim": slim}
    directory, how = memory_dir, "--memory-dir" if memory_dir else "not read: --flat and --slim given"
    if directory is None and not (flat and slim):
        from harness.project import resolve_memory_dir
        from router.configfile import load_config

        directory, how = resolve_memory_dir(None, load_config(config_path), required=False)
    if directory is not None:
        directory = require_memory_dir(os.path.abspath(os.path.expanduser(directory)),
                                       fix="pass the directory that holds MEMORY.md and its MEMORY.archive-<stamp>.md")
        for name, value in paths.items():
            if value and not os.path.isabs(value) and not os.path.exists(value) \
                    and os.path.exists(os.path.join(directory, value)):
                paths[name] = os.path.join(directory, value)
        if not paths["slim"]:
            paths["slim"] = index_path(directory)
        if not paths["flat"]:
            newest = newest_archive(os.listdir(directory))
            if newest is None:
                from harness import printedcommands

                raise InputError("no MEMORY.archive-<UTC stamp>.md (the flat index slim render archives) here: "
                                 "MEMORY.md has not been slimmed, so there is no slim index to compare with",
                                 path=directory,
                                 fix=f"run {printedcommands.memory_router('slim', 'render', '--memory-dir', directory)}"
                                     " first (slim rollback undoes it), or pass --flat FILE --slim FILE")
            paths["flat"] = os.path.join(directory, newest)
    if paths["flat"] and paths["slim"] and _same_file(paths["flat"], paths["slim"]):
        raise InputError("--flat and --slim are the same file, so the report would say nothing is saved",
                         path=paths["flat"],
                         fix="pass the flat index as --flat (after slim render: the newest MEMORY.archive-<stamp>.md) "
                             "and the slim MEMORY.md as --slim, or just --memory-dir DIR after slim render")
    if not paths["flat"] or not paths["slim"]:
        missing = " and ".join(f"--{name}" for name, value in paths.items() if not value)
        raise InputError(f"no {missing} given",
                         fix="pass --memory-dir DIR (its newest archive is the flat index, its MEMORY.md the "
                             "slim one), set memory_dir in memory-router.toml, or pass --flat FILE --slim FILE")
    return paths["flat"], paths["slim"], directory, how


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _read_text(path, what):
    from router.errors import read_utf8

    return read_utf8(path, what, f"pass an existing {what}")


def suite_prompts_and_clusters(path, clusters=None, config=None):
    """``(prompts, cluster file, how it was found)`` from one parse: ``clusters`` (``--clusters``),
    else the suite's ``clusters:`` line, else the project's store as ``canary run`` finds it for
    a suite without one (``harness.canary.run.cluster_origin``)."""
    from canaries.suite import load_suite_unchecked
    from harness.canary.run import cluster_origin
    from harness.canary.suiteargs import project_store_default

    suite = load_suite_unchecked(path)
    how = cluster_origin(suite, clusters, config)
    if clusters:
        return suite.prompts, clusters, how
    if how == "the suite's clusters: line":
        return suite.prompts, suite.cluster_path, how
    default, how = project_store_default(config)
    return suite.prompts, default, how


def utterance_prompts(cluster_path):
    """``(prompts, utterances file)``: every utterance of the store (``<cluster stem>.utterances.tsv``
    beside the cluster file), in file order: the prompt set ``tokens report`` uses without a suite,
    since utterances are how people ask for each memory. ``([], path)`` when there are none."""
    from router.config import utterances_path
    from router.store.utterances import read_utterances, utterances_by_slug

    path = utterances_path(cluster_path)
    if not os.path.isfile(path):
        return [], path
    prompts = [text for texts in utterances_by_slug(read_utterances(path)).values() for text in texts]
    return prompts, path


def history_prompts(paths, cluster_path, settings):
    """``(typed prompts, what was read, sessions)`` of the session transcripts at ``paths`` (none:
    this project's transcript directory), read as ``memory-router replay`` reads them."""
    from router.store.clusterfile import load_cluster_file
    from transcripts.replay import read_sessions, transcript_files

    files, read = transcript_files(paths)
    slugs = {member.slug for member in load_cluster_file(cluster_path).members}
    sessions = list(read_sessions(files, slugs, scored_chars=settings.get("max_prompt_chars")))
    prompts = [turn.prompt for session in sessions for turn in session.prompts if turn.skip is None]
    if not prompts:
        raise InputError("no typed prompt in these transcripts", path=", ".join(read),
                         fix="pass a directory of Claude Code sessions (~/.claude/projects/<key>), or --suite SUITE")
    return prompts, [os.path.abspath(p) for p in read], sessions


def route_suite(prompts, table, settings):
    from router.hooks.session import route_fresh

    return [route_fresh(prompt, table, settings, log_as="tokens") for prompt in prompts]


def session_curve(turns, model):
    """The running input-token totals after each prompt that the chart and ``--plot`` draw: flat,
    slim + the router as the hook runs it (``routed``) and the router's worst case (``worst``),
    over the modelled session, or past the later break-even so the crossing shows
    (``chart.chart_horizon``)."""
    from harness.tokens.chart import chart_horizon

    flat, slim = model["memory"]
    steps = model["steps"]
    cap = min(len(steps[name]) for name in ("routed", "worst"))
    prompts = chart_horizon(turns, [model[name]["break_even_prompts"] for name in ("routed", "worst")], cap)
    series = {}
    for name in ("routed", "worst"):
        rows = sessionmodel.cumulative(steps[name][:prompts], flat, slim)
        series.setdefault("flat", [flat_sum for flat_sum, _slim in rows])
        series["slim_" + name] = [slim_sum for _flat, slim_sum in rows]
    return {"prompts": prompts, "turns": turns, "series": series,
            "break_even": {"slim_" + name: model[name]["break_even_prompts"] for name in ("routed", "worst")}}


MODEL_TEXT = ("flat: the flat index on every API call; slim: the slim index on every API call plus what the hook "
              "sent, from the prompt that sent it to the next compaction (the hook's own route and session "
              "stage: a line the session holds is never sent twice); worst: every prompt sends the longest lines "
              "not yet held that one injection can carry")


def model_session(prompts, prompt_set, sessions, turns, calls_per_prompt, table, settings, cluster_path, counter,
                  memory, compaction):
    """(c): the modelled session over the prompt set (``modelrun``), as the report shows it."""
    from harness.tokens import modelrun
    from router.store.clusterfile import load_cluster_file

    cluster_file = load_cluster_file(cluster_path)
    if sessions is not None:
        model = modelrun.model_history(sessions, table, settings, cluster_path, cluster_file, counter, memory)
        turns = len(model["steps"]["routed"])
        modelled = (f"the {turns} turns of your {len(sessions)} session(s) as they were: their API calls and "
                    "compactions; each session starts empty")
    else:
        model = modelrun.model_prompt_set(prompts, turns, table, settings, cluster_path, cluster_file, counter,
                                          memory, compaction, calls_per_prompt)
        what = {"suite": "the suite's {:,} prompts", "utterances": "the store's {:,} utterances"}[prompt_set["kind"]]
        modelled = (f"{turns} prompts: {what.format(len(prompts))} in a fixed spread order, "
                    f"cycled; a compaction when the context reaches {compaction['threshold']:,} tokens, growing "
                    f"{compaction['per_prompt']:,} a prompt from {compaction['base']:,}")
    model["memory"] = memory
    session = {
        "turns": turns,
        "calls_per_prompt": calls_per_prompt if sessions is None else "as in the transcripts",
        "tokens_method": counter.method,
        "model": MODEL_TEXT,
        "modelled": modelled,
        "compaction": dict(compaction, source="history" if sessions is not None else "modelled"),
        "estimate": "figures are estimates of memory input tokens: the modelled prompts, not a measured session",
        "scenarios": {name: model[name] for name in ("routed", "worst")},
    }
    session["curve"] = session_curve(turns, model)
    return session


def first_call_in(path):
    """(d): the first API call of one transcript, streamed line by line with transcripts.reader."""
    from transcripts.reader import TranscriptReader

    reader = TranscriptReader(path)
    call = tk.first_call_usage((entry.line, entry.raw) for entry in reader)
    if call is None:
        raise InputError("no assistant line with usage in this transcript, so there is no API call to measure",
                         path=path, fix="pass a session transcript that has at least one assistant reply")
    call["transcript"] = os.path.abspath(path)
    call["reader"] = reader.summary()
    return call


def build_report(counter, flat=None, slim=None, memory_dir=None, suite=None, clusters=None, config_path=None,
                 turns=DEFAULT_TURNS, calls_per_prompt=1, before=None, after=None, lab=None, history=None,
                 compaction=None):
    from router.configfile import load_config
    from router.config import settings_of

    """The ``tokens report`` object: (a) always loaded, (b) injections and (c) the modelled session
    over a prompt set: ``suite``'s prompts; with ``history`` (a list of transcript paths, empty for
    this project's), the prompts typed in those sessions; else the store's own utterances; (d)
    transcripts with ``before``/``after``, (e) the lab run with ``lab``."""
    from harness.project import Store

    flat, slim, directory, directory_from = flat_slim_and_dir(flat, slim, memory_dir, config_path)
    flat_text = _read_text(flat, "flat index")
    slim_text = _read_text(slim, "slim index")
    report = {
        "tokenizer": {"method": counter.method, "detail": counter.detail},
        "always_loaded": tk.always_loaded(flat_text, slim_text, counter),
        "injections": None,
        "session": None,
        "transcripts": None,
        "notes": [],
        "store": None,
    }
    report["always_loaded"]["flat"]["path"] = os.path.abspath(flat)
    report["always_loaded"]["slim"]["path"] = os.path.abspath(slim)
    if counter.method == "estimate":
        report["notes"].append(f"token figures are estimates ({tk.ESTIMATE_RULE}); for Claude-shaped counts, add "
                               f"the offline counter where this memory-router runs ({tk.ctok_install_command()}) "
                               "or use --tokenizer api")

    config = load_config(config_path)
    settings = settings_of(config)
    prompt_set = None
    sessions = None
    if suite:
        prompts, cluster_path, cluster_from = suite_prompts_and_clusters(suite, clusters, config)
        prompt_set = {"kind": "suite", "from": [os.path.abspath(suite)], "prompts": len(prompts)}
    else:
        from harness.project import resolve_cluster_file

        cluster_path, cluster_from = resolve_cluster_file(clusters, config, bundled=history is not None)
        prompts = []
        if history is not None:
            prompts, read, sessions = history_prompts(history, cluster_path, settings)
            prompt_set = {"kind": "history", "from": read, "prompts": len(prompts)}
        elif cluster_path is not None:
            prompts, source = utterance_prompts(cluster_path)
            if prompts:
                prompt_set = {"kind": "utterances", "from": [os.path.abspath(source)], "prompts": len(prompts)}
                report["notes"].append(f"no --suite: the prompt set is the store's own {len(prompts)} utterances "
                                       f"({source}); --history takes the prompts you typed instead")
    if prompt_set:
        from router.providers.provider import build_table
        from router.store.clusterfile import load_cluster_file

        table = build_table(load_cluster_file(cluster_path))
        decisions = route_suite(prompts, table, settings)
        rows = tk.injection_sizes(decisions, counter)
        for row, prompt in zip(rows, prompts):
            row["prompt"] = prompt if len(prompt) <= 80 else prompt[:77] + "..."
        injections = tk.injection_summary(rows, counter.method)
        injections.update(suite=os.path.abspath(suite) if suite else None, prompt_set=prompt_set,
                          cluster_file=os.path.abspath(cluster_path), per_prompt=rows)
        report["injections"] = injections
        memory = (report["always_loaded"]["flat"]["tokens"], report["always_loaded"]["slim"]["tokens"])
        report["session"] = model_session(prompts, prompt_set, sessions, turns, calls_per_prompt, table, settings,
                                          cluster_path, counter, memory, compaction or default_compaction())
    else:
        if cluster_path is None:
            cluster_from = "not read: no --suite, and no store found"
        report["notes"].append("no prompt set (no --suite, no --history, and the store has no utterances file): "
                               "without the injections each prompt adds, the net saving cannot be judged; the "
                               "always-loaded drop alone hides what the injections add back, which stay in the "
                               "history for the rest of the session")

    report["store"] = Store(cluster_path, cluster_from, directory, directory_from,
                            load_config(config_path)).to_json()
    if before or after:
        first = first_call_in(before) if before else None
        last = first_call_in(after) if after else None
        report["transcripts"] = {"before": first, "after": last, "delta": tk.transcript_delta(first, last),
                                 "method": "measured"}
    if lab:
        from harness.lab.report import tokens_section

        report["lab"] = tokens_section(lab)
    return report
