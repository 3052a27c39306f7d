"""Run the real Claude Code over a list of prompts, offline, and keep everything it sent.

Python API (what tests and later harness pieces use)::

    from harness.lab.runner import run_session
    from harness.lab.script import Script

    result = run_session(run_dir, ["first prompt", "second prompt"], memory="slim",
                         script=Script([...]), claude=None)
    result.request_log        # requests.jsonl: every request body, verbatim (harness.lab.server)
    result.transcript         # the session transcript the client wrote
    result.subagent_transcripts

``run_session`` makes ``run_dir`` (which must not exist yet, or be empty; ``harness.lab.rundir``)
hold a private HOME (``home/``) and project directory (``project/``); copies a cluster file to
``project/brain/memory-layer1-clusters.md``; installs this project's hook with
``memory-router install --project`` (``hook=False`` skips it; ``gate=True`` adds ``--gate``, the
citation gate as a PreToolUse hook beside it; ``mcp=True`` also runs ``install --mcp``, the
server in ``project/.mcp.json``, which ``claude -p`` starts without asking); places MEMORY.md in
the client's auto-memory directory as ``flat`` (the flat index), ``slim`` (rendered by
``memory-router slim render``) or ``none``; starts a ``LabServer``; runs ``claude -p PROMPT``
and then ``claude -p --resume <session> PROMPT`` for each later prompt; stops the server; and writes ``run.json``
(``harness.lab.manifest``: what ``memory-router lab report`` reads).

``prepare(paths)`` runs after the set-up and before the client, with a ``RunPaths``: the place to
corrupt a cluster file, put a FIFO in its place, write an oversized MEMORY.md, or put a decision
ledger in the project for the gate.

``session="stream"`` runs every prompt through one ``claude -p --input-format stream-json``
process instead: the history is then what the process kept, as in an interactive session (a
client that does not write hook output to its transcript, 2.1.39 for one, forgets it on
``--resume``).

The client never sees the user's files: HOME is the run's, the environment is rebuilt from
scratch (PATH, LANG and the variables that point it at the stand-in), and the stand-in listens on
127.0.0.1 only.
"""

import json
import os
import subprocess
import time
from dataclasses import dataclass, field

from harness.lab import client as lab_client
from harness.lab.manifest import write_manifest
from harness.lab.rundir import REQUEST_LOG, RunPaths, client_env, munged, prepare_run_dir, store_files as files_beside
from harness.lab.script import Script
from harness.lab.server import LabServer
from router.config import bundled_cluster_file
from router.errors import InputError

DEFAULT_PROMPT_TIMEOUT = 180


@dataclass(frozen=True)
class PromptOutcome:
    index: int
    prompt: str
    exit_code: int
    seconds: float
    result: str | None
    is_error: bool | None
    stderr_tail: str


@dataclass(frozen=True)
class RunResult:
    run_dir: str
    memory: str
    client: str
    client_version: str | None
    session_id: str | None
    paths: RunPaths
    request_log: str
    transcript: str | None
    subagent_transcripts: tuple
    prompts: tuple
    outcomes: tuple
    memory_text: str | None
    hook: bool = True
    session: str = "resume"
    warnings: tuple = field(default=())
    gate: bool = False
    mcp: bool = False
    store_files: tuple = field(default=())   # (what, source path) copied beside the run's cluster file

    @property
    def ok(self):
        return all(o.exit_code == 0 for o in self.outcomes)


def _parse_result(stdout):
    """The ``--output-format json`` result object of one ``claude -p`` run, or {}."""
    for line in reversed((stdout or "").strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return {}


def find_transcripts(paths, session_id):
    """``(main transcript or None, subagent transcripts)`` the client wrote for ``session_id``."""
    from transcripts.locate import subagent_files

    folder = os.path.join(paths.home, ".claude", "projects", munged(paths.project))
    main = os.path.join(folder, f"{session_id}.jsonl") if session_id else None
    if main and not os.path.isfile(main):
        main = None
    subs = tuple(str(p) for p in subagent_files(main)) if main else ()
    return main, subs


SESSION_MODES = ("resume", "stream")


def _resume_prompts(claude, base_argv, prompts, server, paths, environment, on_prompt, timeout):
    """One ``claude -p`` process per prompt, ``--resume`` from the second on."""
    outcomes, session_id = [], None
    for index, prompt in enumerate(prompts):
        if on_prompt is not None:
            on_prompt(index, len(prompts), prompt)
        server.prompt_index = index
        argv = [claude, *base_argv, "--output-format", "json"]
        if session_id:
            argv += ["--resume", session_id]
        argv += ["--", prompt]
        t0 = time.time()
        try:
            done = subprocess.run(argv, cwd=paths.project, env=environment, capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
            code, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as err:
            code, stdout, stderr = -1, err.stdout or "", f"timed out after {timeout} s"
            stdout = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else stdout
        result = _parse_result(stdout)
        session_id = result.get("session_id") or session_id
        outcomes.append(PromptOutcome(index, prompt, code, round(time.time() - t0, 3), result.get("result"),
                                      result.get("is_error"), (stderr or "")[-600:]))
    return outcomes, session_id


def _stream_prompts(claude, base_argv, prompts, server, paths, environment, on_prompt, timeout):
    """One ``claude -p --input-format stream-json`` process for every prompt: each prompt is
    written once the previous one's ``result`` event has arrived, so every request is stamped
    with the right prompt. The history then lives in the process, as in an interactive session,
    and does not depend on what the client writes to its transcript."""
    import queue
    import threading

    argv = [claude, *base_argv, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    process = subprocess.Popen(argv, cwd=paths.project, env=environment, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()
    stderr_tail = []

    def read_stdout():
        for line in process.stdout:
            lines.put(line)
        lines.put(None)                          # end of output: the process is gone

    def read_stderr():
        for line in process.stderr:
            stderr_tail.append(line)

    threading.Thread(target=read_stdout, daemon=True).start()
    threading.Thread(target=read_stderr, daemon=True).start()
    outcomes, session_id, alive = [], None, True
    try:
        for index, prompt in enumerate(prompts):
            if on_prompt is not None:
                on_prompt(index, len(prompts), prompt)
            server.prompt_index = index
            t0 = time.time()
            result, code = {}, -1
            if alive:
                try:
                    process.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}})
                                        + "\n")
                    process.stdin.flush()
                except OSError:
                    alive = False
            while alive:
                try:
                    line = lines.get(timeout=max(0.1, timeout - (time.time() - t0)))
                except queue.Empty:
                    stderr_tail.append(f"timed out after {timeout} s\n")
                    alive = False
                    break
                if line is None:
                    alive = False
                    break
                event = _parse_result(line)
                session_id = event.get("session_id") or session_id
                if event.get("type") == "result":
                    result, code = event, 0
                    break
            outcomes.append(PromptOutcome(index, prompt, code, round(time.time() - t0, 3), result.get("result"),
                                          result.get("is_error"), "".join(stderr_tail)[-600:]))
    finally:
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return outcomes, session_id


def run_session(run_dir, prompts, memory="slim", script=None, claude=None, *, clusters=None, flat_index=None,
                config=None, hook=True, gate=False, mcp=False, prepare=None, on_prompt=None,
                timeout=DEFAULT_PROMPT_TIMEOUT, client_args=(), env=None, session="resume", store_files=False):
    """Run ``prompts`` as one session of the real client; see the module docstring.

    ``script`` is a ``Script`` (default: plain text replies). ``claude`` is the client path
    (default: ``harness.lab.client.find_claude``). ``on_prompt(index, total, prompt)`` is called
    before each prompt (the CLI's progress bar). ``client_args`` are added to every ``claude``
    command; ``env`` entries override the client's environment. ``session``: ``resume`` (one
    ``claude -p`` per prompt, ``--resume`` from the second: history is what the transcript kept)
    or ``stream`` (one process, ``--input-format stream-json``: history is what the process kept;
    slash commands such as ``/compact`` need ``resume``). ``store_files``: copy the utterances,
    learned-terms and near-misses files beside the cluster file into the run (``lab run``'s default;
    off here, so the recorded sessions route on the cluster file alone). Raises ``MemoryRouterError`` when the
    set-up fails; a prompt the client fails on is recorded in ``outcomes``, not raised.
    """
    prompts = list(prompts)
    if not prompts:
        raise InputError("no prompts to run", fix="pass a suite or a prompts file with at least one prompt")
    if session not in SESSION_MODES:
        raise InputError(f"unknown session mode {session!r}", fix=f"use one of {', '.join(SESSION_MODES)}")
    script = script or Script.default()
    if claude is None:
        claude, _how = lab_client.find_claude()
    version = lab_client.client_version(claude)
    warnings = [w for w in (lab_client.version_warning(version),) if w]
    paths, memory_text = prepare_run_dir(run_dir, memory, clusters, flat_index, config, hook, gate, mcp,
                                         with_store_files=store_files)
    copied = tuple(files_beside(clusters or bundled_cluster_file())) if store_files else ()
    if prepare is not None:
        prepare(paths)
    log_path = os.path.join(paths.run_dir, REQUEST_LOG)
    allowed = ["Write", "Edit"] + [name for name in script.tool_names() if name not in ("Write", "Edit")]
    base_argv = ["-p", "--permission-mode", "acceptEdits", "--allowedTools", ",".join(allowed), *client_args]
    started = time.time()
    runner = _stream_prompts if session == "stream" else _resume_prompts
    with LabServer(script, log_path) as server:
        environment = client_env(paths, server.url, env)
        outcomes, session_id = runner(claude, base_argv, prompts, server, paths, environment, on_prompt, timeout)
        server.prompt_index = None
    transcript, subagents = find_transcripts(paths, session_id)
    run = RunResult(paths.run_dir, memory, claude, version, session_id, paths, log_path, transcript, subagents,
                    tuple(prompts), tuple(outcomes), memory_text, hook, session, tuple(warnings), gate, mcp, copied)
    write_manifest(run, seconds=round(time.time() - started, 2))
    return run
