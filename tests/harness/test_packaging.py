"""The wheel users install: built from a copy of the source (``pip wheel``, offline through the
configured package index), it holds every package of the source tree (pyproject's ``packages``
list is explicit, so a new package left out of it would ship a broken install), and installed into
a fresh virtual environment its ``memory-router hook`` routes the example store it carries.

The fresh environment gets the wheel alone (``--no-deps``): the hook's path is the standard
library and router core only, so it must run there without the dependencies."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("router", "canaries", "transcripts", "harness")
SETX_PROMPT = "why does the Bash tool not see an environment variable I set with setx?"


def source_packages(root):
    """Every package directory (one holding ``__init__.py``) of the source, as a dotted name."""
    found = set()
    for top in PACKAGES:
        for init in (root / top).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.add(".".join(init.parent.relative_to(root).parts))
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    source = tmp_path_factory.mktemp("source")
    for top in PACKAGES:
        shutil.copytree(REPO_ROOT / top, source / top, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    [path] = dist.glob("memory_router-*.whl")
    return path, source_packages(source)


def test_the_wheel_holds_every_package_of_the_source(wheel):
    path, packages = wheel
    with zipfile.ZipFile(path) as archive:
        shipped = {".".join(name.split("/")[:-1]) for name in archive.namelist() if name.endswith("/__init__.py")}
        names = set(archive.namelist())
    assert packages - shipped == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert "harness/sentinel/__main__.py" in names and "harness/__main__.py" in names
    assert "router/data/example/memory-layer1-clusters.md" in names


def test_the_installed_wheel_routes_the_example_store(wheel, tmp_path):
    path, _packages = wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                                "--quiet", str(path)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where = subprocess.run([str(python), "-P", "-c", "import harness, router.config as c; "
                            "print(harness.__file__); print(c.bundled_cluster_file())"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    harness_file, clusters = where.stdout.split()
    assert harness_file.startswith(str(venv)) and clusters.startswith(str(venv)), where.stdout

    exe = python.with_name("memory-router")
    payload = {"session_id": "wheel", "transcript_path": "", "cwd": str(tmp_path),
               "hook_event_name": "UserPromptSubmit", "prompt": SETX_PROMPT}
    done = subprocess.run([str(exe), "hook", "--clusters", clusters], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "env_bash_tool_env_var_caching" in context


def source_data_files(root):
    """Every file of the source packages that is not Python (suites, the example store, the
    stopwords, the enrich protocol's schema): what a user's install needs beside the code."""
    found = set()
    for top in PACKAGES:
        for path in (root / top).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts:
                found.add(path.relative_to(root).as_posix())
    return found


def test_the_wheel_carries_every_data_file_of_the_source(wheel):
    path, _packages = wheel
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
    missing = source_data_files(REPO_ROOT) - names
    assert "router/data/example/memory-layer1-clusters.utterances.tsv" in names
    assert missing == set(), "add these to [tool.setuptools.package-data] in pyproject.toml"


def test_the_sdist_carries_every_data_file(tmp_path):
    """``python -m build --sdist`` (pypa/build, in the test extra; --no-isolation: offline, with the
    environment's setuptools, whatever its version): the source distribution PyPI would get holds every data file, the
    README and pyproject."""
    import tarfile

    pytest.importorskip("build")
    source = tmp_path / "source"
    for top in PACKAGES:
        shutil.copytree(REPO_ROOT / top, source / top, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check", "--outdir", str(dist),
                            str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    [sdist] = dist.glob("memory[-_]router-*.tar.gz")  # the name's separator depends on the setuptools version
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md"} <= names
    assert source_data_files(source) - names == set()
