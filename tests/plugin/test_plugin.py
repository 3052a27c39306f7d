"""The Claude Code plugin in plugins/memory-router and the repository's marketplace: the manifests
as the real client validates them, the hooks and MCP files, the icon, and the launcher every hook
runs (which memory-router it finds, and that it fails open without one)."""

import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

from plugin.pluginfiles import LAUNCHER, PLUGIN_DIR, REPO_ROOT, git

SHELLS = [shell for shell in ("dash", "bash") if shutil.which(shell)]
LAUNCH = "${CLAUDE_PLUGIN_ROOT}/scripts/memory-router-launch"


def read_json(path):
    return json.loads(path.read_text(encoding="utf-8"))


# --- manifests -------------------------------------------------------------------------------

def test_plugin_and_marketplace_versions_are_the_packages():
    from router import __version__

    plugin = read_json(PLUGIN_DIR / ".claude-plugin" / "plugin.json")
    market = read_json(REPO_ROOT / ".claude-plugin" / "marketplace.json")
    [entry] = market["plugins"]
    assert plugin["name"] == entry["name"] == "memory-router"
    assert plugin["version"] == entry["version"] == __version__
    assert (REPO_ROOT / entry["source"]).resolve() == PLUGIN_DIR
    assert plugin["network"] == {"hosts": []}          # it reaches no host


def hook_handlers():
    """``{(event, matcher): handler}`` of hooks/hooks.json."""
    hooks = read_json(PLUGIN_DIR / "hooks" / "hooks.json")["hooks"]
    out = {}
    for event, groups in hooks.items():
        for group in groups:
            [handler] = group["hooks"]
            out[(event, group.get("matcher"))] = handler
    return out


def test_hooks_run_the_launcher_in_exec_form():
    handlers = hook_handlers()
    assert {key: h["args"] for key, h in handlers.items()} == {
        ("UserPromptSubmit", None): ["hook"],
        ("SessionStart", "compact|clear"): ["session-start"],
        ("SessionStart", "startup"): ["notice"],
        ("PreToolUse", "Write|Edit|MultiEdit|NotebookEdit"): ["gate"],
    }
    for handler in handlers.values():
        assert handler["type"] == "command" and handler["command"] == LAUNCH
        assert 0 < handler["timeout"] <= 10


def test_mcp_server_runs_the_launcher():
    assert read_json(PLUGIN_DIR / ".mcp.json") == {"mcpServers": {"memory-router": {
        "type": "stdio", "command": LAUNCH, "args": ["mcp"]}}}


def test_launcher_is_committed_executable():
    assert os.access(LAUNCHER, os.X_OK)
    if (REPO_ROOT / ".git").exists():
        mode = git("ls-files", "-s", str(LAUNCHER.relative_to(REPO_ROOT)), cwd=REPO_ROOT).split()[:1]
        assert mode in (["100755"], [])          # [] until it is committed


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24]), len(data)


def test_icon_is_a_square_png_the_directory_accepts(tmp_path):
    (width, height), size = png_size(PLUGIN_DIR / ".claude-plugin" / "icon.png")
    assert width == height and 512 <= width <= 2048 and size < 2 * 1024 * 1024
    (tmp_path / "x.png").write_bytes(b"GIF89a" + bytes(40))
    with pytest.raises(AssertionError, match="not a PNG"):
        png_size(tmp_path / "x.png")


def validate(claude, target, *flags):
    env = {"HOME": os.environ["HOME"], "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1"}
    return subprocess.run([claude, "plugin", "validate", *flags, str(target)], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.mark.realclient
def test_real_client_validates_plugin_strictly_for_the_directory(claude_client):
    done = validate(claude_client, PLUGIN_DIR, "--strict", "--profile", "directory")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout


@pytest.mark.realclient
def test_real_client_validates_the_marketplace_strictly(claude_client):
    done = validate(claude_client, REPO_ROOT, "--strict")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "marketplace.json" in done.stdout


@pytest.mark.realclient
def test_real_client_validation_fails_without_the_icon(tmp_path, claude_client):
    copy = tmp_path / "memory-router"
    shutil.copytree(PLUGIN_DIR, copy)
    (copy / ".claude-plugin" / "icon.png").unlink()
    done = validate(claude_client, copy, "--strict", "--profile", "directory")
    assert done.returncode == 1 and "ICON_MISSING" in done.stdout, done.stdout + done.stderr


# --- the skills: init, route and doctor from inside Claude Code --------------------------------

SKILLS = ("init", "route", "doctor")


def skill(name):
    """``(frontmatter, body)`` of skills/<name>/SKILL.md."""
    import yaml

    text = (PLUGIN_DIR / "skills" / name / "SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), name
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def skill_commands(body):
    """Every command line of the body's ``bash`` blocks."""
    import re

    blocks = re.findall(r"```bash\n(.*?)```", body, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("name", SKILLS)
def test_each_skill_runs_its_command_through_the_launcher(name):
    """issue 29 item 2: /memory-router:init, :route and :doctor, as official plugins ship skills.
    Each first asks the launcher which memory-router it runs (the launcher fails open silently
    for any other command when there is none), then runs its own command, which memory-router's
    parser accepts."""
    from harness.cli import build_parser

    front, body = skill(name)
    assert front["name"] == name and len(front["description"]) > 40
    commands = skill_commands(body)
    assert commands[0] == f"{LAUNCH} which"
    parser = build_parser()
    for line in commands[1:]:
        words = line.replace("$ARGUMENTS", "").replace("'PROMPT'", "PROMPT").split()
        assert words[:2] == [LAUNCH, name], line
        parser.parse_args(words[1:])
    assert len(commands) >= 2
    for grant in str(front.get("allowed-tools", "")).split("), "):
        assert grant.startswith(f"Bash({LAUNCH} "), grant   # it may run the launcher and nothing else


def test_init_is_run_only_when_the_user_asks():
    # init writes files (the cluster file, memory-router.toml): the model never starts it itself
    assert skill("init")[0]["disable-model-invocation"] is True
    assert "disable-model-invocation" not in skill("route")[0] and "disable-model-invocation" not in skill("doctor")[0]


@pytest.mark.realclient
def test_real_client_lists_the_three_skills(claude_client):
    done = validate(claude_client, PLUGIN_DIR, "--strict", "--profile", "directory")
    assert done.returncode == 0, done.stdout + done.stderr
    for name in SKILLS:
        assert f"skills: memory-router:{name}" in done.stdout, done.stdout


# --- the launcher ----------------------------------------------------------------------------

STUB = '#!/bin/sh\nprintf "ran %s with %s\\n" "$0" "$*"\ncat\n'


def stub(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(STUB, encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def places(tmp_path):
    """A PATH holding only the tools the launcher uses, and where each kind of install goes."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("cat", "sed"):
        os.symlink(shutil.which(name), tools / name)
    return {"tools": tools, "override": tmp_path / "override" / "memory-router",
            "data": tmp_path / "plugin-data", "venv": tmp_path / "plugin-data" / "venv" / "bin" / "memory-router",
            "path": tmp_path / "on-path" / "memory-router", "project": project_with_store(tmp_path / "project")}


def project_with_store(root):
    (root / "brain").mkdir(parents=True)
    (root / "brain" / "memory-layer1-clusters.md").write_text("# stand-in\n", encoding="utf-8")
    return root


def launch(shell, places, *args, installed=(), override=None, stdin="", data=True, cwd=None, env=None):
    """Run the launcher under ``shell`` with the installs named in ``installed``, in ``cwd``
    (default: a project holding a cluster file, where the notice has nothing to say about it)."""
    for kind in installed:
        stub(places[kind])
    path = [str(places["tools"])] + ([str(places["path"].parent)] if "path" in installed else [])
    full_env = {"PATH": os.pathsep.join(path), "HOME": os.environ["HOME"]}
    if data:
        full_env["CLAUDE_PLUGIN_DATA"] = str(places["data"])
    if override is not None:
        full_env["MEMORY_ROUTER_BIN"] = override
    full_env.update(env or {})
    return subprocess.run([shutil.which(shell), str(LAUNCHER), *args], input=stdin, capture_output=True,
                          text=True, env=full_env, timeout=30, cwd=cwd or places["project"])


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("installed, override, expected", [
    (("override", "venv", "path"), "override", "override"),
    (("venv", "path"), None, "venv"),
    (("path",), None, "path"),
    (("venv", "path"), "", "venv"),                    # an empty override is no override
])
def test_launcher_finds_the_installs_in_order(shell, places, installed, override, expected):
    override = str(places["override"]) if override == "override" else override
    done = launch(shell, places, "hook", "--clusters", "x y.md", installed=installed, override=override,
                  stdin='{"prompt": "hi"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout == f'ran {places[expected]} with hook --clusters x y.md\n{{"prompt": "hi"}}'
    which = launch(shell, places, "which", installed=installed, override=override)
    assert which.stdout.strip() == str(places[expected])


@pytest.mark.parametrize("shell", SHELLS)
def test_launcher_skips_the_venv_without_plugin_data(shell, places):
    done = launch(shell, places, "hook", installed=("venv", "path"), data=False)
    assert done.stdout.startswith(f"ran {places['path']} ")


@pytest.mark.parametrize("shell", SHELLS)
def test_an_override_that_points_nowhere_is_reported_not_replaced(shell, places, tmp_path):
    (tmp_path / "not-executable").write_text("x", encoding="utf-8")
    for override in (str(tmp_path / "absent"), str(tmp_path / "not-executable"), str(tmp_path)):
        done = launch(shell, places, "hook", installed=("venv", "path"), override=override, stdin="{}")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        notice = json.loads(launch(shell, places, "notice", override=override).stdout)
        assert f"MEMORY_ROUTER_BIN={override} is not an executable file" in notice["systemMessage"]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("command", ["hook", "session-start", "gate", "anything-else"])
def test_without_memory_router_the_hooks_fail_open(shell, places, command):
    done = launch(shell, places, command, stdin='{"session_id": "s", "prompt": "hello"}')
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize("shell", SHELLS)
def test_without_memory_router_the_notice_says_how_to_install_it(shell, places):
    done = launch(shell, places, "notice", stdin='{"source": "startup"}')
    assert done.returncode == 0 and done.stderr == ""
    message = json.loads(done.stdout)
    assert list(message) == ["systemMessage"]           # shown to the user, never model context
    text = message["systemMessage"]
    for phrase in ("memory-router is not installed", "pipx install CHECKOUT", "uv tool install CHECKOUT",
                   "MEMORY_ROUTER_BIN"):
        assert phrase in text


@pytest.mark.parametrize("shell", SHELLS)
def test_with_memory_router_the_notice_is_silent_and_runs_nothing(shell, places):
    done = launch(shell, places, "notice", installed=("path",), stdin='{"source": "startup"}')
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize("shell", SHELLS)
def test_without_memory_router_the_mcp_server_says_why_it_cannot_start(shell, places):
    done = launch(shell, places, "mcp")
    assert done.returncode == 1 and done.stdout == ""
    assert "memory-router is not installed" in done.stderr
    assert launch(shell, places, "which").returncode == 1


# --- issue 30 items 4 and 5, issue 29 item 2: an install that cannot run, the notice's JSON, no store

def broken(path, shebang):
    """An executable console script whose interpreter is gone (a venv after a Python upgrade)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(shebang + "\nimport sys\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def dangling_venv_python(root):
    """A venv's bin/python: a symlink to an interpreter that was removed."""
    python = root / "gone-venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    os.symlink(root / "python3.9-removed", python)
    return python


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("form", ["symlink", "missing", "pip-long-path", "env"])
def test_a_plugin_environment_that_lost_its_interpreter_counts_as_missing(shell, places, tmp_path, form):
    """It was run as found: every prompt, session start and write exited 127, and the notice said
    nothing. Now the hooks fail open and the notice names the environment and the fix."""
    interpreter = {"symlink": str(dangling_venv_python(tmp_path)), "missing": "/nonexistent/bin/python3.9",
                   "pip-long-path": "/bin/sh\n'''exec' \"/nonexistent/long path/bin/python\" \"$0\" \"$@\"\n' '''",
                   "env": "/usr/bin/env python3.999-not-installed"}[form]
    broken(places["venv"], "#!" + interpreter)
    for command in ("hook", "session-start", "gate"):
        done = launch(shell, places, command, stdin='{"session_id": "s", "prompt": "hello"}')
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), command
    text = json.loads(launch(shell, places, "notice", stdin="{}").stdout)["systemMessage"]
    assert f"the plugin's environment {places['data']}/venv cannot run: its interpreter" in text
    assert "memory-router plugin bootstrap" in text and "its hooks do nothing" in text
    mcp = launch(shell, places, "mcp")
    assert mcp.returncode == 1 and "cannot run: its interpreter" in mcp.stderr


@pytest.mark.parametrize("shell", SHELLS)
def test_a_broken_plugin_environment_falls_back_to_path_and_says_so(shell, places):
    broken(places["venv"], "#!/nonexistent/bin/python3.9")
    done = launch(shell, places, "hook", installed=("path",), stdin="{}")
    assert done.stdout.startswith(f"ran {places['path']} with hook")
    text = json.loads(launch(shell, places, "notice", installed=("path",)).stdout)["systemMessage"]
    assert f"{places['data']}/venv cannot run" in text and f"its hooks run {places['path']} instead" in text
    assert "memory-router plugin bootstrap" in text


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("where", ["override", "path"])
def test_an_override_or_path_install_that_cannot_run_is_named(shell, places, where):
    broken(places[where], "#!/nonexistent/bin/python3.9")
    override = str(places["override"]) if where == "override" else None
    path_dir = str(places["path"].parent)
    env = {"PATH": os.pathsep.join([str(places["tools"]), path_dir])}
    done = launch(shell, places, "hook", override=override, env=env, stdin="{}")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    text = json.loads(launch(shell, places, "notice", override=override, env=env).stdout)["systemMessage"]
    named = f"MEMORY_ROUTER_BIN={places['override']}" if where == "override" else f"memory-router at {places['path']}"
    assert f"{named} cannot run: its interpreter /nonexistent/bin/python3.9 is missing" in text
    assert "memory-router plugin bootstrap" in text


@pytest.mark.parametrize("shell", SHELLS)
def test_the_notice_is_valid_json_whatever_the_variables_hold(shell, places):
    """It escaped only backslash and quote: a newline or a tab in MEMORY_ROUTER_BIN broke the one
    message that explains silent hooks."""
    value = b'/opt/a\nb\tc"d\\e\x7ff\xffg\x01h \xc3\xa9 \xe2\x9c\x93 \xed\xa0\x80 \xe0\x80\xaf \xf0\x9f\x98\x80 \xc3'
    env = {b"PATH": os.fsencode(places["tools"]), b"HOME": os.fsencode(os.environ["HOME"]),
           b"MEMORY_ROUTER_BIN": value}
    done = subprocess.run([shutil.which(shell), str(LAUNCHER), "notice"], input=b"", capture_output=True,
                          env=env, timeout=30, cwd=places["project"])
    assert done.returncode == 0 and done.stderr == b""
    message = json.loads(done.stdout)["systemMessage"]            # bytes: must be valid UTF-8 too
    expected = value.decode("utf-8", errors="replace")
    assert f"MEMORY_ROUTER_BIN={expected} is not an executable file" in message
    assert "\\u007f" in done.stdout.decode() and "\\n" in done.stdout.decode() and "\\t" in done.stdout.decode()


@pytest.mark.parametrize("shell", SHELLS)
def test_the_notice_says_run_init_here_in_a_project_with_no_store(shell, places, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    done = launch(shell, places, "notice", installed=("path",), cwd=bare, stdin='{"source": "startup"}')
    assert done.returncode == 0 and done.stderr == ""
    text = json.loads(done.stdout)["systemMessage"]
    assert "no cluster file for this project" in text and "Run `memory-router init` here" in text
    assert str(bare) in text
    (bare / "memory-router.toml").write_text("learning = true\n", encoding="utf-8")
    assert launch(shell, places, "notice", installed=("path",), cwd=bare).stdout != ""
    for setup in ({"memory-router.toml": 'clusters = "memory/clusters.md"\n'},
                  {"pyproject.toml": '[project]\nname = "x"\n\n[tool.memory-router]\nclusters = "c.md"\n'},
                  {"brain/memory-layer1-clusters.tsv": "x\n"}):
        project = tmp_path / f"p{len(os.listdir(tmp_path))}"
        for name, text in setup.items():
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_text(text, encoding="utf-8")
        done = launch(shell, places, "notice", installed=("path",), cwd=project)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), setup
    done = launch(shell, places, "notice", installed=("path",), cwd=bare, env={"CLAUDE_PROJECT_DIR": str(project)})
    assert done.stdout == ""
    done = launch(shell, places, "notice", installed=("path",), cwd=bare, env={"MEMORY_ROUTER_CLUSTERS": "c.md"})
    assert done.stdout == ""


def test_launcher_output_is_the_hooks_byte_for_byte(tmp_path, memory_router_exe, example_cluster_file):
    """The real memory-router behind the launcher prints what it prints alone."""
    (tmp_path / "brain").mkdir()
    shutil.copyfile(example_cluster_file, tmp_path / "brain" / "memory-layer1-clusters.md")
    outputs = []
    for name, argv in (("direct", [memory_router_exe, "hook"]), ("launcher", [str(LAUNCHER), "hook"])):
        payload = json.dumps({"session_id": f"s-{name}", "transcript_path": "", "cwd": str(tmp_path),
                              "hook_event_name": "UserPromptSubmit",
                              "prompt": "why does the Bash tool not see my setx variable?"})
        env = dict(os.environ, MEMORY_ROUTER_BIN=memory_router_exe, CLAUDE_PROJECT_DIR=str(tmp_path),
                   MEMORY_ROUTER_CACHE_DIR=str(tmp_path / f"cache-{name}"))
        outputs.append(subprocess.run(argv, input=payload, capture_output=True, text=True, env=env,
                                      timeout=60).stdout)
    assert outputs[0] == outputs[1]
    assert "env_bash_tool_env_var_caching" in json.loads(outputs[0])["hookSpecificOutput"]["additionalContext"]


@pytest.fixture
def memory_router_exe():
    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if exe is None:
        pytest.fail("the memory-router console script is not installed in this environment")
    return exe
