"""Claude Code's transcript location rule: ~/.claude/projects/<abs cwd, non-alphanumerics -> ->/,
honouring CLAUDE_CONFIG_DIR; keys over 200 characters matched by prefix."""

import os

import pytest

from transcripts.locate import config_dir, locate, project_key, subagent_files


@pytest.mark.parametrize("path, key", [
    ("/Users/me/proj", "-Users-me-proj"),
    ("/home/u/my_project.v2", "-home-u-my-project-v2"),
    ("/home/u/spotter-worktrees/spotter-dov", "-home-u-spotter-worktrees-spotter-dov"),
    ("/tmp/caf\u00e9 x", "-tmp-caf--x"),
    # Claude Code (JavaScript) replaces UTF-16 code units: a character outside the BMP is two.
    ("/tmp/notes \U0001F600 x", "-tmp-notes----x"),
    ("/tmp/\U00020000", "-tmp---"),
])
def test_project_key(path, key):
    assert project_key(path) == key


def test_config_dir_honours_claude_config_dir(tmp_path):
    assert config_dir({"HOME": str(tmp_path)}) == tmp_path / ".claude"
    assert config_dir({"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}) == tmp_path / "cfg"


def make_sessions(projects, key, names_and_mtimes):
    folder = projects / key
    folder.mkdir(parents=True)
    for name, mtime in names_and_mtimes:
        path = folder / name
        path.write_text('{"type":"mode"}\n')
        os.utime(path, (mtime, mtime))
    return folder


def test_newest_session_by_mtime_ignoring_subagents(tmp_path):
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    env = {"HOME": str(tmp_path)}
    folder = make_sessions(tmp_path / ".claude" / "projects", project_key(project),
                           [("old.jsonl", 1_000_000), ("new.jsonl", 2_000_000)])
    (folder / "new" / "subagents").mkdir(parents=True)
    (folder / "new" / "subagents" / "agent-1.jsonl").write_text("{}\n")
    found = locate(project, env)
    assert found.transcript == str(folder / "new.jsonl") and found.sessions == 2 and found.rule == "exact"
    assert subagent_files(found.transcript) == [folder / "new" / "subagents" / "agent-1.jsonl"]


def test_claude_config_dir_wins_over_home(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    make_sessions(tmp_path / ".claude" / "projects", project_key(project), [("home.jsonl", 5)])
    folder = make_sessions(tmp_path / "cfg" / "projects", project_key(project), [("cfg.jsonl", 1)])
    found = locate(project, {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    assert found.transcript == str(folder / "cfg.jsonl")


def test_no_transcripts(tmp_path):
    found = locate(tmp_path / "nowhere", {"HOME": str(tmp_path)})
    assert found.transcript is None and found.directory is None and found.sessions == 0


def test_long_paths_are_matched_by_prefix(tmp_path):
    project = "/" + "/".join(["a-very-long-directory-name"] * 9)
    key = project_key(project)
    assert len(key) > 200
    hashed = key[:200] + "-1x2y3z"
    folder = make_sessions(tmp_path / ".claude" / "projects", hashed, [("s.jsonl", 10)])
    found = locate(project, {"HOME": str(tmp_path)})
    assert found.rule == "prefix" and found.transcript == str(folder / "s.jsonl")
