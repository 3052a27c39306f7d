"""One owner for each dangerous act (issue 35, docs/safety.md "Who does the dangerous things"): a
walk over the code of router/, harness/, transcripts/ and canaries/ fails when anything but the
owner does it. Each walker is also shown failing on a planted violation.

- **Opening a path** (items 2): only ``router/safeio.py`` calls the built-in ``open`` (or
  ``Path.open``, ``io.open``, ``read_text``, ``read_bytes``) or an ``os.open`` that can block
  (without ``O_NONBLOCK``, ``O_EXCL`` or ``O_DIRECTORY``); everyone else opens through it
  (``open_regular``, ``read_regular_bytes``, ``opener=open_regular_fd``), which never hangs on a
  FIFO and refuses what is not a regular file.
- **Deleting** (item 3): only ``router/removal.py`` calls ``os.remove``/``os.unlink``/
  ``Path.unlink``/``os.rmdir``/``Path.rmdir``/``shutil.rmtree``/``os.removedirs``.
"""

import ast
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("router", "harness", "transcripts", "canaries")

# --------------------------------------------------------------------------- reads

READ_OWNER = "router/safeio.py"
# (file, function): why the plain open there cannot meet a path the user's folders hold.
READ_ALLOWED = {
    ("router/tokens.py", "_load_stopwords"):
        "the stop-word list shipped inside the package (router/data/), never a user's path; router.tokens "
        "sits below router.safeio in the layers, so it cannot import it",
    ("router/providers/providerproc.py", "child_main"):
        "os.devnull, the system's null device, opened to silence a provider's child process",
    ("harness/installsource.py", "_distribution"):
        "importlib.metadata's Distribution.read_text: the installed package's own metadata",
    ("harness/installsource.py", "installed_source"):
        "importlib.metadata's Distribution.read_text: the installed package's own metadata",
}
SAFE_OPENERS = {"open_regular_fd"}
NON_BLOCKING_FLAGS = ("O_NONBLOCK", "O_EXCL", "O_DIRECTORY")


def _functions(tree):
    """``{node: name of the innermost enclosing function}`` for every node of ``tree``."""
    owner = {}

    def visit(node, name):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else name
            owner[child] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return owner


def _call_name(call):
    """``open``, ``os.open``, ``x.read_text``... as written."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        base = func.value.id if isinstance(func.value, ast.Name) else "<expr>"
        return f"{base}.{func.attr}"
    return None


def _flags_text(call, function_node, tree=None):
    """The source of an ``os.open``'s flags, and of the assignments to it when it is a name (in the
    function, or a module constant)."""
    if len(call.args) < 2:
        return ""
    flags = call.args[1]
    text = ast.unparse(flags)
    if isinstance(flags, ast.Name):
        scopes = [ast.walk(function_node)] if function_node is not None else []
        scopes += [tree.body] if tree is not None else []
        for scope in scopes:
            for node in scope:
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == flags.id
                                                        for t in node.targets):
                    text += " " + ast.unparse(node.value)
    return text


def _nodes(root, owner_file):
    """``(file, tree, node, enclosing function)`` for every node of every module of the packages
    under ``root`` but ``owner_file``."""
    root = pathlib.Path(root)
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel == owner_file:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            owner = _functions(tree)
            for node in ast.walk(tree):
                yield rel, tree, node, owner.get(node, "<module>")


def blocking_opens(root, allowed=READ_ALLOWED):
    """``[(file, line, function, call)]``: each open outside the owner and the allow-list that can
    block on a FIFO or read a path without the safe open."""
    found = []
    for rel, tree, node, function in _nodes(root, READ_OWNER):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if (rel, function) in allowed or name is None:
            continue
        bad = False
        if name == "open":
            opener = next((k.value for k in node.keywords if k.arg == "opener"), None)
            bad = not (opener is not None and ast.unparse(opener).split(".")[-1] in SAFE_OPENERS)
        elif name == "os.open":
            defs = {d.name: d for d in ast.walk(tree) if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
            bad = not any(flag in _flags_text(node, defs.get(function), tree) for flag in NON_BLOCKING_FLAGS)
        elif name.endswith((".open", ".read_text", ".read_bytes")):
            bad = True
        if bad:
            found.append((rel, node.lineno, function, name))
    return found


def test_only_safeio_opens_a_path():
    assert blocking_opens(REPO_ROOT) == []


def test_every_read_allowance_names_a_call_that_exists():
    """An allow-list entry whose call was since routed through safeio must go: a stale entry would
    let a new plain open in that function through unseen."""
    permissive = blocking_opens(REPO_ROOT, allowed={})
    assert {(rel, function) for rel, _line, function, _name in permissive} == set(READ_ALLOWED)


@pytest.mark.parametrize("line,caught", [
    ("def f(p):\n    return open(p).read()\n", "open"),
    ("def f(p):\n    with open(p, 'rb', opener=None) as h:\n        return h.read()\n", "open"),
    ("def f(p):\n    return p.read_text()\n", "p.read_text"),
    ("def f(p):\n    return pathlib.Path(p).read_bytes()\n", "<expr>.read_bytes"),
    ("def f(p):\n    return p.open('rb')\n", "p.open"),
    ("def f(p):\n    return io.open(p)\n", "io.open"),
    ("def f(p):\n    return os.open(p, os.O_RDONLY)\n", "os.open"),
    ("def f(p):\n    flags = os.O_WRONLY | os.O_CREAT\n    return os.open(p, flags)\n", "os.open"),
])
def test_a_planted_plain_open_is_caught(tmp_path, line, caught):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "harness" / "planted.py").write_text("import io, os, pathlib\n\n" + line, encoding="utf-8")
    assert [(rel, function, name) for rel, _line, function, name in blocking_opens(tmp_path)] == [
        ("harness/planted.py", "f", caught)]


def test_the_safe_forms_pass(tmp_path):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "harness" / "fine.py").write_text(
        "import os\nfrom router.safeio import open_regular, open_regular_fd\n\n"
        "def f(p):\n    with open(p, 'rb', opener=open_regular_fd) as h:\n        return h.read()\n\n"
        "def g(p):\n    return os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL)\n\n"
        "def h(p):\n    flags = os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0)\n    return os.open(p, flags)\n\n"
        "MODULE_FLAGS = os.O_WRONLY | getattr(os, 'O_NONBLOCK', 0)\n\n"
        "def k(p):\n    return os.open(p, MODULE_FLAGS)\n",
        encoding="utf-8")
    assert blocking_opens(tmp_path) == []


def test_a_module_constant_without_a_safe_flag_is_caught(tmp_path):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "harness" / "planted.py").write_text(
        "import os\n\nPLAIN = os.O_WRONLY | os.O_TRUNC\n\ndef f(p):\n    return os.open(p, PLAIN)\n",
        encoding="utf-8")
    assert [(rel, function, name) for rel, _line, function, name in blocking_opens(tmp_path)] == [
        ("harness/planted.py", "f", "os.open")]


# --------------------------------------------------------------------------- deletes

DELETE_OWNER = "router/removal.py"
DELETE_CALLS = {"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "shutil.rmtree"}
DELETE_METHODS = (".unlink", ".rmdir", ".rmtree")


def deletes(root):
    """``[(file, line, function, call)]``: each delete outside ``router/removal.py``."""
    found = []
    for rel, _tree, node, function in _nodes(root, DELETE_OWNER):
        if isinstance(node, ast.Call):
            name = _call_name(node)
        elif isinstance(node, ast.Attribute) and node.attr in ("unlink", "rmdir", "rmtree", "remove") \
                and isinstance(node.value, ast.Name) and node.value.id in ("os", "shutil"):
            name = f"{node.value.id}.{node.attr}"   # passed as a function: os.unlink as a callback
        else:
            continue
        if name and (name in DELETE_CALLS or name.endswith(DELETE_METHODS)):
            found.append((rel, node.lineno, function, name))
    return sorted(set(found))


def test_only_removal_deletes():
    assert deletes(REPO_ROOT) == []


@pytest.mark.parametrize("body,caught", [
    ("os.remove(p)", "os.remove"),
    ("os.unlink(p)", "os.unlink"),
    ("pathlib.Path(p).unlink(missing_ok=True)", "<expr>.unlink"),
    ("os.rmdir(p)", "os.rmdir"),
    ("p.rmdir()", "p.rmdir"),
    ("shutil.rmtree(p, ignore_errors=True)", "shutil.rmtree"),
    ("atexit.register(os.unlink, p)", "os.unlink"),
])
def test_a_planted_delete_is_caught(tmp_path, body, caught):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "transcripts" / "planted.py").write_text(
        f"import atexit, os, pathlib, shutil\n\n\ndef f(p):\n    {body}\n", encoding="utf-8")
    assert [(rel, function, name) for rel, _line, function, name in deletes(tmp_path)] == [
        ("transcripts/planted.py", "f", caught)]
