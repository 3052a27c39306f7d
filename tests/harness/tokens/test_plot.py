"""``tokens report --plot FILE`` (harness.tokens.plot): the session curve as a PNG, and one line
naming the extra when matplotlib is absent."""

import json
import sys

import pytest

from harness.cli import main



@pytest.fixture
def memory_dir(tmp_path):
    from router.config import bundled_cluster_file, bundled_flat_index

    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_bytes(open(bundled_flat_index(), "rb").read())
    assert main(["slim", "render", "--memory-dir", str(directory), "--clusters", bundled_cluster_file(), "--json",
                 "--force"]) == 0  # no router hook here: what it routes is not measured
    return directory


def run(capsys, *args):
    from canaries.suite import bundled_suites

    suite = next(s for s in bundled_suites() if s.endswith("example.yaml"))
    capsys.readouterr()
    code = main(["tokens", "report", "--memory-dir", *map(str, args[:1]), "--suite", suite, *map(str, args[1:])])
    return code, capsys.readouterr()


def test_plot_writes_a_png_of_the_session_curve(memory_dir, tmp_path, capsys):
    target = tmp_path / "session.png"
    code, captured = run(capsys, memory_dir, "--plot", target, "--json")
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["plot"] == str(target) and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    curve = data["session"]["curve"]
    assert set(curve["series"]) == {"flat", "slim_routed", "slim_worst"}
    assert all(len(values) == curve["prompts"] for values in curve["series"].values())


def test_without_matplotlib_plot_is_one_line_naming_the_extra(memory_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    target = tmp_path / "session.png"
    code, captured = run(capsys, memory_dir, "--plot", target)
    assert code == 2 and not target.exists()
    from harness import installsource

    hint = installsource.extra_hint("lab", installsource.installed_source(), sys.executable)
    assert "[lab]" in hint and "memory-router[lab]==" not in hint   # where it came from, not an index release
    assert captured.err == ("memory-router: error: --plot needs matplotlib, which is not installed "
                            f"(fix: {hint})\n")


@pytest.mark.parametrize("name, message", [
    ("session.jpg", "--plot needs a .png or .svg file name, got .jpg"),
    ("no-such-dir/session.png", "--plot names a file in a directory that does not exist"),
])
def test_a_plot_path_that_cannot_be_written_is_refused_before_any_work(memory_dir, tmp_path, capsys, name, message):
    code, captured = run(capsys, memory_dir, "--plot", tmp_path / name)
    assert code == 2 and message in captured.err and captured.out == ""


def test_plot_needs_the_suite(memory_dir, tmp_path, capsys):
    assert main(["tokens", "report", "--memory-dir", str(memory_dir), "--plot", str(tmp_path / "s.png")]) == 2
    assert "--plot draws the modelled session, which needs a prompt set" in capsys.readouterr().err
