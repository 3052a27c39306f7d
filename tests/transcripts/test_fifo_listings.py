"""Issue 35 item 2: every command that reads a folder of transcripts skips a FIFO found there, names
it where it reports what it read, and completes. A FIFO named like a session (``<id>.jsonl``), like a
2.0.x subagent transcript beside the sessions (``agent-<id>.jsonl``) and inside a session's
``subagents`` folder, each made with ``os.mkfifo``; the commands run as the installed console
script with a timeout (a hang is a failure, not a stuck suite)."""

import os
import pathlib
import shutil
import subprocess

import pytest

from router.store.memorystore import default_memory_dir
from support.executables import memory_router_exe
from support.git_repo import git_project  # noqa: F401 - a fixture
from support.replay_sessions import write_session

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")

REPO = pathlib.Path(__file__).resolve().parents[2]
HELDOUT2_MEMORY = REPO / "benchmarks" / "heldout2" / "memory"
RESUME = "my sedge run failed halfway, how do I relaunch it without recomputing the alignment?"
FIFO_SESSION = "ffff-9.jsonl"
FIFO_AGENT = "agent-4242.jsonl"


@pytest.fixture
def fifo_project(git_project):
    """A project whose memory directory is heldout2's and whose transcript folder holds one real
    session and three FIFOs where transcripts are looked for."""
    memory = pathlib.Path(default_memory_dir(str(git_project)))
    shutil.copytree(HELDOUT2_MEMORY, memory)
    folder = memory.parent
    write_session(folder, "aaaa-1", [(RESUME, ["feedback_always_resume"])])
    os.mkfifo(folder / FIFO_SESSION)
    os.mkfifo(folder / FIFO_AGENT)
    (folder / "aaaa-1" / "subagents").mkdir(parents=True)
    os.mkfifo(folder / "aaaa-1" / "subagents" / "agent-77.jsonl")
    return git_project


def run(project, *args, timeout=60):
    try:
        done = subprocess.run([memory_router_exe(), *map(str, args)], cwd=project, capture_output=True, text=True,
                              timeout=timeout, env=dict(os.environ, PATH=os.path.dirname(memory_router_exe())
                                                        + os.pathsep + "/usr/bin:/bin"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"memory-router {' '.join(map(str, args))} hung on a FIFO in the transcript folder")
    return done


def test_init_doctor_replay_learn_and_tokens_history_complete_beside_fifos(fifo_project):
    folder = pathlib.Path(default_memory_dir(str(fifo_project))).parent
    init = run(fifo_project, "init", "--yes")
    assert init.returncode == 0, init.stdout + init.stderr
    assert (fifo_project / ".claude" / "memory-router" / "init.json").is_file()
    doctor = run(fifo_project, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    replay = run(fifo_project, "replay")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert FIFO_SESSION in replay.stdout and "named pipe (FIFO)" in replay.stdout
    chosen = run(fifo_project, "replay", "--session", "aaaa")
    assert chosen.returncode == 0 and "1 session" in chosen.stdout, chosen.stdout + chosen.stderr
    # the only file whose name starts so is the FIFO: no session, said, exit 0
    only_fifo = run(fifo_project, "replay", "--session", "ffff")
    assert only_fifo.returncode == 0, only_fifo.stdout + only_fifo.stderr
    assert "Traceback" not in only_fifo.stderr
    learn = run(fifo_project, "learn", "--dry-run", folder)
    assert learn.returncode == 0, learn.stdout + learn.stderr
    assert FIFO_SESSION in learn.stdout + learn.stderr and "named pipe (FIFO)" in learn.stdout + learn.stderr
    assert run(fifo_project, "slim", "render").returncode == 0
    history = run(fifo_project, "tokens", "report", "--history", "--tokenizer", "estimate")
    assert history.returncode == 0, history.stdout + history.stderr


def test_a_fifo_named_as_the_only_session_is_skipped_by_every_reader_without_opening_it(fifo_project, tmp_path):
    """The readers test the kind before they open: a FIFO with a writer waiting on the other side
    would otherwise be read (and the writer's bytes taken for a transcript)."""
    from transcripts.evidence import find_subagent_files, session_transcripts, transcript_files

    folder = pathlib.Path(default_memory_dir(str(fifo_project))).parent
    skipped = []
    sessions = transcript_files([str(folder)], skipped=skipped)
    assert [os.path.basename(p) for p in sessions] == ["aaaa-1.jsonl"]
    assert [(os.path.basename(p), why) for p, why in skipped] == [
        (FIFO_SESSION, "it is a named pipe (FIFO), not a regular file")]
    assert [os.path.basename(p) for p in session_transcripts(str(folder))] == ["aaaa-1.jsonl"]
    assert find_subagent_files(str(folder / "aaaa-1.jsonl"), "any-session-id") == []


def test_a_fifo_named_like_a_memory_file_is_skipped_by_name_and_every_command_completes(git_project, tmp_path):
    """The memory directory is a listed folder too: a FIFO named like a memory (``*.md``) made
    init, clusters build and clusters enrich stop with an error; now each names it and completes."""
    memory = pathlib.Path(default_memory_dir(str(git_project)))
    shutil.copytree(HELDOUT2_MEMORY, memory)
    os.mkfifo(memory / "feedback_pipe_trap.md")
    fake = REPO / "tests" / "harness" / "clusters" / "fake_engine.py"
    for args in (["init", "--yes"], ["clusters", "build", "--memory-dir", memory, "--out", tmp_path / "c.md"],
                 ["clusters", "enrich", "--dry-run", "--yes", "--engine", "command", "--command",
                  f"python3 {fake} good"],
                 ["slim", "render"], ["doctor"]):
        done = run(git_project, *args)
        assert done.returncode == 0, (args, done.stdout + done.stderr)
        if args[0] in ("init", "clusters", "slim"):
            assert "feedback_pipe_trap.md: not a memory file, skipped: it is a named pipe (FIFO)" in done.stderr, args
