"""harness.lab.rundir carries the store's utterances file into a run when asked (issue 21 item 8)."""

import os

from harness.lab import rundir
from router.config import bundled_cluster_file, utterances_path


def test_a_run_routes_on_the_cluster_file_alone_by_default(tmp_path):
    paths, _text = rundir.prepare_run_dir(tmp_path / "run", "none", hook=False)
    assert os.path.isfile(paths.cluster_file)
    assert not os.path.exists(utterances_path(paths.cluster_file))


def test_utterances_true_copies_the_file_beside_the_run_cluster_file(tmp_path):
    paths, _text = rundir.prepare_run_dir(tmp_path / "run", "none", hook=False, utterances=True)
    copied = utterances_path(paths.cluster_file)
    with open(copied, "rb") as got, open(utterances_path(bundled_cluster_file()), "rb") as shipped:
        assert got.read() == shipped.read()


def test_a_store_without_utterances_copies_nothing(tmp_path):
    store = tmp_path / "store.md"
    with open(bundled_cluster_file(), encoding="utf-8") as handle:
        store.write_text(handle.read(), encoding="utf-8")
    paths, _text = rundir.prepare_run_dir(tmp_path / "run", "none", clusters=str(store), hook=False,
                                          utterances=True)
    assert not os.path.exists(utterances_path(paths.cluster_file))
    assert rundir.copy_utterances(str(store), paths) is False
