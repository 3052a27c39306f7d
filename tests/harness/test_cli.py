import json

import pytest

from harness.cli import COMMAND_MODULES, build_parser, main
from router.clusterfile import load_cluster_file

SPEC_PROMPT = "I set an env var with setx but the Bash tool still can't see it, why?"


def test_every_command_module_exists():
    import importlib

    for name in COMMAND_MODULES:
        assert hasattr(importlib.import_module(name), "register"), name
    build_parser()


def test_help_shows_every_default(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for text in ("score_floor = 3", "tag_weight = 3", "member_weight = 1", "line_cap = 12", "exit codes"):
        assert text in out


def test_route_json_shape(capsys, example_cluster_file):
    assert main(["route", SPEC_PROMPT, "--clusters", str(example_cluster_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("prompt_tokens", "scores", "floor", "top_score", "second_score", "margin_over_floor",
                "lead_over_second", "routed", "lines", "total_member_lines", "additional_context",
                "hook_output", "cluster_file", "settings"):
        assert key in out, key
    assert out["routed"][0] == "layer1_project_memory_router"
    assert out["hook_output"]["hookSpecificOutput"]["additionalContext"] == out["additional_context"]
    assert {"cluster_id", "score", "tag_hits", "member_hits"} <= set(out["scores"][0])


def test_route_table_for_people(capsys, example_cluster_file):
    assert main(["route", "refactor this loop", "--clusters", str(example_cluster_file)]) == 0
    assert "routed: nothing" in capsys.readouterr().out


def test_route_uses_bundled_store_when_none_configured(capsys):
    assert main(["route", SPEC_PROMPT, "--json"]) == 0
    captured = capsys.readouterr()
    assert "bundled example store" not in captured.err  # --json keeps stderr quiet too
    assert json.loads(captured.out)["routed"]


def test_route_bad_cluster_file_exits_2(capsys, tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_text("## Layer 0 - Cluster Router\n- c · x · tags: a\n## Layer 1 - Member Lines\n", encoding="utf-8")
    assert main(["route", "x", "--clusters", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"memory-router: error: {bad}:2:")
    assert err.count("\n") == 1


def test_clusters_check_ok_and_failing(capsys, tmp_path, example_cluster_file):
    assert main(["clusters", "check", str(example_cluster_file)]) == 0
    assert ": ok (26 clusters" in capsys.readouterr().out
    bad = tmp_path / "bad.md"
    bad.write_text(example_cluster_file.read_text(encoding="utf-8").replace(
        "layer1_project_memory_router \u00b7 ", "layer1_project_memory_router \u00b7 9", 1), encoding="utf-8")
    assert main(["clusters", "check", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["violations"][0]["line"] > 0


@pytest.mark.parametrize("to", ["md", "tsv"])
def test_clusters_convert_round_trip(tmp_path, example_cluster_file, to):
    source = example_cluster_file if to == "tsv" else example_cluster_file.with_suffix(".tsv")
    out = tmp_path / f"converted.{to}"
    assert main(["clusters", "convert", str(source), "--to", to, "--out", str(out)]) == 0
    assert load_cluster_file(out) == load_cluster_file(source)


def test_clusters_convert_refuses_onto_itself(example_cluster_file, tmp_path, capsys):
    copy = tmp_path / "c.md"
    copy.write_bytes(example_cluster_file.read_bytes())
    assert main(["clusters", "convert", str(copy), "--to", "md", "--out", str(copy)]) == 2


def test_clusters_convert_archives_a_different_sibling_before_replacing_it(example_cluster_file, tmp_path, capsys):
    source = tmp_path / "memory-layer1-clusters.md"
    source.write_bytes(example_cluster_file.read_bytes())
    sibling = tmp_path / "memory-layer1-clusters.tsv"
    hand_edited = b"cluster_id\tsize\tretier\ttags\tlabel\tslug\ttype\thook\nmine\t1\t0\ta\t\tmy_fact\tenv\tkeep me\n"
    sibling.write_bytes(hand_edited)
    assert main(["clusters", "convert", str(source), "--to", "tsv"]) == 0
    assert load_cluster_file(sibling) == load_cluster_file(source)
    archives = sorted(tmp_path.glob("memory-layer1-clusters-*.tsv"))
    assert len(archives) == 1 and archives[0].read_bytes() == hand_edited
    assert str(archives[0]) in capsys.readouterr().out
    # converting again writes identical bytes: nothing new to archive
    assert main(["clusters", "convert", str(source), "--to", "tsv"]) == 0
    assert len(sorted(tmp_path.glob("memory-layer1-clusters-*.tsv"))) == 1


@pytest.mark.parametrize(
    "pyproject",
    [b"tool = 5\n", b"[tool]\nmemory-router = 5\n", b"score_floor = 3 # \xff\n"],
    ids=["tool not a table", "our key not a table", "not UTF-8"],
)
def test_route_with_a_malformed_config_never_crashes(tmp_path, monkeypatch, capsys, pyproject,
                                                     example_cluster_file):
    monkeypatch.chdir(tmp_path)
    name = "memory-router.toml" if b"score_floor" in pyproject else "pyproject.toml"
    (tmp_path / name).write_bytes(pyproject)
    code = main(["route", "setx bash tool", "--clusters", str(example_cluster_file), "--json"])
    captured = capsys.readouterr()
    if name == "pyproject.toml" and b"memory-router" not in pyproject:
        assert code == 0 and json.loads(captured.out)["routed"]
    else:
        assert code == 2
        assert captured.err.startswith("memory-router: error: ") and len(captured.err.splitlines()) == 1


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2
