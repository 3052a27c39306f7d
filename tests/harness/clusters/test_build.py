"""``memory-router clusters build``: inputs, atomic writes of both forms, refusals, summary."""

import json
import os

import pytest
import yaml

from harness.clusters import builder
from harness.cli import main
from router.store.clusterfile import load_cluster_file


def build(capsys, *args):
    code = main(["clusters", "build", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def build_json(capsys, *args):
    code, out, err = build(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def write_memory_dir(directory, index, shape):
    """A Claude Code memory directory holding the members of ``index``, front matter in ``shape``."""
    directory.mkdir(parents=True)
    lines = ["# Memory Index", ""]
    for member in index.members:
        lines.append(f"- [{member.slug.replace('_', ' ')}]({member.slug}.md) \u2014 {member.hook}")
        if shape == "top-level type":
            data = {"name": member.slug.replace("_", " "), "description": member.hook, "type": member.type}
        else:
            data = {"name": member.slug.replace("_", "-"), "description": member.hook,
                    "metadata": {"type": member.type}}
        front = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=10_000)
        (directory / f"{member.slug}.md").write_text(f"---\n{front}---\nBody.\n", encoding="utf-8")
    (directory / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def test_build_from_flat_index_writes_both_forms(capsys, tmp_path, example_flat_index):
    out = tmp_path / "brain" / "memory-layer1-clusters.md"
    summary = build_json(capsys, "--index", example_flat_index, "--out", out)
    md, tsv = load_cluster_file(out), load_cluster_file(out.with_suffix(".tsv"))
    assert md == tsv
    assert len(md.members) == summary["memories"] == 126
    assert summary["written"] and not summary["dry_run"] and summary["source"]["kind"] == "index"
    assert [c["cluster_id"] for c in summary["clusters"]] == list(md.cluster_ids)
    assert summary["self_routing"]["share"] >= 0.9
    assert summary["changes"]["previous"] is False
    assert set(summary) >= {"out", "previous", "labels", "unchanged", "archived", "target_clusters", "max_size",
                            "keep_clusters", "warnings"}


def test_default_out_is_brain_under_the_current_directory(capsys, tmp_path, example_flat_index, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _err = build(capsys, "--index", example_flat_index)
    assert code == 0
    assert (tmp_path / "brain" / "memory-layer1-clusters.md").is_file()
    assert (tmp_path / "brain" / "memory-layer1-clusters.tsv").is_file()
    assert "self-routing:" in out and "wrote" in out


def test_second_build_writes_identical_bytes(capsys, tmp_path, example_flat_index):
    out = tmp_path / "c.md"
    build_json(capsys, "--index", example_flat_index, "--out", out)
    before = (out.read_bytes(), out.with_suffix(".tsv").read_bytes(), out.stat().st_mtime_ns)
    summary = build_json(capsys, "--index", example_flat_index, "--out", out)
    assert summary["unchanged"] and not summary["written"] and summary["archived"] == []
    assert (out.read_bytes(), out.with_suffix(".tsv").read_bytes(), out.stat().st_mtime_ns) == before
    assert summary["changes"]["kept"] == [c["cluster_id"] for c in summary["clusters"]]


@pytest.mark.parametrize("shape", ["top-level type", "metadata type"])
def test_memory_dir_in_each_shape_matches_the_flat_index(capsys, tmp_path, shape, example_cluster_file,
                                                         example_flat_index):
    index = load_cluster_file(example_cluster_file)
    memory_dir = write_memory_dir(tmp_path / "memory", index, shape)
    build_json(capsys, "--memory-dir", memory_dir, "--out", tmp_path / "from_dir.md")
    build_json(capsys, "--index", example_flat_index, "--out", tmp_path / "from_index.md")
    assert (tmp_path / "from_dir.md").read_bytes() == (tmp_path / "from_index.md").read_bytes()


def test_memory_dir_from_the_config_file(capsys, tmp_path, example_cluster_file, monkeypatch):
    write_memory_dir(tmp_path / "memory", load_cluster_file(example_cluster_file), "metadata type")
    (tmp_path / "memory-router.toml").write_text('memory_dir = "memory"\n')
    monkeypatch.chdir(tmp_path)
    summary = build_json(capsys, "--out", tmp_path / "c.md")
    assert summary["source"] == {"kind": "memory_dir", "path": str(tmp_path / "memory")}


def test_rebuild_after_adding_three_memories_keeps_ids_and_reports_changes(capsys, tmp_path, example_flat_index):
    lines = example_flat_index.read_text(encoding="utf-8").splitlines()
    member_lines = [i for i, line in enumerate(lines) if line.startswith("- ")]
    held = {member_lines[3], member_lines[50], member_lines[90]}
    smaller = tmp_path / "smaller.md"
    smaller.write_text("\n".join(line for i, line in enumerate(lines) if i not in held) + "\n", encoding="utf-8")
    out = tmp_path / "c.md"
    first = build_json(capsys, "--index", smaller, "--out", out)
    second = build_json(capsys, "--index", example_flat_index, "--out", out)
    changes = second["changes"]
    assert second["previous"] == str(out) and len(changes["added"]) == 3
    kept = set(changes["kept"])
    for cluster in second["clusters"]:
        assert (cluster["carried_over"] is not None) == (cluster["cluster_id"] in kept)
    assert len(kept) >= 0.7 * len(first["clusters"])
    assert len(second["archived"]) == 2 and all(os.path.isfile(p) for p in second["archived"])
    # --keep-clusters moves nobody.
    out.write_bytes(open(second["archived"][0], "rb").read())
    out.with_suffix(".tsv").write_bytes(open(second["archived"][1], "rb").read())
    kept_run = build_json(capsys, "--index", example_flat_index, "--out", out, "--keep-clusters")
    assert kept_run["changes"]["moved"] == [] and kept_run["changes"]["removed"] == []


def test_dry_run_writes_nothing(capsys, tmp_path, example_flat_index):
    out = tmp_path / "brain" / "c.md"
    code, stdout, _err = build(capsys, "--index", example_flat_index, "--out", out, "--dry-run")
    assert code == 0 and "dry run: nothing written" in stdout
    assert not (tmp_path / "brain").exists()
    build_json(capsys, "--index", example_flat_index, "--out", out, "--clusters", 20)
    before = sorted(os.listdir(out.parent)), out.read_bytes()
    summary = build_json(capsys, "--index", example_flat_index, "--out", out, "--dry-run")
    assert summary["dry_run"] and not summary["written"]
    assert (sorted(os.listdir(out.parent)), out.read_bytes()) == before
    changes = summary["changes"]
    assert changes["previous"] and (changes["new"] or changes["split"] or changes["moved"])
    code, stdout, _err = build(capsys, "--index", example_flat_index, "--out", out, "--dry-run")
    assert "what changed" in stdout and "moved" in stdout


def test_refuses_when_the_output_changed_since_it_was_read(capsys, tmp_path, example_flat_index, monkeypatch):
    out = tmp_path / "c.md"
    build_json(capsys, "--index", example_flat_index, "--out", out, "--clusters", 20)
    real_build = builder.build_clusters

    def racing_build(*args, **kwargs):
        out.write_text(out.read_text(encoding="utf-8") + "\n<!-- edited by hand meanwhile -->\n", encoding="utf-8")
        return real_build(*args, **kwargs)

    monkeypatch.setattr(builder, "build_clusters", racing_build)
    code, _out, err = build(capsys, "--index", example_flat_index, "--out", out)
    assert code == 1 and "changed since it was read" in err
    assert out.read_text(encoding="utf-8").endswith("<!-- edited by hand meanwhile -->\n")
    assert not [name for name in os.listdir(tmp_path) if ".archive" in name]


def test_labels_file_pins_and_names(capsys, tmp_path, example_flat_index):
    labels = tmp_path / "labels.yaml"
    labels.write_text("clusters:\n  layer1_canaries:\n    label: the two canary facts\n    pin:\n"
                      "      - env_bash_tool_env_var_caching\n      - env_cloudflare_workers_build_secret_vs_text\n"
                      "    aliases: [setx]\n", encoding="utf-8")
    out = tmp_path / "c.md"
    for _ in range(2):  # the pins hold on a rebuild against the written file too
        build_json(capsys, "--index", example_flat_index, "--out", out, "--labels", labels)
        cluster = load_cluster_file(out).cluster("layer1_canaries")
        assert {"env_bash_tool_env_var_caching", "env_cloudflare_workers_build_secret_vs_text"} <= \
            {m.slug for m in cluster.members}
        assert cluster.label == "the two canary facts" and "setx" in cluster.tags


@pytest.mark.parametrize("text, line, message", [
    ("clusters:\n  layer1_x:\n    pin: [no_such_slug]\n", 3, "not a memory in this store"),
    ("clusters:\n  layer1_x:\n    labels: oops\n", 3, "unknown key 'labels'"),
    ("clusters:\n  layer1_x:\n    label: fine\nextra: 1\n", 4, "unknown key 'extra'"),
])
def test_labels_errors_give_file_and_line(capsys, tmp_path, example_flat_index, text, line, message):
    labels = tmp_path / "labels.yaml"
    labels.write_text(text, encoding="utf-8")
    code, _out, err = build(capsys, "--index", example_flat_index, "--out", tmp_path / "c.md", "--labels", labels)
    assert code == 2
    assert f"{labels}:{line}" in err and message in err
    assert not (tmp_path / "c.md").exists()


@pytest.mark.parametrize("setup, args, message", [
    (None, [], "no memories to build from"),
    (None, ["--memory-dir", "missing"], "memory directory does not exist"),
    (None, ["--memory-dir", "FLAT"], "is a file, not a memory directory"),
    (None, ["--memory-dir", "/nonexistent"], "/nonexistent: memory directory does not exist"),
    (None, ["--index", "missing.md"], "cannot read index"),
    ("empty_index", ["--index", "MEMORY.md"], "no memory lines found"),
    ("slim_index", ["--index", "MEMORY.md"], "slim index"),
    ("empty_dir", ["--memory-dir", "memory"], "no memories found"),
    ("broken_out", ["--index", "FLAT"], "cannot read the existing cluster file"),
    (None, ["--index", "FLAT", "--clusters", "0"], "at least 1"),
    (None, ["--index", "FLAT", "--max-size", "0"], "size ceiling"),
    (None, ["--index", "FLAT", "--previous", "nope.md"], "cannot read cluster file"),
])
def test_invalid_input_exits_2(capsys, tmp_path, monkeypatch, example_flat_index, setup, args, message):
    monkeypatch.chdir(tmp_path)
    if setup == "empty_index":
        (tmp_path / "MEMORY.md").write_text("# Memory Index\n\nnothing here\n")
    elif setup == "slim_index":
        from canaries.memoryindex import ROUTER_HEADING

        (tmp_path / "MEMORY.md").write_text(f"# Memory Index\n\n- a_x \u2014 hot line\n\n{ROUTER_HEADING}\n")
    elif setup == "empty_dir":
        (tmp_path / "memory").mkdir()
    elif setup == "broken_out":
        (tmp_path / "brain").mkdir()
        (tmp_path / "brain" / "memory-layer1-clusters.md").write_text("## Layer 0 - Cluster Router\n- x · y\n")
    args = [str(example_flat_index) if a == "FLAT" else a for a in args]
    code, _out, err = build(capsys, *args)
    assert code == 2, err
    assert message in err and "Traceback" not in err
    if setup == "broken_out":
        broken = (tmp_path / "brain" / "memory-layer1-clusters.md").read_text()
        assert broken == "## Layer 0 - Cluster Router\n- x · y\n"


def test_duplicate_index_lines_are_warned_about(capsys, tmp_path):
    index = tmp_path / "MEMORY.md"
    index.write_text("- a_docker \u2014 docker compose\n- b_docker \u2014 docker build\n- a_docker \u2014 again\n")
    summary = build_json(capsys, "--index", index, "--out", tmp_path / "c.md")
    assert summary["warnings"] == [f"{index}:3: a_docker is listed again (first on line 1); the first line is used"]


def test_previous_hand_made_file_lends_ids_and_labels(capsys, tmp_path, example_flat_index, example_cluster_file):
    summary = build_json(capsys, "--index", example_flat_index, "--out", tmp_path / "c.md",
                         "--previous", example_cluster_file, "--dry-run")
    hand = load_cluster_file(example_cluster_file)
    kept = summary["changes"]["kept"]
    assert kept and set(kept) <= set(hand.cluster_ids)
    for cluster in summary["clusters"]:
        if cluster["cluster_id"] in kept:
            assert cluster["label"] == hand.cluster(cluster["cluster_id"]).label


def test_output_is_the_same_under_any_hash_seed(run_cli, tmp_path, example_flat_index):
    outputs = []
    for seed in ("1", "4242"):
        out = tmp_path / seed / "c.md"
        result = run_cli("clusters", "build", "--index", example_flat_index, "--out", out,
                         env={"PYTHONHASHSEED": seed})
        assert result.returncode == 0, result.stderr
        outputs.append((out.read_bytes(), out.with_suffix(".tsv").read_bytes()))
    assert outputs[0] == outputs[1]


def test_help_lists_build(run_cli):
    result = run_cli("clusters", "build", "--help")
    assert result.returncode == 0 and b"--memory-dir" in result.stdout and b"--keep-clusters" in result.stdout


def test_output_that_is_a_directory_is_invalid_input(capsys, tmp_path, example_flat_index):
    (tmp_path / "c.md").mkdir()
    code, _out, err = build(capsys, "--index", example_flat_index, "--out", tmp_path / "c.md")
    assert code == 2 and "the output is a directory" in err


def test_a_failed_write_is_refused_without_a_traceback(capsys, tmp_path, example_flat_index, monkeypatch):
    from harness import fileops

    def full_disk(path, data, mode, name=None):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(fileops, "synced_temp_beside", full_disk)
    code, _out, err = build(capsys, "--index", example_flat_index, "--out", tmp_path / "c.md")
    assert code == 1 and "No space left on device" in err and "Traceback" not in err


@pytest.mark.parametrize("failure", ["tsv write fails", "tsv edited meanwhile"])
def test_a_refusal_after_the_md_was_written_says_so(capsys, tmp_path, example_flat_index, monkeypatch, failure):
    # The .md is replaced first; if the .tsv then cannot be, the message must not claim that
    # nothing was written: it names what was written and the archives that were kept.
    from harness import fileops

    out = tmp_path / "c.md"
    build_json(capsys, "--index", example_flat_index, "--out", out, "--clusters", 20)
    old_tsv = (tmp_path / "c.tsv").read_bytes()
    real_temp = fileops.synced_temp_beside

    def md_then_trouble(path, data, mode, name=None):
        if str(path).endswith(".tsv"):
            if failure == "tsv write fails":
                raise OSError(28, "No space left on device", str(path))
            with open(path, "ab") as handle:
                handle.write(b"# edited meanwhile\n")
        return real_temp(path, data, mode, name)

    if failure == "tsv edited meanwhile":
        real_check = fileops.Snapshot.unchanged

        def edit_tsv_before_its_check(snapshot):
            if snapshot.path.endswith(".tsv") and out.read_bytes() != snapshot_md[0]:
                with open(snapshot.path, "ab") as handle:
                    handle.write(b"# edited meanwhile\n")
            return real_check(snapshot)

        snapshot_md = [out.read_bytes()]
        monkeypatch.setattr(fileops.Snapshot, "unchanged", edit_tsv_before_its_check)
    else:
        monkeypatch.setattr(fileops, "synced_temp_beside", md_then_trouble)
    code, _out, err = build(capsys, "--index", example_flat_index, "--out", out, "--clusters", 18)
    assert code == 1
    assert "nothing was written" not in err
    assert f"wrote {out}" in err and str(tmp_path / "c.tsv") in err
    archives = sorted(name for name in os.listdir(tmp_path) if ".archive" in name)
    assert len(archives) == 2 and all(name in err for name in archives)
    tsv_now = (tmp_path / "c.tsv").read_bytes()
    assert tsv_now == old_tsv or tsv_now == old_tsv + b"# edited meanwhile\n"


def test_a_symlinked_output_stays_a_link_and_its_target_gets_the_build(capsys, tmp_path, example_flat_index):
    (tmp_path / "dotfiles").mkdir()
    out = tmp_path / "c.md"
    build_json(capsys, "--index", example_flat_index, "--out", out, "--clusters", 20)
    for name in ("c.md", "c.tsv"):
        os.replace(tmp_path / name, tmp_path / "dotfiles" / name)
        (tmp_path / name).symlink_to(tmp_path / "dotfiles" / name)
    build_json(capsys, "--index", example_flat_index, "--out", out, "--clusters", 18)
    for name in ("c.md", "c.tsv"):
        assert (tmp_path / name).is_symlink()
    assert len(load_cluster_file(tmp_path / "dotfiles" / "c.md").clusters) == 18
    assert len(load_cluster_file(tmp_path / "dotfiles" / "c.tsv").clusters) == 18
