"""benchmarks/utterancefiles.py: blind files turned into the store's utterances and near-misses files,
and never over a file beside a store that holds other rows."""

import importlib.util
import pathlib
import shutil
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
EXAMPLE = BENCH.parent / "router" / "data" / "example"


@pytest.fixture(scope="module")
def files():
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("utterancefiles", BENCH / "utterancefiles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("blind, shipped, near", [
    ("example-blind.tsv", "memory-layer1-clusters.utterances.tsv", False),
    ("nearmiss-example.tsv", "memory-layer1-clusters.nearmisses.tsv", True),
])
def test_the_shipped_example_files_are_what_the_blind_files_make(files, tmp_path, blind, shipped, near):
    write = files.write_nearmisses_file if near else files.write_utterances_file
    out = write(str(BENCH / "enrichment" / blind), str(EXAMPLE / "memory-layer1-clusters.md"),
                out=str(tmp_path / "made.tsv"))
    assert pathlib.Path(out).read_bytes() == (EXAMPLE / shipped).read_bytes()


def test_a_file_beside_a_store_with_other_rows_is_never_overwritten(files, tmp_path):
    store = tmp_path / "memory-layer1-clusters.md"
    shutil.copyfile(EXAMPLE / "memory-layer1-clusters.md", store)
    beside = tmp_path / "memory-layer1-clusters.nearmisses.tsv"
    beside.write_text("cluster_id\tnear_miss\tcluster_hash\tengine\tmodel\twritten\nmine\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="exists and holds other rows"):
        files.write_nearmisses_file(str(BENCH / "enrichment" / "nearmiss-example.tsv"), str(store))
    assert beside.read_text(encoding="utf-8").endswith("mine\n")
