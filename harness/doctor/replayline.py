"""The doctor's one line from ``memory-router replay``: when this project has Claude Code session
transcripts, the evidence recall of the router on the newest of them (``transcripts.replay``, the
replay's own reading and routing) and the prompt count, with the command for the whole report.
No transcripts, no store: no line."""

# The newest sessions doctor replays: enough for a figure, few enough to keep doctor quick.
DOCTOR_SESSIONS = 20


def replay_check(project_dir, cluster_path, index, table, settings, environ=None):
    """The check (a dict as ``harness.doctor.probes.check`` makes), or ``None`` for no line."""
    from router.errors import MemoryRouterError
    from transcripts.evidence import session_transcripts
    from transcripts.replay import default_directory, replay_history

    if table is None or index is None or cluster_path is None:
        return None
    directory, _looked = default_directory(project_dir, environ)
    files = session_transcripts(directory) if directory else []
    if not files:
        return None
    slugs = {member.slug for member in index.members}
    sessions = prompts = needs = met = 0
    try:
        for _session, replayed in replay_history(files, table, settings, cluster_path, slugs, limit=DOCTOR_SESSIONS):
            sessions += 1
            prompts += len(replayed)
            for prompt in replayed:
                needs += len(prompt.needs)
                met += sum(1 for need in prompt.needs if need.met)
    except MemoryRouterError as err:
        return {"name": "replay", "status": "info", "message": f"not replayed: {err}"}
    newest = f"the newest {sessions} sessions" if len(files) > DOCTOR_SESSIONS else f"{sessions} session(s)"
    if needs:
        figure = f"evidence recall {met / needs:.0%} ({met} of {needs} memories the agent read or named)"
    else:
        figure = "no memory the agent read or named yet"
    return {"name": "replay", "status": "info",
            "message": f"{figure} over {prompts} prompts of {newest}; the whole report: memory-router replay",
            "sessions": sessions, "prompts": prompts, "needs": needs, "met": met,
            "recall": round(met / needs, 4) if needs else None, "transcripts": directory}
