"""clusters build --engine: the engine's names applied under the builder's rules."""

import pytest

from harness.clusters import naming
from harness.clusters.enrich_protocol import LABEL_PROTOCOL, request_problems
from harness.clusters.labels import ClusterLabel, Labels
from router.store.clusterfile import Cluster, ClusterIndex, Member


def built(*groups):
    clusters = []
    for cluster_id, tags, label, slugs in groups:
        members = tuple(Member(s, "env", f"hook of {s}", 0) for s in slugs)
        clusters.append(Cluster(cluster_id, len(members), False, tuple(tags), label, members, 0))
    return ClusterIndex(clusters)


INDEX = built(("layer1_working_failed", ("working", "failed", "pnpm"), "", ["env_pnpm_store", "env_pnpm_lock"]),
              ("layer1_kept_one", ("postgres", "dump"), "the Postgres box", ["env_pg_dump"]),
              ("layer1_third", ("adb", "device"), "", ["env_adb_devices"]))


def answer(cluster_id, label, tags):
    return {"cluster": {"id": cluster_id, "label": label, "tags": tags}}


def test_naming_jobs_send_one_label_request_per_cluster_with_bodies():
    jobs = naming.naming_jobs(INDEX, {"env_pg_dump": "pg_dump -Fc always"}, old_ids={"layer1_old"})
    assert [j.cluster.cluster_id for j in jobs] == ["layer1_working_failed", "layer1_kept_one", "layer1_third"]
    request = jobs[1].request
    assert request["protocol"] == LABEL_PROTOCOL and request_problems(request) == []
    assert request["memories"][0]["body"] == "pg_dump -Fc always"
    assert request["taken_ids"] == ["layer1_old", "layer1_third", "layer1_working_failed"]


def test_a_fresh_cluster_takes_the_engines_id_label_and_tags():
    index, notes = naming.apply_names(INDEX, {"layer1_working_failed": answer("pnpm_store", "pnpm store and lockfile",
                                                                              ["pnpm", "lockfile", "corepack"])})
    cluster = index.cluster("layer1_pnpm_store")
    assert (cluster.label, cluster.tags) == ("pnpm store and lockfile", ("pnpm", "lockfile", "corepack"))
    assert [m.slug for m in cluster.members] == ["env_pnpm_store", "env_pnpm_lock"]
    assert notes["layer1_working_failed"] == []
    assert naming.renamed(INDEX, index) == {"layer1_working_failed": "layer1_pnpm_store"}


def test_the_builders_everyday_tags_never_fill_up_the_engines():
    index, notes = naming.apply_names(INDEX, {"layer1_working_failed": answer("pnpm", "", ["pnpm", "store"])})
    assert index.cluster("layer1_pnpm").tags == ("pnpm",)     # store, working, failed: all everyday
    assert any("dropped 1 tag(s)" in n and "'store'" in n for n in notes["layer1_working_failed"])


def test_a_carried_over_id_and_its_label_are_kept_but_tags_change():
    index, notes = naming.apply_names(INDEX, {"layer1_kept_one": answer("postgres_box", "a new label",
                                                                        ["postgres", "pg_restore", "vacuum"])},
                                      keep_ids={"layer1_kept_one"})
    cluster = index.cluster("layer1_kept_one")
    assert cluster.label == "the Postgres box"
    assert cluster.tags == ("postgres", "vacuum", "dump")        # pg_restore is not one word; filled from the builder's
    assert any("id layer1_kept_one kept" in n for n in notes["layer1_kept_one"])


def test_the_labels_file_wins_and_its_tags_and_aliases_are_appended():
    labels = Labels("labels.yaml", (ClusterLabel("layer1_third", 3, label="Android devices", tags=("android",),
                                                 aliases=("emulator",)),))
    index, _notes = naming.apply_names(INDEX, {"layer1_third": answer("adb", "phones", ["adb", "serial", "usb"])},
                                       labels=labels)
    cluster = index.cluster("layer1_third")
    assert cluster.label == "Android devices"
    assert cluster.tags == ("adb", "serial", "usb", "android", "emulator")


EVERYDAY_TAGS = [("everyday word", "working"), ("generic programming word", "error"), ("type word", "feedback"),
                 ("stop word", "the")]


@pytest.mark.parametrize("why, word", EVERYDAY_TAGS, ids=[e[0] for e in EVERYDAY_TAGS])
def test_an_everyday_tag_is_dropped(why, word):
    assert naming.is_everyday(word)
    index, notes = naming.apply_names(INDEX, {"layer1_third": answer("adb", "", ["adb", word, "serial", "usb"])})
    assert index.cluster("layer1_adb").tags == ("adb", "serial", "usb")
    assert any("dropped 1 tag(s)" in n for n in notes["layer1_third"])


def test_a_specific_word_is_not_everyday():
    assert not naming.is_everyday("pnpm") and not naming.is_everyday("postgres")


def test_a_tag_stays_with_the_first_cluster_that_has_it():
    answers = {"layer1_working_failed": answer("pnpm", "", ["pnpm", "lockfile", "node"]),
               "layer1_third": answer("adb", "", ["adb", "node", "usb"])}
    index, _notes = naming.apply_names(INDEX, answers)
    assert index.cluster("layer1_pnpm").tags == ("pnpm", "lockfile", "node")
    assert "node" not in index.cluster("layer1_adb").tags


def test_an_id_that_another_cluster_has_is_refused():
    answers = {"layer1_working_failed": answer("third", "x", ["pnpm", "lockfile", "store"]),
               "layer1_third": answer("third", "y", ["adb", "serial", "usb"])}
    index, notes = naming.apply_names(INDEX, answers, old_ids={"layer1_gone"})
    assert "layer1_working_failed" in index.cluster_ids          # layer1_third is the build's own id
    assert index.cluster("layer1_third").label == "y"
    assert any("id 'third' refused" in n for n in notes["layer1_working_failed"])
    index, _notes = naming.apply_names(INDEX, {"layer1_third": answer("gone", "", ["adb"])}, old_ids={"layer1_gone"})
    assert "layer1_gone" not in index.cluster_ids                 # an old id never names other members


def test_a_cluster_without_an_answer_or_with_a_refused_one_keeps_the_builders_names():
    answers = {"layer1_third": ["not", "an", "answer"]}
    index, notes = naming.apply_names(INDEX, answers)
    assert {c.cluster_id: c for c in index.clusters} == {c.cluster_id: c for c in INDEX.clusters}
    assert notes["layer1_third"] == ["names refused: the answer is not {\"cluster\": {\"id\", \"label\", \"tags\"}}; "
                                     "the builder's are kept"]
