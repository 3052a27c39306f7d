"""The ``UserPromptSubmit`` hook: read the payload, route the prompt, print the context or nothing.

This is the hot path. It imports only the standard library and the router core, and it fails
open: whatever goes wrong (bad JSON, no prompt, a missing or corrupt cluster file, an
exception), it prints nothing and exits 0, because exit 2 would erase the user's prompt. One
diagnostic line goes to the file named by ``$MEMORY_ROUTER_LOG``, and only there.
"""

import json
import time

from router import config as config_mod
from router.argv import parse_long_options
from router.cache import use_routing_table
from router.hookconfig import hook_config
from router.agenttext import hook_output
from router.hookio import log_diagnostic, run_fail_open
from router.providers.provider import route
from router.hooks.session import after_compaction, hook_stage, reset_session
from router.hooks.sessionrecord import read_trusted_record, record_path, write_record
from router.store.transcriptscan import transcript_size


def _build_table(path, learned_file=None):
    # Imported on a table miss only: a prompt with a current table never loads the compiler.
    from router.hooks.compiled import build_table_of

    return build_table_of(path, learned_file, log=lambda message: log_diagnostic("hook", message))


def _fallback(learned_file):
    def on_miss(path):
        from router.hooks.compiled import hook_fallback

        return hook_fallback(path, learned_file, lambda message: log_diagnostic("hook", message))
    return on_miss


def _hook_args(argv):
    return parse_long_options(argv, ("clusters", "config"), "hook")


def decide(payload, options):
    """The hook's decision for one parsed payload: the object to print, or ``None``."""
    if not isinstance(payload, dict):
        raise ValueError("payload is not a JSON object")
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("payload has no string 'prompt' field")
    if not prompt.strip():
        return None
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    dirs = config_mod.project_dirs(cwd)
    config = hook_config(options.get("config"), dirs)
    path = config_mod.resolve_cluster_path(options.get("clusters"), config, dirs)
    if path is None:
        raise FileNotFoundError("no cluster file found (tried --clusters, $MEMORY_ROUTER_CLUSTERS, "
                                "config, brain/memory-layer1-clusters.md)")
    settings = config_mod.settings_of(config)
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    # With learning on, the learned-terms file is read with the cluster file and its stat joins
    # the cache key, so a `learn` run or a feedback takes effect on the next prompt.
    learned_file = config_mod.hook_learned_file(path, config)
    # A table the hook could not build within its budget is never built here: it routes on the
    # cluster file alone and a rebuild starts outside the prompt (router.hooks.compiled).
    decision = use_routing_table(
        path, lambda p: _build_table(p, learned_file),
        lambda table: route(prompt, table, settings, cwd=cwd, session_id=session_id, cluster_file=path),
        companions=(learned_file,) if learned_file else (), fallback=_fallback(learned_file))
    if decision["additional_context"] is None:
        return None
    # Which clusters is the router's call; which of their lines this session still needs is
    # the session stage's (router.hooks.session).
    plan = hook_stage(payload, decision, prompt, settings, path, lambda message: log_diagnostic("hook", message))
    if plan["text"] is None:
        return None
    return hook_output(plan["text"])


def run_hook(argv, stdin=None, stdout=None):
    """Entry point of ``memory-router hook``. Always returns 0."""
    return run_fail_open("hook", lambda raw: decide(json.loads(raw), _hook_args(argv)), stdin, stdout)


# SessionStart sources after which the earlier injections are gone from the requests (observed
# with Claude Code 2.1.328): compaction summarises them away; /clear starts a new session id.
FORGETTING_SOURCES = ("compact", "clear")


def session_start(payload):
    """Forget what the session was sent when its context was compacted or cleared.

    After a compaction it also sends again the lines the last routed prompt relied on the session
    holding, and the record then holds just those: Claude Code runs UserPromptSubmit before an
    automatic compaction, so that prompt's request would otherwise carry neither the old
    injection nor a new one (observed, 2.1.328). If that record cannot be written, the lines are
    still sent and the record is forgotten (the next prompt sends again). Returns the object to
    print, or ``None``."""
    if not isinstance(payload, dict):
        raise ValueError("payload is not a JSON object")
    session_id = payload.get("session_id")
    source = payload.get("source")
    if source not in FORGETTING_SOURCES:
        return None
    if not isinstance(session_id, str) or not session_id:
        raise ValueError(f"SessionStart ({source}) payload has no session_id; no session record was reset")
    def log(message):
        log_diagnostic("session-start", message)

    if record_path(session_id) is None:
        log(f"session {session_id}: no cache directory, so no session record to reset or send again")
        return None
    text = None
    if source == "compact":
        record, why = read_trusted_record(session_id)
        if record is not None:
            transcript = payload.get("transcript_path")
            transcript = transcript if isinstance(transcript, str) and transcript else None
            text, held = after_compaction(record, config_mod.DEFAULTS["max_context_chars"], time.time(), transcript,
                                          transcript_size(transcript) if transcript else 0)
            if held is not None:
                try:
                    if write_record(record_path(session_id), held):
                        return hook_output(text, "SessionStart")
                except OSError as err:
                    log(f"session {session_id}: record not written ({err}); forgotten instead, so the next "
                        "prompt sends again")
        elif why:
            log(f"session {session_id}: {why}; nothing sent again after compaction")
    # Never raises: a record that cannot be removed must not lose the text (router.hooks.session).
    reset_session(session_id, log=log)
    return hook_output(text, "SessionStart") if text else None


def run_session_start(argv, stdin=None, stdout=None):
    """Entry point of ``memory-router session-start`` (a SessionStart hook). Always returns 0."""
    def respond(raw):
        if argv:
            raise ValueError(f"unknown session-start argument {argv[0]!r}")
        return session_start(json.loads(raw))

    return run_fail_open("session-start", respond, stdin, stdout)
