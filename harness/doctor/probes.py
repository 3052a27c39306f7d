"""The doctor's trial runs (one run of a hook command: ``harness.install.trialrun``): the routing
probe (does the installed hook inject what ``memory-router route`` says?) and the session probe
(does the SessionStart command make the router send again?). ``check`` is the shape of every
doctor finding."""

import re

from harness.install import settings as inst
from harness.install.trialrun import probe_payload, run_hook_command


def check(name, status, message, **details):
    """One doctor finding: ``status`` is ``pass``, ``fail``, ``warn`` or ``info``."""
    return {"name": name, "status": status, "message": message, **details}


def routing_probe(command, project_dir, timeout, probe, cluster_path):
    """Does the installed hook route as ``memory-router route`` does on the cluster file doctor
    found? Asked with a prompt made of one cluster's tags, the two must inject the same text;
    otherwise the hook reads another cluster file or config than the one reported above."""
    if probe is None:
        return check("hook routes", "warn", "no cluster's tags alone clear the score floor, so the routing probe "
                      "was skipped")
    prompt, decision = probe
    result = run_hook_command(command, project_dir, timeout, prompt=prompt)
    if result["ok"] and result["context"] == decision["additional_context"]:
        return check("hook routes", "pass", f"asked {prompt!r}, the hook injected {', '.join(decision['routed'])} "
                      f"exactly as `memory-router route` does on {cluster_path}", prompt=prompt)
    got = "nothing" if not result.get("context") else repr(result["context"].splitlines()[0])
    return check("hook routes", "fail", f"asked {prompt!r}, the hook injected {got}, but {cluster_path} routes it "
                  f"to {', '.join(decision['routed'])}: the hook reads another cluster file or config"
                  + ("" if result["ok"] else f" ({result['message']})"), prompt=prompt)


def probe_prompt(index, table, config):
    """``(prompt, decision)``: a prompt that fires, with what a fresh session is sent for it (the
    routing decision after the session stage), or ``None``. First a request made from a memory's
    hook line (``request_from_hook``) that routes to that memory's own cluster, as a user would
    type it (init suggests it to try); else, as before, one cluster's tags."""
    from router import config as config_mod
    from router.hooks.session import route_fresh

    settings = config_mod.settings_of(config)
    for cluster in sorted(index.clusters, key=lambda c: -len(c.members)):
        for member in cluster.members:
            prompt = request_from_hook(member.hook)
            if prompt is None:
                continue
            decision = route_fresh(prompt, table, settings, log_as="doctor")
            if decision["additional_context"] is not None and decision["routed"][:1] == [cluster.cluster_id]:
                return prompt, decision
    for cluster in sorted(index.clusters, key=lambda c: -len(c.tags)):
        prompt = " ".join(cluster.tags)
        decision = route_fresh(prompt, table, settings, log_as="doctor")
        if decision["additional_context"] is not None:
            return prompt, decision
    return None


# Where a hook line's first clause ends: the rest is the detail ("...; measure on a warmed-up device").
_CLAUSE_END = re.compile(r"\s*(?:[;:(\[]|\s[-\u2014=]\s|,\s)")
REQUEST_WORDS = 10


def request_from_hook(hook, max_words=REQUEST_WORDS):
    """A request a user might type about the memory whose hook line is ``hook``: its first clause,
    at most ``max_words`` words, asked about (``what do we know about the Galaxy A54 throttles
    after about 12 minutes?``); ``None`` for a clause under three words."""
    from router.tokens import STOPWORDS

    clause = _CLAUSE_END.split(hook or "", maxsplit=1)[0].strip().rstrip(".!?").replace('"', "")
    words = clause.split()[:max_words]
    while words and words[-1].lower() in STOPWORDS:      # a cut clause ends on a content word
        words.pop()
    if len(words) < 3:
        return None
    return f"what do we know about {' '.join(words)}?"


def session_probe(command, session_command, project_dir, timeout, probe):
    """Does the SessionStart command do its part? In one throwaway session: the probe prompt
    injects; the same prompt again injects nothing (the session holds it); the session command
    with source ``compact`` sends the held lines again (the repeat relied on them, and a
    compaction drops them); the prompt again injects nothing (the session holds what was sent
    again); the command with source ``clear``; the prompt injects."""
    import uuid

    from router.hooks.session import reset_session

    if probe is None:
        return check("session reset", "warn", "no probe prompt fires, so the session probe was skipped")
    prompt = probe[0]
    session_id = f"memory-router-doctor-{uuid.uuid4()}"
    payload = probe_payload(project_dir, prompt, session_id)
    steps = []
    expected = {"first": True, "repeat": False, "compact": True, "after compact": False, "clear": None,
                "after clear": True}
    try:
        for step, wanted in expected.items():
            if step in ("compact", "clear"):
                start = {"session_id": session_id, "transcript_path": "", "cwd": payload["cwd"],
                         "hook_event_name": inst.SESSION_EVENT, "source": step}
                result = run_hook_command(session_command, project_dir, timeout, payload=start,
                                          event=inst.SESSION_EVENT)
            else:
                result = run_hook_command(command, project_dir, timeout, payload=payload)
            sent = bool(result.get("context"))
            ok = result["ok"] and (wanted is None or sent == wanted)
            steps.append((step, ok, result["message"] if not result["ok"] else ("sent" if sent else "sent nothing")))
    finally:
        reset_session(session_id)
    failed = [f"{step}: {message}" for step, ok, message in steps if not ok]
    if failed:
        return check("session reset", "fail", "in a throwaway session (ask: sent; again: nothing; SessionStart "
                      "compact: sent again; ask: nothing; SessionStart clear; ask: sent): " + "; ".join(failed),
                      command=session_command)
    return check("session reset", "pass", f"asked {prompt!r}: sent once, not on the repeat; SessionStart compact "
                  "sent it again and the next ask nothing; after SessionStart clear it was sent again",
                  command=session_command)
