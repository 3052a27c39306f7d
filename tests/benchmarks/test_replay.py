"""benchmarks/replay.py: its synthetic sessions are what replay reads, and its recall check holds
to the case on the held-out suite (issue 31's second target)."""

import pytest

from support.replay_sessions import bench
from transcripts.evidence import session_evidence, session_transcripts


@pytest.fixture(scope="module")
def module():
    return bench()


def test_synthetic_sessions_read_as_typed_prompts_with_their_reads(module, tmp_path):
    files = module.write_history(str(tmp_path), sessions=4, prompts=6)
    assert len(files) == 4 and sorted(files) == session_transcripts(str(tmp_path))
    from router.config import bundled_cluster_file
    from router.store.clusterfile import load_cluster_file

    slugs = {member.slug for member in load_cluster_file(bundled_cluster_file()).members}
    session = session_evidence(files[3], slugs)
    assert session.versions == ("2.1.328",) and session.injections_visible
    typed = [p for p in session.prompts if p.skip is None]
    assert len(typed) == 6 and [p.compacted for p in session.prompts].count(True) == 1   # the fourth is compacted
    assert all(p.calls == 1 + len(p.sightings) for p in typed)


def test_evidence_recall_equals_fact_recall_case_by_case(module, tmp_path):
    result = module.measure_recall(str(tmp_path))
    assert result["same_pairs_needed"] and result["same_pairs_met"], result["differing_pairs"]
    assert result["evidence_recall"] == result["fact_recall"] and result["pairs"] > 100
