"""The lab report: what each session's requests show, beside what the transcript audit says.

``build_report(run_dir)`` reads one session run (a directory with ``run.json``) or a directory of
them (``lab run --memory flat,slim,none``), measures each request log with
``harness.lab.measure``, audits each transcript with ``transcripts.audit``, and compares the two.
``report_exit_code`` is 1 when any session's audit and requests disagree (an injection the audit
did not see, or one it counts twice): a failure of the harness, not of the router.
"""

import os

from harness.lab import measure
from harness.lab.comparison import compare_sessions
from harness.lab.manifest import load_manifest, session_dirs
from harness.lab.rundir import REQUEST_LOG

MEASURED_LABEL = "request bytes measured from the real client"


def audit_injection_digests(result):
    """The audit's main-stream injections in file order, as sha256 digests of their text."""
    stream = result.stream("main")
    if stream is None:
        return []
    return [injection.sha256 for injection in stream.injections]


def audit_session_files(transcript, subagents):
    """``(main AuditResult, [subagent audit dicts])``, or ``(None, [])`` without a transcript."""
    from transcripts.audit import audit_path, result_to_dict

    if not transcript or not os.path.isfile(transcript):
        return None, []
    main = audit_path(transcript, subagent_files=subagents)
    return main, [result_to_dict(audit_path(path)) for path in subagents]


def session_report(directory):
    """One session run: manifest facts, the measurement, the audit and their agreement."""
    manifest = load_manifest(directory)
    records = measure.read_log(os.path.join(directory, REQUEST_LOG))
    analysis = measure.analyze_requests(records)
    transcript = manifest.get("transcript")
    subagents = manifest.get("subagent_transcripts") or []
    main_audit, sub_dicts = audit_session_files(transcript, subagents)
    problems = measure.check_once_as_new(analysis)
    if main_audit is not None:
        agreement = measure.compare_with_audit(analysis, audit_injection_digests(main_audit))
        if not main_audit.can_show_injections and agreement["audit"] == 0:
            # The audit says "unknown" here (an older client records no hook output): it claims
            # nothing, so there is nothing to disagree with.
            agreement["agree"] = None
            agreement["note"] = main_audit.capability_note
        audit = {"status": main_audit.status, "capability": main_audit.capability,
                 "injections": agreement["audit"], "file": transcript,
                 "subagents": [{"file": s["path"], "status": s["status"],
                                "injections": sum(len(p["injections"]) for st in s["streams"] for p in st["prompts"])}
                               for s in sub_dicts]}
    else:
        agreement = {"agree": False, "requests": len(measure.injections_from_requests(analysis)), "audit": None,
                     "missing_in_audit": [], "extra_in_audit": [], "note": "no transcript to audit"}
        audit = None
    outcomes = manifest.get("outcomes") or []
    texts = analysis.pop("context_texts")
    return {
        "run_dir": os.path.abspath(directory),
        "memory": manifest.get("memory"),
        "hook": manifest.get("hook", True),
        "client": manifest.get("client"),
        "client_version": manifest.get("client_version"),
        "session_id": manifest.get("session_id"),
        "prompts": manifest.get("prompts") or [],
        "failed_prompts": [o["index"] for o in outcomes if o.get("exit_code") != 0],
        "label": MEASURED_LABEL,
        "measured": analysis,
        "problems": problems,
        "audit": audit,
        "agreement": agreement,
        "context_headers": {cid: text.split("\n", 1)[0][:160] for cid, text in texts.items()},
    }


def build_report(run_dir, checkpoints=(10, 20, 60)):
    sessions = [session_report(d) for d in session_dirs(run_dir)]
    by_memory = {}
    for session in sessions:
        by_memory.setdefault(session["memory"], session)
    comparison = None
    if "flat" in by_memory and "slim" in by_memory:
        flat, slim = by_memory["flat"], by_memory["slim"]
        count = min(len(flat["prompts"]), len(slim["prompts"]))
        comparison = compare_sessions(flat["measured"], slim["measured"], count, checkpoints)
        comparison["label"] = MEASURED_LABEL
    return {"run_dir": os.path.abspath(run_dir), "label": MEASURED_LABEL, "sessions": sessions,
            "comparison": comparison}


def report_exit_code(report):
    """1 when any session's audit disagrees with its requests (or there is no transcript);
    an audit that cannot show injections (``agree`` None) is not a disagreement."""
    return 1 if any(s["agreement"]["agree"] is False for s in report["sessions"]) else 0


def series_for_plot(report):
    """``{label: [memory bytes of each API call]}`` per session, every thread, in arrival order."""
    out = {}
    for session in report["sessions"]:
        name = {"slim": "slim + router", "flat": "flat MEMORY.md", "none": "no MEMORY.md"}.get(
            session["memory"], session["memory"])
        if not session["hook"] and session["memory"] == "slim":
            name = "slim, no router"
        out[name] = [call["memory_bytes"] for call in session["measured"]["calls"]]
    return out


# --------------------------------------------------------------------------- rich output


def _kb(value):
    return "-" if value is None else f"{value / 1000:,.1f} KB"


def print_report(report, show_calls=True):
    from harness.output import console, table

    out = console()
    out.print(f"[bold]lab report[/bold]: {report['run_dir']} ({report['label']})")
    for session in report["sessions"]:
        measured = session["measured"]
        totals = measured["totals"]
        out.print()
        out.print(f"[bold]session {session['memory']}[/bold] (hook {'on' if session['hook'] else 'off'}), "
                  f"Claude Code {session['client_version']}, {len(session['prompts'])} prompt(s), "
                  f"{totals['calls']} API call(s) ({totals['other_calls']} outside the main thread)")
        if show_calls:
            rows = []
            for call in measured["calls"]:
                rows.append((call["seq"], "-" if call["prompt_index"] is None else call["prompt_index"] + 1,
                             call["thread"] + (" compact" if call["compaction"] else ""),
                             f"{call['request_bytes']:,}", f"{call['memory_md_bytes']:,}",
                             " ".join(call["new_contexts"]) or "-", f"{call['routed_new_bytes']:,}",
                             len(call["history_contexts"]), f"{call['routed_history_bytes']:,}",
                             f"{call['memory_bytes']:,}"))
            out.print(table(f"per API call ({report['label']})",
                            ["call", "prompt", "thread", "request B", "MEMORY.md B", "new contexts", "new B",
                             "history ctx", "history B", "memory B"], rows))
        if measured["contexts"]:
            rows = [(c["id"], c["first_prompt"] + 1 if c["first_prompt"] is not None else "-", f"{c['bytes']:,}",
                     c["new"], c["history"], c["leaked"], c["header"][:70]) for c in measured["contexts"]]
            out.print(table("routed contexts found in the requests, by content",
                            ["id", "prompt", "bytes", "new", "history", "leaked", "header"], rows))
        out.print(f"memory bytes over the session: {totals['memory_bytes']:,} (MEMORY.md {totals['memory_md_bytes']:,}"
                  f", routed {totals['routed_bytes']:,}); last main call {_kb(totals['last_call_memory_bytes'])}; "
                  f"request bytes {totals['request_bytes']:,}")
        if measured.get("memory_md") and measured["memory_md"]["truncation"]:
            out.print(f"MEMORY.md as loaded: {measured['memory_md']['truncation']}")
        for compaction in measured["compactions"]:
            carried = compaction["carried_after"]
            out.print(f"compaction at call {compaction['seq']}: {len(compaction['contexts_before'])} context(s) "
                      "before; " + ("no later call" if carried is None else
                                    f"{len(carried)} still in later requests" + (f" ({', '.join(carried)})"
                                                                                 if carried else " (gone)")))
        for problem in session["problems"]:
            out.print(f"[red]problem[/red]: {problem}")
        if measured["leaks"]:
            out.print(f"[red]leak[/red]: routed context(s) in {len(measured['leaks'])} request(s) outside the main "
                      "thread: " + ", ".join(f"{l['context']}@{l['seq']}" for l in measured["leaks"][:10]))
        if session["failed_prompts"]:
            out.print(f"[yellow]prompts the client failed on[/yellow]: {session['failed_prompts']}")
        agreement = session["agreement"]
        audit = session["audit"]
        verdict = {True: "[green]agree[/green]", False: "[red]DISAGREE[/red]",
                   None: "[yellow]unknown[/yellow]"}[agreement["agree"]]
        if agreement["agree"] is None:
            out.print(f"audit vs requests: {verdict}: {agreement['note']}; requests show {agreement['requests']} "
                      "new context(s) in the main thread")
        elif audit is None:
            out.print(f"audit vs requests: {verdict}: {agreement.get('note')}")
        else:
            out.print(f"audit vs requests: {verdict}: transcript audit {audit['status']} "
                      f"({audit['injections']} injection(s)); requests show {agreement['requests']} new "
                      "context(s) in the main thread")
            if agreement["missing_in_audit"]:
                out.print(f"  in the requests, not in the audit: {', '.join(agreement['missing_in_audit'])}")
            if agreement["extra_in_audit"]:
                out.print(f"  in the audit, not in the requests: {', '.join(agreement['extra_in_audit'])}")
            for sub in audit["subagents"]:
                out.print(f"  subagent {os.path.basename(sub['file'])}: audit {sub['status']}, "
                          f"{sub['injections']} injection(s)")
    comparison = report["comparison"]
    if comparison:
        out.print()
        rows = [(c["prompts"], f"{c['flat']:,}", f"{c['slim']:,}", "-" if c["ratio"] is None else f"{c['ratio']:.3f}x")
                for c in comparison["checkpoints"]]
        out.print(table(f"cumulative memory bytes, flat MEMORY.md vs slim + router ({report['label']})",
                        ["prompts", "flat", "slim + router", "slim / flat"], rows))
        last = comparison["last_call_memory_bytes"]
        crossing = comparison["crossing_prompt"]
        out.print(f"last call's memory: flat {_kb(last['flat'])}, slim + router {_kb(last['slim'])}; slim + router's "
                  "running total " + (f"passes flat's at prompt {crossing}" if crossing else
                                      "stays at or below flat's over the whole session"))


# --------------------------------------------------------------------------- for `tokens report --lab`


def tokens_section(run_dir):
    """(e) of ``tokens report``: the lab run's sessions in bytes, measured from the requests."""
    report = build_report(run_dir)
    sessions = []
    for session in report["sessions"]:
        totals = session["measured"]["totals"]
        first_md = session["measured"].get("memory_md") or {}
        sessions.append({"memory": session["memory"], "hook": session["hook"], "prompts": len(session["prompts"]),
                         "calls": totals["calls"], "request_bytes": totals["request_bytes"],
                         "memory_bytes": totals["memory_bytes"], "memory_md_bytes_per_call": first_md.get("bytes", 0),
                         "routed_bytes": totals["routed_bytes"],
                         "last_call_memory_bytes": totals["last_call_memory_bytes"],
                         "memory_md_truncation": first_md.get("truncation"),
                         "audit_agrees": session["agreement"]["agree"]})
    return {"run_dir": report["run_dir"], "method": "measured", "label": MEASURED_LABEL,
            "client_version": next((s["client_version"] for s in report["sessions"]), None),
            "sessions": sessions, "comparison": report["comparison"] and {
                k: report["comparison"][k] for k in ("prompts", "checkpoints", "crossing_prompt",
                                                     "last_call_memory_bytes")}}


def print_tokens_section(section):
    from harness.output import console, table

    rows = [(s["memory"] + (" + router" if s["hook"] else ""), s["prompts"], s["calls"], f"{s['request_bytes']:,}",
             f"{s['memory_md_bytes_per_call']:,}", f"{s['memory_bytes']:,}", _kb(s["last_call_memory_bytes"]))
            for s in section["sessions"]]
    out = console()
    out.print(table(f"(e) lab session, {section['label']} (Claude Code {section['client_version']})",
                    ["session", "prompts", "calls", "request B", "MEMORY.md B/call", "memory B", "last call"], rows))
    comparison = section["comparison"]
    if comparison:
        ratios = ", ".join(f"{c['prompts']}: {c['ratio']:.3f}x" for c in comparison["checkpoints"] if c["ratio"])
        out.print(f"slim + router / flat, cumulative memory bytes by prompt count: {ratios}")
    print(f"lab run: {section['run_dir']}")
