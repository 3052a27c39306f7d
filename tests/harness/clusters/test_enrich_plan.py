"""The enrich plan: which memories are asked about, which rows stay, leave, or are replaced."""

import pytest

from harness.clusters import enrich_plan as plan_mod
from router.store.clusterfile import Cluster, ClusterIndex, Member
from router.store.utterances import Utterance, memory_text_hash

STAMP = "2026-12-01T21:00:00Z"


def index_of(groups):
    clusters = []
    for cluster_id, slugs in groups:
        members = tuple(Member(s, "project", f"hook of {s}", 0) for s in slugs)
        clusters.append(Cluster(cluster_id, len(members), False, (cluster_id[-1] + "tag",), "", members, 0))
    return ClusterIndex(clusters)


INDEX = index_of([("layer1_a", ["a1", "a2"]), ("layer1_b", ["b1"]), ("layer1_c", ["c1", "c2", "c3"])])
BODIES = {"a1": "body of a1\n", "c2": "  body of c2  "}


def hash_of(slug, body=None):
    return memory_text_hash(f"hook of {slug}" + (f"\n{body}" if body else ""))


def row(slug, text="words", memory_hash=None, engine="command", model="-"):
    return Utterance(slug, text, memory_hash if memory_hash is not None else
                     hash_of(slug, (BODIES.get(slug) or "").strip() or None), engine, model, STAMP, 0)


def current_rows():
    return [row(m.slug) for c in INDEX.clusters for m in c.members]


def test_the_memory_text_is_the_hook_and_the_topic_file_body():
    texts = plan_mod.memory_texts(INDEX, BODIES)
    assert list(texts) == ["a1", "a2", "b1", "c1", "c2", "c3"]
    assert texts["a1"].body == "body of a1" and texts["a1"].hash == memory_text_hash("hook of a1\nbody of a1")
    assert texts["a2"].body == "" and texts["a2"].hash == memory_text_hash("hook of a2")


def test_a_first_run_asks_every_cluster_with_all_its_members():
    plan = plan_mod.plan_enrich(INDEX, BODIES, [])
    assert [(j.cluster.cluster_id, [m.slug for m in j.memories], j.neighbours) for j in plan.jobs] == [
        ("layer1_a", ["a1", "a2"], ()), ("layer1_b", ["b1"], ()), ("layer1_c", ["c1", "c2", "c3"], ())]
    assert set(plan.reasons.values()) == {"new"} and plan.dropped == []


def test_current_rows_ask_nothing():
    plan = plan_mod.plan_enrich(INDEX, BODIES, current_rows())
    assert plan.jobs == () and plan.reasons == {} and plan.rows == current_rows()


def test_an_edited_topic_file_asks_only_its_cluster_with_the_others_as_neighbours():
    plan = plan_mod.plan_enrich(INDEX, {**BODIES, "c2": "the body changed"}, current_rows())
    (job,) = plan.jobs
    assert job.cluster.cluster_id == "layer1_c"
    assert [m.slug for m in job.memories] == ["c2"] and [m.slug for m in job.neighbours] == ["c1", "c3"]
    assert plan.reasons == {"c2": "changed"}


def test_an_edited_hook_line_asks_again():
    edited = index_of([("layer1_a", ["a1", "a2"]), ("layer1_b", ["b1"]), ("layer1_c", ["c1", "c2", "c3"])])
    cluster = edited.clusters[1]
    member = cluster.members[0]._replace(hook="a new hook")
    edited = ClusterIndex([edited.clusters[0], cluster._replace(members=(member,)), edited.clusters[2]])
    plan = plan_mod.plan_enrich(edited, BODIES, current_rows())
    assert [j.cluster.cluster_id for j in plan.jobs] == ["layer1_b"] and plan.reasons == {"b1": "changed"}


def test_one_stale_row_among_current_ones_asks_again():
    rows = current_rows() + [row("a2", "older words", memory_hash="f" * 16)]
    assert plan_mod.plan_enrich(INDEX, BODIES, rows).reasons == {"a2": "changed"}


def test_hand_rows_never_count_as_enriched_and_are_always_kept():
    rows = [r for r in current_rows() if r.slug != "b1"] + [row("b1", "my own words", "-", "hand"),
                                                           row("gone_slug", "hand row of a gone memory", "-", "hand")]
    plan = plan_mod.plan_enrich(INDEX, BODIES, rows)
    assert plan.reasons == {"b1": "new"}
    assert [r.text for r in plan.rows if r.engine == "hand"] == ["my own words", "hand row of a gone memory"]
    assert plan.dropped == []


def test_rows_of_memories_that_left_the_store_are_dropped():
    rows = current_rows() + [row("gone_slug"), row("gone_slug", "more"), row("other_gone")]
    plan = plan_mod.plan_enrich(INDEX, BODIES, rows)
    assert plan.dropped == ["gone_slug", "other_gone"] and plan.jobs == ()
    assert {r.slug for r in plan.rows} == {"a1", "a2", "b1", "c1", "c2", "c3"}


def test_force_asks_every_memory():
    plan = plan_mod.plan_enrich(INDEX, BODIES, current_rows(), force=True)
    assert len(plan.jobs) == 3 and set(plan.reasons.values()) == {"forced"}


@pytest.mark.parametrize("engine, memory_hash, hand", [("hand", "0123456789abcdef", True), ("command", "-", True),
                                                        ("command", "0123456789abcdef", False)])
def test_is_hand_row(engine, memory_hash, hand):
    assert plan_mod.is_hand_row(row("a1", memory_hash=memory_hash, engine=engine)) is hand


def test_merge_rows_replaces_a_memorys_engine_rows_and_keeps_the_store_order():
    rows = [row("c1", "c1 old"), row("a1", "a1 old"), row("a1", "a1 mine", "-", "hand"),
            row("gone", "gone hand", "-", "hand"), row("b1", "b1 old")]
    texts = plan_mod.memory_texts(INDEX, BODIES)
    fresh = {"a1": plan_mod.new_rows(texts["a1"], ["a1 new", "a1 newer"], "claude", "haiku", STAMP)}
    merged = plan_mod.merge_rows(rows, fresh, list(texts))
    assert [(r.slug, r.text) for r in merged] == [("a1", "a1 new"), ("a1", "a1 newer"), ("a1", "a1 mine"),
                                                 ("b1", "b1 old"), ("c1", "c1 old"), ("gone", "gone hand")]
    assert merged[0].engine == "claude" and merged[0].model == "haiku" and merged[0].memory_hash == texts["a1"].hash
    assert plan_mod.merge_rows(merged, {}, list(texts)) == merged


def test_new_rows_write_a_dash_for_no_model():
    (made,) = plan_mod.new_rows(plan_mod.memory_texts(INDEX, {})["a1"], ["x"], "command", None, STAMP)
    assert made.model == "-"
