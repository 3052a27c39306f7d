"""The import contracts of docs/architecture.md (configured in pyproject.toml), run with the tests
so a violation fails the suite; each contract is also shown failing on a copy of the code with one
offending import added, and the cycle check on a package with a cycle."""

import ast
import os
import pathlib
import shutil
import subprocess
import sys

import grimp
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("router", "transcripts", "canaries", "harness")
LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")


def lint_imports(root, extra_env=None):
    """Run lint-imports on the packages under ``root`` with its pyproject.toml."""
    env = dict(os.environ, PYTHONPATH=str(root), **(extra_env or {}))
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", str(root / "pyproject.toml")],
                          cwd=root, env=env, capture_output=True, text=True)


def import_cycles(graph):
    """Each direct import ``a -> b`` for which ``b`` also reaches ``a``: one per cycle edge."""
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported in graph.modules and graph.find_shortest_chain(imported, importer):
                cycles.append((importer, imported))
    return cycles


def test_import_contracts_are_kept():
    result = lint_imports(REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 kept, 0 broken" in result.stdout


@pytest.fixture
def code_copy(tmp_path):
    """The four packages and pyproject.toml copied into a tmp dir, to break on purpose."""
    for name in PACKAGES:
        shutil.copytree(REPO_ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize("module,line,broken", [
    ("router/tokens.py", "import harness.output", "router imports no other project package"),
    ("router/routing/score.py", "from canaries import metrics", "a layer imports only the layers below it"),
    ("transcripts/census.py", "import canaries.suite", "a layer imports only the layers below it"),
    ("canaries/runner.py", "from harness import fileops", "canaries and transcripts never import harness"),
    ("router/cache.py", "import tomllib", "the hook's import graph holds no parser"),
    ("router/hookio.py", "from dataclasses import dataclass", "the hook's import graph holds no parser"),
    ("router/config.py", "import yaml", "the hook's import graph holds no parser"),
    # inside router: the store importing the scoring above it, the base importing a package,
    # the providers importing the hooks (one of the two arrows the move took out), siblings
    ("router/store/learned.py", "import router.routing.score", "the store over the base"),
    ("router/tokens.py", "import router.store.clusterfile", "the store over the base"),
    ("router/providers/provider.py", "import router.hooks.session", "the store over the base"),
    ("router/gate/gate.py", "import router.hooks.hook", "the store over the base"),
    # inside harness: a command importing a command above it, a sibling command, a shared module
    # importing its sibling; the composition root's faces imported by anyone else
    ("harness/install/settings.py", "import harness.doctor.checks", "no command imports another"),
    ("harness/slim/index.py", "from harness.doctor import checks", "no command imports another"),
    ("harness/install/routes.py", "from harness.slim import live", "no command imports another"),
    ("harness/project.py", "import harness.memorydir", "no command imports another"),
    ("harness/fileops.py", "import harness.output", "no command imports another"),
    ("harness/tokens/cli.py", "import harness.slim.cli", "a command's face is imported by the composition root alone"),
    ("harness/lab/runner.py", "import harness.transcript", "a command's face is imported by the composition root"),
    ("harness/doctor/checks.py", "from harness.install import cli", "a command's face is imported by the composition"),
])
def test_each_contract_fails_on_an_offending_import(code_copy, module, line, broken):
    path = code_copy / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}  # injected by the test\n", encoding="utf-8")
    result = lint_imports(code_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{broken}" in " ".join(result.stdout.split()), result.stdout
    assert "BROKEN" in result.stdout
    # The copy was checked, not the installed code: the offending line is reported from it.
    assert module.replace("/", ".")[:-3] in result.stdout


def test_harness_layers_are_exhaustive(code_copy):
    """A new top-level harness module must be given its layer: one outside them fails the contract."""
    (code_copy / "harness" / "stray.py").write_text("X = 1\n", encoding="utf-8")
    result = lint_imports(code_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "harness.stray" in result.stdout


def test_router_layers_are_exhaustive(code_copy):
    """A new router module must be given its layer: one outside them fails the contract."""
    (code_copy / "router" / "stray.py").write_text("X = 1\n", encoding="utf-8")
    result = lint_imports(code_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "router.stray" in result.stdout


def private_imports(roots):
    """``(file, module, name)`` for each ``from project.module import _name``: a module reaching
    into another module's underscore names (what siblings share gets a public name instead)."""
    found = []
    for root in roots:
        for path in sorted(pathlib.Path(root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                        and node.module.split(".")[0] in PACKAGES:
                    found += [(path.relative_to(root).as_posix(), node.module, alias.name) for alias in node.names
                              if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_underscore_names():
    assert private_imports([REPO_ROOT / name for name in PACKAGES]) == []


def test_private_import_walker_finds_one(tmp_path):
    (tmp_path / "router").mkdir()
    (tmp_path / "router" / "a.py").write_text("from router.tokens import _x, y\nfrom . import _z\n",
                                             encoding="utf-8")
    assert private_imports([tmp_path / "router"]) == [("a.py", "router.tokens", "_x")]


def test_no_import_cycles():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert import_cycles(graph) == []


def test_cycle_check_finds_a_cycle(tmp_path, monkeypatch):
    package = tmp_path / "cyclic_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from cyclic_pkg import b\n", encoding="utf-8")
    (package / "b.py").write_text("def f():\n    from cyclic_pkg import c\n", encoding="utf-8")
    (package / "c.py").write_text("import cyclic_pkg.a\n", encoding="utf-8")
    (package / "d.py").write_text("import cyclic_pkg.a\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("cyclic_pkg", cache_dir=None)
    assert import_cycles(graph) == [("cyclic_pkg.a", "cyclic_pkg.b"), ("cyclic_pkg.b", "cyclic_pkg.c"),
                                    ("cyclic_pkg.c", "cyclic_pkg.a")]


# A module longer than this does more than one thing: split it by what the parts do (issue 37).
MAX_MODULE_LINES = 400


def long_modules(roots, limit=MAX_MODULE_LINES):
    """``[(path, lines)]`` of every ``*.py`` under ``roots`` longer than ``limit`` lines."""
    found = []
    for root in roots:
        for path in sorted(pathlib.Path(root).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found.append((path.relative_to(REPO_ROOT if path.is_relative_to(REPO_ROOT) else root).as_posix(), lines))
    return found


def test_no_module_is_over_400_lines():
    assert long_modules([REPO_ROOT / name for name in PACKAGES]) == []


def test_the_line_bar_finds_a_long_module(tmp_path):
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    (tmp_path / "harness" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    assert long_modules([tmp_path]) == [("harness/long.py", MAX_MODULE_LINES + 1)]
