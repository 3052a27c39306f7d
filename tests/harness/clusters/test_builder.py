"""The pure cluster builder: clustering, tags, ids carried over, labels, reports."""

import random
from types import SimpleNamespace

import pytest
import yaml

from harness.clusters import builder, clustering
from harness.clusters import labels as labelsfile
from harness.memorydir import Memory, read_flat_index, read_memory_dir
from router.store.clusterfile import Cluster, ClusterIndex, Member, load_cluster_file, parse_cluster_text, render_markdown
from router.config import default_settings
from router.errors import InputError
from router.tokens import tokenize

# Four topics with overlapping but distinct vocabularies, plus one loner that shares no word.
SMALL_STORE = [
    ("env_docker_desktop_memory", "Docker Desktop WSL2 VM ate 12 GB of memory; set .wslconfig memory limit"),
    ("feedback_compose_profiles", "use docker compose profiles, not override files"),
    ("env_compose_healthcheck", "docker compose depends_on needs a healthcheck on the postgres service"),
    ("env_docker_build_cache", "docker build cache busts when COPY comes before the lockfile"),
    ("reference_docker_registry", "private docker registry lives at registry.lab with compose files"),
    ("env_postgres_hba", "postgres pg_hba allows the tailnet only; scram-sha-256 auth"),
    ("feedback_psql_begin", "start every manual psql session on postgres with BEGIN"),
    ("env_pg_dump_format", "pg_dump custom format for postgres backups; restore with pg_restore"),
    ("env_autovacuum_table", "postgres autovacuum scale factor lowered on the loads table"),
    ("project_postgres_restore_drill", "monthly postgres restore drill from pg_dump backups"),
    ("env_pnpm_store_drive", "pnpm store must sit on the same drive so pnpm hardlinks work"),
    ("feedback_no_npm", "never run npm install in tidepool; pnpm lockfile only"),
    ("env_corepack_pnpm", "corepack pins the pnpm version from packageManager"),
    ("env_pnpm_lockfile_v6", "a global pnpm rewrote the lockfile to v6"),
    ("user_timezone", "lives in Gdansk; deep work mornings; weekend messages wait for Monday"),
    ("user_terse_answers", "wants terse answers first, reasoning after; weekend calls never"),
    ("user_hardware", "desktop KESTREL with Windows; ThinkPad for travel; mornings at the desk"),
    ("reference_zebra_lore", "zebras quagga okapi"),
]


def small_memories():
    return [Memory(slug, slug.split("_")[0], hook) for slug, hook in SMALL_STORE]


def partition(index):
    return sorted(tuple(sorted(m.slug for m in c.members)) for c in index.clusters)


def example_memories(example_cluster_file):
    index = load_cluster_file(example_cluster_file)
    return [Memory(m.slug, m.type, m.hook) for m in index.members]


# --------------------------------------------------------------------------- clustering


def test_small_store_groups_topics_and_leaves_the_loner_alone():
    result = builder.build_clusters(small_memories(), target=4)
    groups = partition(result.index)
    owner = {slug: i for i, group in enumerate(groups) for slug in group}
    assert owner["env_postgres_hba"] == owner["env_pg_dump_format"] == owner["feedback_psql_begin"]
    assert owner["env_pnpm_store_drive"] == owner["env_corepack_pnpm"] == owner["feedback_no_npm"]
    assert owner["feedback_compose_profiles"] == owner["env_compose_healthcheck"]
    # It shares no term with anything, so it is never merged, even though that overshoots the target.
    assert ("reference_zebra_lore",) in groups
    assert len(groups) >= 4


def test_target_count_is_reached_when_members_share_words(example_cluster_file):
    memories = example_memories(example_cluster_file)
    for target in (20, 25, 40):
        assert len(builder.build_clusters(memories, target=target).index) == target


@pytest.mark.parametrize("max_size", [3, 5, 8])
def test_size_ceiling_splits_and_flags_retier(example_cluster_file, max_size):
    memories = example_memories(example_cluster_file)
    index = builder.build_clusters(memories, target=1, max_size=max_size).index
    sizes = [c.size for c in index.clusters]
    assert max(sizes) == max_size
    assert len(index) >= -(-len(memories) // max_size)
    assert all(c.retier == (c.size >= max_size) for c in index.clusters)


def test_same_output_under_input_shuffling(example_cluster_file):
    memories = example_memories(example_cluster_file)
    expected = render_markdown(builder.build_clusters(memories).index)
    for seed in range(3):
        shuffled = list(memories)
        random.Random(seed).shuffle(shuffled)
        assert render_markdown(builder.build_clusters(shuffled).index) == expected


def test_duplicate_slugs_keep_the_first_memory():
    memories = small_memories() + [Memory("user_timezone", "user", "a second line for the same slug")]
    index = builder.build_clusters(memories).index
    assert index.find_member("user_timezone")[1].hook.startswith("lives in Gdansk")


@pytest.mark.parametrize("kwargs, message", [
    ({"target": 0}, "at least 1"),
    ({"max_size": 0}, "size ceiling"),
])
def test_bad_options_are_input_errors(kwargs, message):
    with pytest.raises(InputError) as err:
        builder.build_clusters(small_memories(), **kwargs)
    assert message in str(err.value) and err.value.exit_code == 2


def test_no_memories_is_an_input_error():
    with pytest.raises(InputError):
        builder.build_clusters([])


# --------------------------------------------------------------------------- tags


def test_tags_are_distinct_specific_words_the_members_use(example_cluster_file):
    index = builder.build_clusters(example_memories(example_cluster_file)).index
    seen = {}
    for cluster in index.clusters:
        words = set()
        for member in cluster.members:
            words |= tokenize(clustering.slug_topic_words(member.slug)) | tokenize(member.hook)
        assert 1 <= len(cluster.tags) <= clustering.MAX_TAGS
        for tag in cluster.tags:
            (token,) = tokenize(tag)
            assert token in words, (cluster.cluster_id, tag)
            assert token not in clustering.GENERIC_WORDS and "_" not in token
            assert token not in seen, f"{tag} tags both {seen.get(token)} and {cluster.cluster_id}"
            seen[token] = cluster.cluster_id
    assert sum(len(c.tags) >= clustering.MIN_TAGS for c in index.clusters) >= len(index) - 2


def test_tags_are_spelled_as_members_write_them():
    memories = [Memory("env_postgres_a", "env", "postgres listens on the tailnet"),
                Memory("env_postgres_b", "env", "postgres backups run nightly"),
                Memory("user_zebra", "user", "zebras and okapis")]
    index = builder.build_clusters(memories, target=2).index
    cluster = index.find_member("env_postgres_a")[0]
    assert "postgres" in cluster.tags and "postgre" not in cluster.tags


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("old, new, expected", [
    ({"x": {"a", "b", "c"}}, [{"a", "b", "c", "d"}], {0: "x"}),
    ({"x": {"a", "b", "c", "d"}}, [{"a"}, {"b", "c", "d"}], {1: "x"}),
    ({"x": {"a", "b"}}, [{"a"}, {"b"}], {0: "x"}),           # Jaccard 0.5 each: the first position wins
    ({"x": {"a", "b", "c"}}, [{"a", "d", "e"}], {}),         # below 0.5: a new id
    ({"x": {"a", "b"}, "y": {"a", "b", "c"}}, [{"a", "b"}], {0: "x"}),  # best overlap wins
])
def test_match_ids(old, new, expected):
    assert builder.match_ids(old, new) == expected


def test_match_ids_skips_reserved_ids():
    assert builder.match_ids({"x": {"a"}}, [{"a"}], reserved={"x"}) == {}


def test_fresh_id_never_collides():
    taken = {"layer1_pnpm_lockfile", "layer1_pnpm_lockfile_2"}
    assert builder.fresh_id(("pnpm", "lockfile", "store"), taken) == "layer1_pnpm_lockfile_3"
    assert builder.fresh_id((), set(), fallback="env_x") == "layer1_env_x"
    assert builder.fresh_id(("github actions", "ci"), set()) == "layer1_github_actions_ci"


def test_rebuild_after_adding_three_memories_keeps_every_carried_id(example_cluster_file):
    memories = sorted(example_memories(example_cluster_file), key=lambda m: m.slug)
    added = [memories[5], memories[60], memories[100]]
    first = builder.build_clusters([m for m in memories if m not in added]).index
    second = builder.build_clusters(memories, previous=first)
    new_sets = {c.cluster_id: {m.slug for m in c.members} for c in second.index.clusters}
    old_sets = {c.cluster_id: {m.slug for m in c.members} for c in first.clusters}
    for old_id, old_set in old_sets.items():
        best_id, best = max(((cid, builder.jaccard(old_set, s)) for cid, s in new_sets.items()),
                            key=lambda pair: pair[1])
        if best < builder.MATCH_JACCARD:
            continue  # its membership did not carry over
        if old_id in new_sets:
            assert builder.jaccard(old_set, new_sets[old_id]) >= builder.MATCH_JACCARD
        else:
            # Only a merge may take it: the cluster it became keeps another old id that overlaps
            # at least as well.
            assert best_id in old_sets, f"{old_id} carried over into {best_id} but lost its id"
            assert builder.jaccard(old_sets[best_id], new_sets[best_id]) >= best
    assert len(set(first.cluster_ids) & set(second.index.cluster_ids)) >= len(first) * 0.7
    assert second.carried and all(v >= builder.MATCH_JACCARD for v in second.carried.values())


def test_keep_clusters_only_places_new_memories(example_cluster_file):
    memories = sorted(example_memories(example_cluster_file), key=lambda m: m.slug)
    added = [memories[5], memories[60], memories[100]]
    first = builder.build_clusters([m for m in memories if m not in added]).index
    second = builder.build_clusters(memories, previous=first, keep_clusters=True).index
    changes = builder.compare_builds(first, second)
    assert changes["moved"] == [] and changes["removed"] == []
    assert sorted(changes["added"]) == sorted(m.slug for m in added)
    again = builder.build_clusters(memories, previous=second, keep_clusters=True).index
    assert render_markdown(again) == render_markdown(second)


def test_fresh_ids_avoid_old_ids_that_are_gone():
    # The old file used the id a fresh cluster would get for a different set of members.
    previous = parse_cluster_text(
        "## Layer 0 - Cluster Router\n- layer1_pnpm_lockfile · 1 · tags: x\n"
        "## Layer 1 - Member Lines\n### layer1_pnpm_lockfile\n- unrelated_slug - project; something\n")
    index = builder.build_clusters(small_memories(), target=4, previous=previous).index
    assert "layer1_pnpm_lockfile" not in index.cluster_ids
    assert any(cid.startswith("layer1_pnpm") for cid in index.cluster_ids)


def test_previous_labels_survive_for_carried_ids():
    first = builder.build_clusters(small_memories(), target=4).index
    cluster = first.find_member("env_pnpm_store_drive")[0]
    relabelled = ClusterIndex([c._replace(label="Node tooling") if c is cluster else c for c in first.clusters])
    second = builder.build_clusters(small_memories(), target=4, previous=relabelled).index
    assert second.cluster(cluster.cluster_id).label == "Node tooling"


# --------------------------------------------------------------------------- labels


LABELS = """\
clusters:
  layer1_people:
    label: who the user is
    pin: [user_timezone, reference_zebra_lore]
    aliases: [profile]
  layer1_databases:
    pin:
      - env_postgres_hba
    tags: [database, sql]
"""


def test_labels_pins_tags_aliases_and_label_hold():
    labels = labelsfile.parse_labels_text(LABELS, "labels.yaml")
    result = builder.build_clusters(small_memories(), target=4, labels=labels)
    index = result.index
    people = index.cluster("layer1_people")
    assert {"user_timezone", "reference_zebra_lore"} <= {m.slug for m in people.members}
    assert people.label == "who the user is" and "profile" in people.tags
    databases = index.cluster("layer1_databases")
    assert "env_postgres_hba" in {m.slug for m in databases.members}
    assert {"database", "sql"} <= set(databases.tags)
    assert not result.warnings


def test_pins_hold_against_a_previous_file_and_keep_clusters():
    labels = labelsfile.parse_labels_text(
        "clusters:\n  layer1_mixed:\n    pin: [user_hardware, env_pnpm_store_drive]\n")
    first = builder.build_clusters(small_memories(), target=4, labels=labels).index
    for keep in (False, True):
        second = builder.build_clusters(small_memories(), target=4, labels=labels, previous=first,
                                        keep_clusters=keep).index
        mixed = {m.slug for m in second.cluster("layer1_mixed").members}
        assert {"user_hardware", "env_pnpm_store_drive"} <= mixed


def test_labels_for_a_cluster_not_built_are_a_warning():
    labels = labelsfile.parse_labels_text("clusters:\n  layer1_gone:\n    label: old\n", "labels.yaml")
    result = builder.build_clusters(small_memories(), labels=labels)
    assert result.warnings == ("labels.yaml:2: cluster layer1_gone is not in this build; "
                               "its label, tags and aliases were not used",)


def test_oversized_pin_group_is_kept_whole_and_flagged():
    slugs = [slug for slug, _hook in SMALL_STORE[:5]]
    labels = labelsfile.parse_labels_text("clusters:\n  layer1_big:\n    pin: [" + ", ".join(slugs) + "]\n")
    result = builder.build_clusters(small_memories(), max_size=3, labels=labels)
    big = result.index.cluster("layer1_big")
    assert big.size == 5 and big.retier
    assert "above the size ceiling" in result.warnings[0]


@pytest.mark.parametrize("text, line, message", [
    ("clusters:\n  layer1_a:\n    pin: [no_such_memory]\n", 3, "'no_such_memory' of layer1_a is not a memory"),
    ("clusters:\n  layer1_a:\n    pin: [user_timezone]\n  layer1_b:\n    pin:\n      - user_timezone\n", 6,
     "pinned to layer1_a on line 3"),
])
def test_pins_are_checked_against_the_store(text, line, message):
    labels = labelsfile.parse_labels_text(text, "labels.yaml")
    with pytest.raises(InputError) as err:
        builder.build_clusters(small_memories(), labels=labels)
    assert err.value.line == line and message in str(err.value)


# --------------------------------------------------------------------------- reports


def _index(spec):
    return ClusterIndex([
        Cluster(cid, len(slugs), False, tags, "", tuple(Member(s, "project", hook, 0) for s, hook in slugs), 0)
        for cid, tags, slugs in spec
    ])


def test_compare_builds_reports_splits_merges_moves():
    old = _index([
        ("a", ("x",), [("m1", "h"), ("m2", "h"), ("m3", "h"), ("m4", "h")]),
        ("b", ("x",), [("m5", "h"), ("m6", "h")]),
        ("c", ("x",), [("m7", "h"), ("m8", "h")]),
        ("d", ("x",), [("gone", "h")]),
    ])
    new = _index([
        ("a", ("x",), [("m1", "h"), ("m2", "h")]),
        ("e", ("x",), [("m3", "h"), ("m4", "h")]),
        ("f", ("x",), [("m5", "h"), ("m6", "h"), ("m7", "h"), ("m8", "h"), ("fresh", "h")]),
    ])
    changes = builder.compare_builds(old, new)
    assert changes["split"] == [{"cluster_id": "a", "into": ["a", "e"]}]
    assert changes["merged"] == [{"cluster_id": "f", "from": ["b", "c"]}]
    assert changes["new"] == ["e", "f"] and changes["removed"] == ["b", "c", "d"] and changes["kept"] == ["a"]
    assert [m["slug"] for m in changes["moved"]] == ["m3", "m4", "m5", "m6", "m7", "m8"]
    assert changes["added"] == ["fresh"] and changes["dropped"] == ["gone"]


def test_compare_builds_without_previous_lists_everything_as_new():
    new = _index([("a", ("x",), [("m1", "h")])])
    changes = builder.compare_builds(None, new)
    assert changes["previous"] is False and changes["new"] == ["a"] and changes["added"] == ["m1"]


@pytest.mark.usefixtures("spec_provider")  # written in spec §10 scores
def test_self_routing_reports_members_that_land_elsewhere_or_nowhere():
    index = _index([
        ("home", ("pnpm",), [("pnpm_store", "pnpm store on the same drive"), ("lonely", "zebra"),
                             ("stray", "docker compose healthcheck")]),
        ("docker", ("docker", "compose", "healthcheck"), [("compose_profiles", "compose profiles")]),
    ])
    report = builder.self_routing(index, default_settings())
    statuses = {m["slug"]: m["status"] for m in report["misses"]}
    assert statuses == {"lonely": "nowhere", "stray": "elsewhere"}
    assert report["counts"]["own"] == 2 and report["share"] == 0.5
    stray = next(m for m in report["misses"] if m["slug"] == "stray")
    assert stray["routed"] == ["docker"] and stray["top_score"] > stray["own_score"]


@pytest.mark.usefixtures("spec_provider")  # written in spec §10 scores
def test_self_routing_counts_a_clear_second_as_reached():
    index = _index([
        ("first", ("alpha", "beta"), [("a1", "alpha beta words")]),
        ("second", ("gamma",), [("s1", "alpha beta gamma")]),
    ])
    report = builder.self_routing(index, default_settings())
    assert report["counts"]["second"] + report["counts"]["own"] == 2 and report["share"] == 1.0


def test_example_store_self_routes_at_least_ninety_percent(example_flat_index):
    index = builder.build_clusters(read_flat_index(str(example_flat_index))).index
    assert builder.self_routing(index, default_settings())["share"] >= 0.9


# --------------------------------------------------------------------------- sources agree


def _write_memory_dir(directory, memories, shape):
    directory.mkdir()
    lines = ["# Memory Index", ""]
    for m in memories:
        lines.append(f"- [{m.slug.replace('_', ' ')}]({m.slug}.md) \u2014 {m.hook}")
        if shape == "old":
            data = {"name": m.slug.replace("_", " "), "description": m.hook, "type": m.type}
        else:
            data = {"name": m.slug.replace("_", "-"), "description": m.hook, "metadata": {"type": m.type}}
        front = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=10_000)
        (directory / f"{m.slug}.md").write_text(f"---\n{front}---\nbody\n", encoding="utf-8")
    (directory / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def test_every_source_shape_gives_the_same_clusters(tmp_path, example_cluster_file, example_flat_index):
    memories = example_memories(example_cluster_file)
    built = {"flat": builder.build_clusters(read_flat_index(str(example_flat_index))).index}
    for shape in ("old", "new"):
        memory_dir = _write_memory_dir(tmp_path / shape, memories, shape)
        built[shape] = builder.build_clusters(read_memory_dir(str(memory_dir))).index
    # Without their index, the files alone give the same memories through their descriptions.
    bare = tmp_path / "bare"
    _write_memory_dir(bare, memories, "new")
    (bare / "MEMORY.md").unlink()
    built["files"] = builder.build_clusters(read_memory_dir(str(bare))).index
    texts = {name: render_markdown(index) for name, index in built.items()}
    assert len(set(texts.values())) == 1, [name for name in texts if texts[name] != texts["flat"]]


def test_type_is_not_used_for_clustering():
    typed = small_memories()
    untyped = [SimpleNamespace(slug=m.slug, type="project", hook=m.hook) for m in typed]
    assert partition(builder.build_clusters(typed).index) == partition(builder.build_clusters(untyped).index)


@pytest.mark.usefixtures("spec_provider")  # written in spec §10 scores
def test_self_routing_reports_a_line_cut_by_the_cap():
    index = _index([("twins", ("alpha",), [("a_first", "alpha beta gamma"), ("b_second", "alpha beta gamma")])])
    settings = dict(default_settings(), line_cap=1)
    report = builder.self_routing(index, settings)
    assert report["counts"]["capped"] == 1 and report["misses"][0]["slug"] == "b_second"
    assert report["misses"][0]["status"] == "capped"


@pytest.mark.parametrize("written", ["feedback-no-npm", "feedback-no-npm.md", "Feedback_No_Npm", "feedback_no_npm"])
def test_pins_name_a_memory_by_its_file_name_as_the_fix_says(written):
    # Claude Code names memory files in kebab-case (prefers-bun.md) and the slug is that name
    # normalised; a pin written as the file name must hold, as the unknown-pin fix tells users.
    labels = labelsfile.parse_labels_text(f"clusters:\n  layer1_mine:\n    pin: [{written}, user_hardware]\n",
                                       "labels.yaml")
    result = builder.build_clusters(small_memories(), target=4, labels=labels)
    assert {"feedback_no_npm", "user_hardware"} <= {m.slug for m in result.index.cluster("layer1_mine").members}
