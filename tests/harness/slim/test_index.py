"""Pure parts of the slim render: router lines, hot strip, assembly, sizes, archive names."""

import re

import pytest

from canaries import memoryindex
from harness.slim import index as slim
from router.store.clusterfile import load_cluster_file, parse_cluster_text
from router.config import bundled_example_dir
from router.configfile import parse_config_file
from router.errors import MemoryRouterError, RefusedError

SMALL = """# Memory clusters

## Layer 0 - Cluster Router

- alpha · 2 · tags: one, two, three · label: first cluster
- beta · 1 · [RETIER] · tags: solo
- gamma · 1 · tags: x · label: third · with a dot

## Layer 1 - Member Lines

### alpha
- a_one - env; first hook: with a colon
- a_two - feedback; second hook

### beta
- b_one - project; only member of beta

### gamma
- g_one - reference; gamma's member
"""


@pytest.fixture
def small_index():
    return parse_cluster_text(SMALL, "small.md")


def test_router_line_per_cluster_with_two_tags_at_most(small_index):
    assert slim.render_layer0_router(small_index) == [
        "- alpha (2) \u2014 one, two \u2014 first cluster",
        "- beta (1) \u2014 solo",
        "- gamma (1) \u2014 x \u2014 third \u00b7 with a dot",
    ]


def test_router_tag_cap_is_a_parameter(small_index):
    assert slim.render_layer0_router(small_index, tag_cap=3)[0] == \
        "- alpha (2) \u2014 one, two, three \u2014 first cluster"


def test_hot_strip_full_lines_in_given_order_without_duplicates(small_index):
    assert slim.build_hot_strip(small_index, ["b_one", "a_one", "b_one"]) == [
        "- b_one \u2014 only member of beta",
        "- a_one \u2014 first hook: with a colon",
    ]


def test_unknown_hot_slug_names_every_unknown_slug_and_its_source(small_index):
    with pytest.raises(slim.UnknownHotSlugError) as caught:
        slim.build_hot_strip(small_index, ["a_one", "nope", "also_nope"], {"nope": "hot_strip in x.toml"})
    err = caught.value
    assert isinstance(err, MemoryRouterError) and isinstance(err, RefusedError)
    assert err.exit_code == 1
    assert "nope (from hot_strip in x.toml)" in str(err)
    assert "also_nope" in str(err)
    assert "small.md" in str(err)


def test_assemble_order_of_sections(small_index):
    text = slim.assemble_slim_index(["- a_one \u2014 h"], slim.render_layer0_router(small_index))
    lines = text.splitlines()
    assert lines[0] == "# Memory Index"
    assert lines[2].startswith("_Format:_ ")
    hot_at = lines.index(memoryindex.HOT_HEADING)
    router_at = lines.index(memoryindex.ROUTER_HEADING)
    assert hot_at < lines.index("- a_one \u2014 h") < router_at
    # The agent is told, right under the router heading, that the hook brings the member lines.
    assert "hook injects" in lines[router_at + 2]
    assert lines[-1] == "- gamma (1) \u2014 x \u2014 third \u00b7 with a dot"
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_assemble_with_empty_hot_strip_says_so():
    text = slim.assemble_slim_index([], ["- a (1) \u2014 t"])
    assert "_(no hot-strip slugs configured)_" in text
    assert memoryindex.parse_slim_index(text) == ([], ["a"])


def test_parse_slim_index_reads_back_what_was_assembled(small_index):
    strip = slim.build_hot_strip(small_index, ["g_one", "a_two"])
    text = slim.assemble_slim_index(strip, slim.render_layer0_router(small_index))
    assert memoryindex.parse_slim_index(text) == (["g_one", "a_two"], ["alpha", "beta", "gamma"])
    assert memoryindex.is_slim_index(text)
    assert not memoryindex.is_slim_index("# Memory Index\n\n- a_one \u2014 hook\n")


def test_merge_hot_slugs_config_order_first_then_front_matter():
    slugs, origin = slim.merge_hot_slugs(("config", ["b", "a"]), ("front matter", ["c", "a", "b", "d"]))
    assert slugs == ["b", "a", "c", "d"]
    assert origin == {"b": "config", "a": "config", "c": "front matter", "d": "front matter"}


@pytest.mark.parametrize("size, lines, expected", [
    (5500, 40, []),
    (5501, 40, ["5500-byte target"]),
    (4000, 201, ["200 lines"]),
    (25_001, 150, ["5500-byte target", "200 lines"]),
    (4000, 200, []),
])
def test_size_warnings(size, lines, expected):
    warnings = slim.size_warnings(size, lines)
    assert len(warnings) == len(expected)
    for warning, fragment in zip(warnings, expected):
        assert fragment in warning


def test_size_summary_counts_and_cut():
    before = "a" * 1000 + "\n" + "b\n" * 9
    after = "c" * 250
    summary = slim.size_summary(before.encode(), after)
    assert summary["bytes_before"] == 1019 and summary["bytes_after"] == 250
    assert summary["lines_before"] == 10 and summary["lines_after"] == 1
    assert summary["cut_percent"] == round(100 * (1019 - 250) / 1019, 1)
    assert summary["warnings"] == []
    assert slim.size_summary("", "x")["cut_percent"] == 0.0
    assert slim.size_summary("x", "xx")["cut_percent"] == -100.0


def test_unrouted_slugs_are_those_in_neither_strip_nor_cluster(small_index):
    assert slim.unrouted_slugs(["a_one", "lost", "b_one", "hot_only", "lost"], small_index, ["hot_only"]) == ["lost"]


@pytest.mark.parametrize("name, key", [
    ("MEMORY.archive-2026-07-22T05-25-01-376Z.md", ("2026-07-22T05-25-01-376Z", 1)),
    ("MEMORY.archive-2026-07-22T05-25-01-376Z-3.md", ("2026-07-22T05-25-01-376Z", 3)),
    ("MEMORY.pre-rollback-2026-07-22T05-25-01-376Z.md", None),
    ("MEMORY.archive-2026-07-22.md", None),
    ("MEMORY.md", None),
    ("MEMORY.archive-2026-07-22T05-25-01-376Z.md.tmp", None),
])
def test_archive_sort_key(name, key):
    assert slim.archive_sort_key(name) == key


def test_newest_archive_by_stamp_then_counter_ignoring_other_files():
    names = [
        "MEMORY.archive-2026-07-22T05-25-01-376Z.md",
        "MEMORY.archive-2026-07-23T00-00-00-000Z.md",
        "MEMORY.archive-2026-07-23T00-00-00-000Z-2.md",
        "MEMORY.archive-2026-07-21T23-59-59-999Z-9.md",
        "MEMORY.pre-rollback-2027-01-01T00-00-00-000Z.md",
        "MEMORY.md",
        "notes.md",
    ]
    assert slim.newest_archive(names) == "MEMORY.archive-2026-07-23T00-00-00-000Z-2.md"
    assert slim.newest_archive(["MEMORY.md", "MEMORY.pre-rollback-2027-01-01T00-00-00-000Z.md"]) is None


def test_example_store_slim_is_under_target_with_every_cluster_and_hot_slug():
    import os

    example = bundled_example_dir()
    index = load_cluster_file(os.path.join(example, "memory-layer1-clusters.md"))
    hot = parse_config_file(os.path.join(example, "memory-router.toml"))["hot_strip"]
    assert hot, "the example config must name a hot strip"
    text = slim.assemble_slim_index(slim.build_hot_strip(index, hot), slim.render_layer0_router(index))
    assert len(text.encode("utf-8")) <= slim.SLIM_TARGET_BYTES
    found_hot = re.findall(r"^- ([a-z0-9_]+) \u2014 ", text, re.M)
    found_clusters = re.findall(r"^- (\S+) \(\d+\)", text, re.M)
    assert found_clusters == list(index.cluster_ids)
    assert found_hot == hot
    for slug in hot:
        assert f"- {slug} \u2014 {index.find_member(slug)[1].hook}\n" in text


# --------------------------------------------------------------------------- the always-loaded view

def test_loaded_view_of_a_flat_index_counts_memory_lines_by_type():
    flat = ("# Memory Index\n\n- [Setx](env_setx.md) \u2014 setx vars never reach Bash\n"
            "- [Ledger](feedback_ledger.md) \u2014 query the ledger\n- [Plain](notes.md) \u2014 no prefix\n")
    view = slim.loaded_view(flat)
    assert view == {"memory_lines": 3, "by_type": {"env": 1, "feedback": 1, "project": 1}, "cluster_lines": 0,
                    "lines": 5, "bytes": len(flat.encode()), "truncated": False}
    # a type from the memory file's front matter wins over the slug's prefix
    assert slim.loaded_view(flat, {"notes": "user"}.get)["by_type"] == {"env": 1, "feedback": 1, "user": 1}


def test_loaded_view_of_a_slim_index_counts_the_hot_strip_and_the_router(small_index):
    text = slim.assemble_slim_index(slim.build_hot_strip(small_index, ["a_two"]), slim.render_layer0_router(small_index))
    view = slim.loaded_view(text)
    assert (view["memory_lines"], view["by_type"], view["cluster_lines"]) == (1, {"project": 1}, 3)  # no prefix
    assert slim.loaded_view(text, lambda slug: small_index.find_member(slug)[1].type)["by_type"] == {"feedback": 1}


def test_loaded_view_counts_only_what_claude_code_loads():
    lines = [f"- [M{i}](project_m{i}.md) \u2014 memory {i}" for i in range(250)]
    view = slim.loaded_view("\n".join(lines) + "\n")
    assert view["truncated"] is True and view["memory_lines"] == memoryindex.CLAUDE_CODE_LINE_LIMIT
    assert view["lines"] == 250


def test_the_empty_hot_strip_warning_names_the_count_and_every_fix():
    warning = slim.empty_hot_strip_warning(126)
    assert "none of the 126 memories stays always loaded" in warning
    assert all(fix in warning for fix in ("hot_strip", "hot: true", "--hot SLUG"))


def test_archive_sort_key_takes_the_whole_name():
    """issue 30 item 2: `$` matched before a final newline; the name picks what rollback restores."""
    assert slim.archive_sort_key("MEMORY.archive-2026-07-22T05-25-01-376Z.md\n") is None
    assert slim.newest_archive(["MEMORY.archive-2026-07-22T05-25-01-376Z.md",
                                "MEMORY.archive-2099-07-22T05-25-01-376Z.md\n"]) == "MEMORY.archive-2026-07-22T05-25-01-376Z.md"
