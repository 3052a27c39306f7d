import json

import pytest

from harness.cli import main
from router.store.clusterfile import load_cluster_file


def test_clusters_check_ok_and_failing(capsys, tmp_path, example_cluster_file):
    assert main(["clusters", "check", str(example_cluster_file)]) == 0
    assert ": ok (26 clusters" in capsys.readouterr().out
    bad = tmp_path / "bad.md"
    bad.write_text(example_cluster_file.read_text(encoding="utf-8").replace(
        "layer1_project_memory_router \u00b7 ", "layer1_project_memory_router \u00b7 9", 1), encoding="utf-8")
    assert main(["clusters", "check", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["violations"][0]["line"] > 0


def test_clusters_check_takes_several_files_and_the_worst_exit_code_wins(capsys, tmp_path, example_cluster_file):
    bad = tmp_path / "bad.md"
    bad.write_text(example_cluster_file.read_text(encoding="utf-8").replace(
        "layer1_project_memory_router \u00b7 ", "layer1_project_memory_router \u00b7 9", 1), encoding="utf-8")
    missing = tmp_path / "missing.md"
    assert main(["clusters", "check", str(example_cluster_file), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{example_cluster_file}: ok (26 clusters" in out and f"{bad}:" in out
    # an unreadable file is exit 2, and the files after it are still checked
    assert main(["clusters", "check", str(missing), str(bad), "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and [f["file"] for f in report["files"]] == [str(missing), str(bad)]
    assert "error" in report["files"][0] and report["files"][1]["violations"]
    assert main(["clusters", "check", str(example_cluster_file), str(example_cluster_file)]) == 0


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


def test_clusters_convert_out_naming_a_directory_is_exit_2(example_cluster_file, tmp_path, capsys):
    (tmp_path / "outdir").mkdir()
    assert main(["clusters", "convert", str(example_cluster_file), "--to", "tsv", "--out", str(tmp_path / "outdir")]) == 2
    err = capsys.readouterr().err
    assert "outdir: --out names a directory" in err and "memory-layer1-clusters.tsv" in err
    assert list((tmp_path / "outdir").iterdir()) == []


def test_clusters_convert_refuses_to_create_missing_directories(example_cluster_file, tmp_path, capsys):
    out = tmp_path / "not" / "yet" / "c.tsv"
    assert main(["clusters", "convert", str(example_cluster_file), "--to", "tsv", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "directory of --out does not exist" in err and f"mkdir -p {out.parent}" in err
    assert not (tmp_path / "not").exists()


def test_clusters_check_refuses_an_option_like_operand_by_name_and_checks_it_after_dashes(
        capsys, tmp_path, example_cluster_file, monkeypatch):
    """issue 30 item 1: `clusters check --x.md` said "the following arguments are required: FILE"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "--x.md").write_text(example_cluster_file.read_text(encoding="utf-8").replace(
        "layer1_project_memory_router \u00b7 ", "layer1_project_memory_router \u00b7 9", 1), encoding="utf-8")
    (tmp_path / "-h").write_text(example_cluster_file.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["clusters", "check", "--x.md"]) == 2
    assert "--x.md is not an option of memory-router clusters check" in capsys.readouterr().err
    assert main(["clusters", "check", "--", "-h", "--x.md"]) == 1
    out = capsys.readouterr().out
    assert "-h: ok (26 clusters" in out and "--x.md:" in out
