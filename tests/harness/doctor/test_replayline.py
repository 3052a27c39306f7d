"""harness.doctor.replayline: doctor's one line from the replay, only when this project has
Claude Code session transcripts."""

import shutil

from harness.context import context_for
from harness.doctor.checks import doctor_report
from harness.doctor.replayline import DOCTOR_SESSIONS, replay_check
from router.config import bundled_cluster_file
from router.store.memorystore import project_key
from support.replay_sessions import write_session

SETX = "I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?"
SETX_SLUG = "env_bash_tool_env_var_caching"


def sessions_dir(home, project):
    folder = home / ".claude" / "projects" / project_key(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_recall_and_prompt_count_with_the_command(isolated_env, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    ctx = context_for(None, None, quiet=True)
    check = replay_check(str(project), ctx.cluster_path, ctx.index, ctx.table, ctx.settings)
    assert check is None                                  # no transcripts: no line
    folder = sessions_dir(isolated_env, project)
    write_session(folder, "s1", [(SETX, [SETX_SLUG]), ("thanks, that worked!", ["feedback_hooks_fail_open"]),
                                 ("can you explain what a closure is in JavaScript?", [])])
    check = replay_check(str(project), ctx.cluster_path, ctx.index, ctx.table, ctx.settings)
    assert check["status"] == "info" and (check["prompts"], check["needs"], check["met"]) == (3, 2, 1)
    assert check["message"] == ("evidence recall 50% (1 of 2 memories the agent read or named) over 3 prompts "
                                "of 1 session(s); the whole report: memory-router replay")


def test_only_the_newest_sessions_are_replayed(isolated_env, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    folder = sessions_dir(isolated_env, project)
    for number in range(DOCTOR_SESSIONS + 2):
        write_session(folder, f"s{number:02d}", [("can you explain what a closure is in JavaScript?", [])])
    ctx = context_for(None, None, quiet=True)
    check = replay_check(str(project), ctx.cluster_path, ctx.index, ctx.table, ctx.settings)
    assert check["sessions"] == DOCTOR_SESSIONS
    assert f"of the newest {DOCTOR_SESSIONS} sessions" in check["message"] and "no memory" in check["message"]


def test_doctor_shows_the_line_when_transcripts_exist(isolated_env, tmp_path):
    project = tmp_path / "project"
    (project / "brain").mkdir(parents=True)
    shutil.copy(bundled_cluster_file(), project / "brain" / "memory-layer1-clusters.md")
    names = [c["name"] for c in doctor_report(str(project), run_commands=False)]
    assert "replay" not in names
    write_session(sessions_dir(isolated_env, project), "s1", [(SETX, [SETX_SLUG])])
    [line] = [c for c in doctor_report(str(project), run_commands=False) if c["name"] == "replay"]
    assert line["recall"] == 1.0 and line["prompts"] == 1
