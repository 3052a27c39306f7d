"""harness.printedcommands: the one builder of commands printed for pasting (issue 35, item 5).

Three kinds of test: the builder round-trips hostile words (``shlex.split``, and bash itself for
a ``"$(...)"`` word); an AST walk over the four packages fails when a printed command is built
anywhere else, shown failing on planted violations; and every message that prints a command is
fed paths holding a space, ``;``, ``'``, ``$(...)`` and a newline, and what it printed must paste
back to the exact arguments.
"""

import ast
import pathlib
import re
import shlex
import shutil
import subprocess
from types import SimpleNamespace
from urllib.parse import quote

import pytest

from harness import printedcommands

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("router", "transcripts", "canaries", "harness")
OWNER = "harness/printedcommands.py"
# Hook commands written into settings files (not printed for pasting) quote their own words:
# harness.install.hookcommand owns them, and these modules build hook entries with it.
HOOK_WRITERS = {"harness/install/hookcommand.py", "harness/install/gate.py", "harness/install/scopes.py",
                "harness/install/plugins.py"}

HOSTILE = ["a b", "semi;colon", "it's", "$(touch pwned)", "new\nline", "back`tick`", 'dq"x', "-dash"]

# A command starts at one of these programs; its span runs to the first terminator, and an
# interpolated value inside the span (after a space, a quote or '=') means the command was built
# by hand. Prose that merely names a command ("`memory-router route` does ...") ends the span first.
COMMAND_START = re.compile(
    r"(?:^|(?<=[\s`'\"(]))(?:memory-router\s+[a-z]|pipx\s+(?:install|inject|uninstall|upgrade)\b|"
    r"pip\s+install\b|uv\s+(?:tool|pip)\b|python3?\s+-m\b|chmod\s|claude\s+(?:plugin|mcp)\b|"
    r"git\s+(?:add|rm|commit|checkout|status|clone|config)\b)")
TERMINATORS = ("`", ";", ", ", ": ", " (", " #", "\n", " or ", " then ", " in ", " from ", " is ", " to ",
               " with ", " and ")
HOLE = "\x00"
PROGRAM_WORDS = {"memory-router", "pipx", "pip", "uv", "python", "python3", "chmod", "claude", "git"}


def _template(node):
    """The literal text of a string-building expression with each interpolated value as HOLE, or
    ``None`` when ``node`` builds no string from literals."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left, right = _template(node.left), _template(node.right)
        if isinstance(node.op, ast.Mod):
            return re.sub(r"%[-#0 +]*\d*(?:\.\d+)?[sdrif]", HOLE, left) if left is not None else None
        if left is None and right is None:
            return None
        return (left if left is not None else HOLE) + (right if right is not None else HOLE)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        return re.sub(r"\{[^{}]*\}", HOLE, node.func.value.value)
    return None


def _hand_built(template):
    """True when ``template`` holds a command with an interpolated word."""
    for match in COMMAND_START.finditer(template):
        rest = template[match.start():]
        ends = [i for i in (rest.find(t, 1) for t in TERMINATORS) if i > 0]
        span = rest[:min(ends)] if ends else rest
        if re.search(r"[\s'\"=]" + HOLE, span):
            return True
    return False


def violations(source, relpath):
    """``(line, what)`` for each printed command built outside the owner in ``source``."""
    if relpath == OWNER:
        return []
    found = []
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
            if (owner == "shlex" and name in ("quote", "join")) or name == "quote_for_shell":
                if relpath not in HOOK_WRITERS:
                    found.append((node.lineno, f"{owner + '.' if owner else ''}{name}() quotes a word by hand"))
                continue
            if (name == "join" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant)
                    and func.value.value == " " and node.args and isinstance(node.args[0], (ast.List, ast.Tuple))):
                first = node.args[0].elts[0] if node.args[0].elts else None
                if isinstance(first, ast.Constant) and str(first.value) in PROGRAM_WORDS:
                    found.append((node.lineno, f"' '.join([{first.value!r}, ...]) builds a command"))
                continue
        if isinstance(parents.get(node), (ast.JoinedStr, ast.BinOp)) and _template(parents[node]) is not None:
            continue  # judged as part of the whole expression
        if isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call):
            template = _template(node)
            if template is not None and HOLE in template and _hand_built(template):
                found.append((node.lineno, f"a command built by hand: {ast.unparse(node)[:100]}"))
    return found


def test_no_printed_command_is_built_outside_the_owner():
    found = []
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            relpath = path.relative_to(REPO_ROOT).as_posix()
            found += [f"{relpath}:{line}: {what}" for line, what in violations(path.read_text(), relpath)]
    assert not found, "build these with harness.printedcommands:\n" + "\n".join(found)


@pytest.mark.parametrize("planted", [
    'fix = f"memory-router uninstall --project {directory}"',
    'print("and finally: memory-router sentinel uninstall --project " + directory)',
    'what = f"pip install {spec}"',
    'fix = "install with: pipx install --force {}".format(spec)',
    'fix = "run memory-router canary run %s" % path',
    "fix = f\"install with the mcp extra: --from '{spec}' ... e.g. pipx install '{spec}'\"",
    'hint = " ".join(["uv", "pip", "install", "--python", python, target])',
    'import shlex\nword = shlex.quote(path)',
    'from harness.install.hookcommand import quote_for_shell\nword = quote_for_shell(path)',
    'fix = f"if it should change, make it writable first: chmod u+w {path}"',
    'note = f"({found} removes them: claude plugin uninstall {plugin_id})"',
])
def test_the_walk_finds_a_planted_violation(planted):
    assert violations(planted, "harness/anything.py"), planted


@pytest.mark.parametrize("prose", [
    'line = f"memory-router doctor: {verdict} ({directory})"',
    'why = f"asked {prompt!r}, exactly as `memory-router route` does on {path}"',
    'note = f"{len(ours)} entries in {path} run memory-router mcp ({names})"',
    'note = f"memory-router is on PATH ({found}): a portable command"',
    'fix = "run " + printedcommands.memory_router("doctor", "--project", directory)',
    'say(f"memory-router init{suffix}: {directory}")',
    'error = "no memory-router hook in " + ", ".join(paths) + " or an enabled plugin"',
])
def test_the_walk_leaves_prose_and_the_owner_alone(prose):
    assert violations(prose, "harness/anything.py") == [], prose


def test_the_owner_itself_is_exempt():
    assert violations('x = f"memory-router doctor --project {d}"', OWNER) == []


# --------------------------------------------------------------------------- the builder


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_command_pastes_back_to_its_words(hostile):
    text = printedcommands.memory_router("doctor", "--project", hostile)
    assert shlex.split(text) == ["memory-router", "doctor", "--project", hostile]


def test_a_path_object_is_a_word_and_other_types_are_refused(tmp_path):
    assert shlex.split(printedcommands.command("chmod", "u+w", tmp_path / "a b")) == ["chmod", "u+w",
                                                                                     str(tmp_path / "a b")]
    with pytest.raises(TypeError):
        printedcommands.command("memory-router", 3)
    with pytest.raises(ValueError):
        printedcommands.command()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to expand a $(...) word")
@pytest.mark.parametrize("hostile", [h for h in HOSTILE if not h.endswith("\n")])
def test_a_substitution_word_expands_to_the_inner_commands_output(hostile, tmp_path):
    # bash runs the printed text: printf prints its argument, and the outer printf shows the one
    # word the substitution became; nothing else runs (pwned is never created)
    inner = printedcommands.substitution("printf", "%s", hostile)
    text = printedcommands.command("printf", "%s\\0", inner)
    done = subprocess.run(["bash", "-c", text], cwd=tmp_path, capture_output=True, text=True, timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout == hostile + "\0"
    assert not (tmp_path / "pwned").exists()


def test_recording_collects_what_was_built_while_open():
    printedcommands.memory_router("doctor")  # before: not collected
    with printedcommands.recording() as built:
        printedcommands.memory_router("slim", "rollback", "--memory-dir", "a b")
        printedcommands.word("not a command")
    printedcommands.memory_router("doctor")  # after: not collected
    assert built == [("memory-router", "slim", "rollback", "--memory-dir", "a b")]


# --------------------------------------------------------------------------- every message


def pasted_commands(text, built):
    """Each recorded command whose rendering appears in ``text``; fails when one does not."""
    found = []
    for argv in built:
        rendered = printedcommands.command(*argv)
        assert rendered in text, f"{rendered!r} not printed in {text!r}"
        found.append((rendered, argv))
    return found


def assert_pastes_back(text, built, hostile):
    """Some command printed in ``text`` carries ``hostile`` inside one word, and every printed
    command ``shlex.split``s back to exactly the words it was built from."""
    carried = False
    for rendered, argv in pasted_commands(text, built):
        if any(isinstance(w, printedcommands.Substitution) for w in argv):
            inner = [w for w in argv if isinstance(w, printedcommands.Substitution)]
            carried |= any(hostile in word for w in inner for word in w.words)
            argv = [w for w in argv if not isinstance(w, printedcommands.Substitution)]
            rendered = printedcommands._render(argv)
        assert shlex.split(rendered) == list(argv)
        carried |= any(hostile in word for word in argv)  # a word, or a requirement's path
    assert carried, f"no printed command carries {hostile!r}: {text!r}"


def _messages(hostile, tmp_path, monkeypatch):
    """``(name, thunk)``: each thunk returns the text of one message that prints a command, built
    from ``hostile`` as a path or value."""
    from harness import installsource, plugin
    from harness.canary import checks
    from harness.doctor import plugins as doctor_plugins
    from harness.init import setup
    from harness.install import extras, hooks, scopes
    from harness.install import plugins as install_plugins

    checkout = installsource.InstallSource("checkout", "1.0", url="file://" + quote("/src/" + hostile))
    yield "canary verdict lines", lambda: "\n".join(checks.verdict_commands("case-1", hostile, record=hostile,
                                                                            suite=hostile))
    yield "doctor's uninstall fix", lambda: doctor_plugins._uninstall_command(
        [("project", "settings.json", "the hook", True)], hostile, "citation gate")
    yield "init's next commands", lambda: "\n".join(setup.next_commands([{"name": "hook routes",
                                                                          "prompt": hostile}]))
    yield "the extra's pip command", lambda: extras.extra_command(
        "mcp", {"kind": "venv", "python": hostile, "has_pip": True, "root": None},
        installsource.InstallSource("index", "1.0"))
    yield "the extra's uv command", lambda: extras.extra_command(
        "mcp", {"kind": "venv", "python": hostile, "has_pip": False, "root": None},
        installsource.InstallSource("index", "1.0"))
    yield "the checkout's extra command", lambda: extras.extra_command(
        "mcp", {"kind": "checkout", "python": "python3", "has_pip": True, "root": hostile},
        installsource.InstallSource("index", "1.0"))
    yield "pipx install of a checkout", lambda: installsource.install_command(checkout, ("mcp",))
    yield "the extra hint", lambda: installsource.extra_hint("mcp", checkout, "python3")
    yield "plugin bootstrap's --from example", lambda: plugin.install_fix("memory-router[mcp]==9.9",
                                                                          source=checkout)
    yield "plugin bootstrap's MCP-extra fix", lambda: plugin.mcp_extra_fix(hostile)
    yield "install's doctor line", lambda: "\n".join(
        text for _stream, text in hooks.install_lines(
            {"notes": [], "settings": "settings.json", "action": "added", "detail": "", "backup": None,
             "gate": None, "scope": "local", "scope_why": "why", "command": "c", "session_command": "s",
             "project": hostile}))
    monkeypatch.setattr(scopes, "other_scope_conflicts",
                        lambda directory, scope, command: [("project", "settings.json",
                                                            type("E", (), {"marked": True, "command": "x",
                                                                           "where": "w"})())])

    def refused():
        with pytest.raises(Exception) as raised:
            scopes.refuse_other_scopes(hostile, "local", "cmd")
        return raised.value.fix
    yield "install's other-scope fix", refused
    from harness import fileops, options
    from harness.replay.suite import SuiteWriter

    def read_only():
        path = tmp_path / ("ro-" + hostile.replace("/", "_"))
        path.write_text("x")
        path.chmod(0o444)
        with pytest.raises(Exception) as raised:
            fileops.require_not_read_only(str(path), "file")
        return raised.value.fix
    yield "the read-only fix", read_only

    def misplaced_option():
        parser = options.file_operand_parser()(prog="memory-router canary run")
        parser.add_argument("files", nargs="*")
        parser.add_argument("--json", action="store_true")

        def error(message):
            raise ValueError(message)
        parser.error = error
        with pytest.raises(ValueError) as raised:
            parser.parse_args(["--" + hostile])
        return str(raised.value)
    if " " not in hostile:  # a token with a space is an operand to argparse
        yield "the misplaced-option hint", misplaced_option
    if "\n" not in hostile:  # a comment line in YAML cannot hold one
        yield "the suite file's header", lambda: SuiteWriter(str(tmp_path / ("s " + hostile)),
                                                              str(tmp_path / "c.md"), SimpleNamespace(clusters=[])).render()
    plugin_found = type("P", (), {"plugin_id": hostile, "where": lambda self: "user plugin"})()
    monkeypatch.setattr(install_plugins, "enabled_with", lambda project_dir, role, environ=None: [plugin_found])
    yield "the plugin-still-enabled note", lambda: install_plugins.still_enabled_note(str(tmp_path))


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_message_pastes_back_the_exact_arguments(hostile, tmp_path, monkeypatch):
    for name, message in _messages(hostile, tmp_path, monkeypatch):
        with printedcommands.recording() as built:
            text = message()
        assert built, f"{name}: built no command"
        try:
            assert_pastes_back(text, built, hostile)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None
