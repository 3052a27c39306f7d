import pytest

from router.store.clusterfile import (
    ClusterIndex,
    load_cluster_file,
    parse_cluster_text,
    render_markdown,
    render_tsv,
    scan_cluster_text,
)
from router.errors import ClusterFileError

GOOD_MD = """\
# Memory clusters

Some prose the parser ignores.

## Layer 0 - Cluster Router

- layer1_project_memory_router · 2 · tags: behaviour, caching, hot, hybrid, lost · label: memory router saga
- layer1_04 · 1 · [RETIER] · tags: decisions, ledger, env var · label: how to read the ledger · with a dot

## Layer 1 - Member Lines

### layer1_project_memory_router
- env_bash_tool_env_var_caching - env; setx vars never reach the Bash tool: even a full OS reboot didn't fix it
- env_cloudflare_workers_build_secret_vs_text - env; PUBLIC_ build vars set as Secret are undefined: set type Text

### layer1_04
- feedback_never_read_decisions_raw - feedback; never read DECISIONS.md top to bottom
"""


def test_parse_markdown_fields():
    index = parse_cluster_text(GOOD_MD, "c.md")
    assert index.cluster_ids == ("layer1_project_memory_router", "layer1_04")
    first = index.cluster("layer1_project_memory_router")
    assert first.tags == ("behaviour", "caching", "hot", "hybrid", "lost")
    assert first.label == "memory router saga"
    assert not first.retier
    second = index.cluster("layer1_04")
    assert second.retier
    assert second.tags == ("decisions", "ledger", "env var")
    assert second.label == "how to read the ledger · with a dot"
    cluster, member = index.find_member("env_bash_tool_env_var_caching")
    assert cluster.cluster_id == "layer1_project_memory_router"
    assert member.type == "env"
    assert member.hook.startswith("setx vars never reach")
    assert member.line == 13


def test_markdown_and_tsv_round_trip_to_the_same_index():
    index = parse_cluster_text(GOOD_MD, "c.md")
    tsv = render_tsv(index)
    from_tsv = parse_cluster_text(tsv, "c.tsv")
    assert from_tsv == index
    assert parse_cluster_text(render_markdown(from_tsv), "again.md") == index
    # rendering is stable: a second render writes identical bytes
    assert render_markdown(parse_cluster_text(render_markdown(index), "x.md")) == render_markdown(index)


def test_dashes_in_headings_and_member_lines_are_accepted():
    text = GOOD_MD.replace("## Layer 0 - Cluster Router", "## Layer 0 — Cluster Router").replace(
        "- feedback_never_read_decisions_raw - feedback;", "- feedback_never_read_decisions_raw – feedback;")
    assert len(parse_cluster_text(text, "c.md").members) == 3


def _summary(index):
    return [(c.cluster_id, c.size, c.retier, c.tags, c.label, [(m.slug, m.type, m.hook) for m in c.members])
            for c in index.clusters]


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda t: t.replace("## Layer 0 - ", "## Layer 0 \u2013 ").replace("## Layer 1 - ", "## Layer 1 \u2013 "),
                     id="en dash headings"),
        pytest.param(lambda t: t.replace("## Layer 0 - ", "## Layer 0 \u2014 ").replace("## Layer 1 - ", "## Layer 1 \u2014 "),
                     id="em dash headings"),
        pytest.param(lambda t: t.replace(" - env;", " \u2014 env;").replace(" - feedback;", " \u2013 feedback;"),
                     id="dashes in member lines"),
        pytest.param(lambda t: t.replace("\n", "\r\n"), id="CRLF"),
        pytest.param(lambda t: "\ufeff" + t, id="BOM"),
        pytest.param(lambda t: t.replace("\n", "  \n"), id="trailing spaces"),
        pytest.param(lambda t: t.replace("\n", " \t\n"), id="trailing tabs"),
        pytest.param(lambda t: t.replace("- env_bash_tool_env_var_caching - env;", "-\tenv_bash_tool_env_var_caching\t-\tenv;"),
                     id="tabs in a member line"),
        pytest.param(lambda t: t.replace("layer1_04 · 1 · [RETIER] · tags:", "layer1_04\t·\t1  ·\t[RETIER] \t· tags:"),
                     id="tabs around the Layer 0 separator"),
    ],
)
def test_format_variants_parse_to_the_same_index(mutate):
    expected = _summary(parse_cluster_text(GOOD_MD, "c.md"))
    index, violations = scan_cluster_text(mutate(GOOD_MD), "c.md")
    assert violations == []
    assert _summary(index) == expected
    # the label keeps its own ' · ' in every variant
    assert index.cluster("layer1_04").label == "how to read the ledger · with a dot"


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_bom_and_crlf_files_load_from_disk_in_both_forms(tmp_path, newline):
    expected = _summary(parse_cluster_text(GOOD_MD, "c.md"))
    md = tmp_path / "c.md"
    md.write_bytes(b"\xef\xbb\xbf" + GOOD_MD.replace("\n", newline).encode("utf-8"))
    assert _summary(load_cluster_file(md)) == expected
    tsv = tmp_path / "c.tsv"
    tsv.write_bytes(b"\xef\xbb\xbf" + render_tsv(parse_cluster_text(GOOD_MD, "c.md")).replace("\n", newline).encode("utf-8"))
    assert _summary(load_cluster_file(tsv)) == expected


def _violation_lines(text, name="c.md"):
    _index, violations = scan_cluster_text(text, name)
    return [(v.line, v.message) for v in violations]


@pytest.mark.parametrize(
    "mutate, line, needle",
    [
        (lambda t: t.replace("layer1_04 · 1 ·", "layer1_04 · 2 ·"), 8, "declares size 2 but has 1"),
        (lambda t: t.replace("layer1_04 · 1 ·", "layer1_04 · one ·"), 8, "size"),
        (lambda t: t.replace(" · tags: decisions, ledger, env var", ""), 8, "no 'tags:' field"),
        (lambda t: t.replace("### layer1_04\n", "### layer1_05\n"), 8, "no Layer 1 heading"),
        (lambda t: t.replace("### layer1_04\n", "### layer1_05\n"), 16, "not listed in Layer 0"),
        (lambda t: t.replace("- feedback_never_read_decisions_raw - feedback;", "- feedback_never_read_decisions_raw feedback"), 17, "malformed member line"),
        (lambda t: t.replace("- feedback_never_read_decisions_raw -", "- Feedback-Never -"), 17, "invalid slug"),
        (lambda t: t.replace("- feedback_never_read_decisions_raw - feedback;", "- env_bash_tool_env_var_caching - feedback;"), 17, "already in cluster"),
        (lambda t: t.replace("## Layer 1 - Member Lines", "## Members"), 1, "no '## Layer 1 - Member Lines' section"),
        (lambda t: t.replace("## Layer 0 - Cluster Router", "## Router"), 1, "no '## Layer 0 - Cluster Router' section"),
        (lambda t: t.replace(" · label: memory router saga", " · colour: blue"), 7, "unexpected field"),
        (lambda t: t + "\n### layer1_04\n- extra_one - env; x\n", 19, "second Layer 1 heading"),
        (lambda t: t.replace("## Layer 1 - Member Lines\n\n### layer1_project_memory_router\n",
                             "## Layer 1 - Member Lines\n\n- stray_line - env; before heading\n### layer1_project_memory_router\n"), 12, "before any"),
    ],
)
def test_check_finds_each_violation_with_its_line(mutate, line, needle):
    found = _violation_lines(mutate(GOOD_MD))
    assert any(ln == line and needle in msg for ln, msg in found), found


def test_good_file_has_no_violations():
    assert _violation_lines(GOOD_MD) == []


@pytest.mark.parametrize(
    "row, line, needle",
    [
        ("layer1_04\t1\t0\tdecisions\tlabel\tslug_a\tenv", 2, "expected 8 tab-separated fields"),
        ("layer1_04\tx\t0\tdecisions\tlabel\tslug_a\tenv\thook", 2, "not an integer"),
        ("layer1_04\t1\t2\tdecisions\tlabel\tslug_a\tenv\thook", 2, "retier must be 1 or 0"),
        ("layer1_04\t1\t0\tdecisions\tlabel\tSlug A\tenv\thook", 2, "invalid slug"),
        ("layer1_04\t2\t0\tdecisions\tlabel\tslug_a\tenv\thook", 2, "declares size 2 but has 1"),
    ],
)
def test_tsv_violations(row, line, needle):
    text = "cluster_id\tsize\tretier\ttags\tlabel\tslug\ttype\thook\n" + row + "\n"
    found = _violation_lines(text, "c.tsv")
    assert any(ln == line and needle in msg for ln, msg in found), found


def test_tsv_rows_of_one_cluster_must_agree():
    text = ("cluster_id\tsize\tretier\ttags\tlabel\tslug\ttype\thook\n"
            "c1\t2\t0\ta, b\tlabel\ts_one\tenv\thook one\n"
            "c1\t2\t0\ta, c\tlabel\ts_two\tenv\thook two\n")
    found = _violation_lines(text, "c.tsv")
    assert any(ln == 3 and "disagree" in msg for ln, msg in found), found


def test_tsv_bad_header():
    assert _violation_lines("id\tslug\n", "c.tsv")[0][0] == 1


def test_parse_raises_first_violation_with_location():
    with pytest.raises(ClusterFileError) as info:
        parse_cluster_text(GOOD_MD.replace("layer1_04 · 1 ·", "layer1_04 · 3 ·"), "c.md")
    assert str(info.value).startswith("c.md:8:1: cluster layer1_04 declares size 3")
    assert "fix:" in str(info.value)


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage\x80", None])
def test_load_unreadable_files(tmp_path, content):
    path = tmp_path / "clusters.md"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ClusterFileError):
        load_cluster_file(path)


def test_index_is_immutable():
    index = parse_cluster_text(GOOD_MD, "c.md")
    assert isinstance(index, ClusterIndex)
    with pytest.raises(AttributeError):
        index.clusters = ()
    with pytest.raises(AttributeError):
        index.clusters[0].tags = ()


def test_bundled_example_store_is_valid(example_cluster_file):
    index = load_cluster_file(example_cluster_file)
    assert len(index) == 26
    assert 110 <= len(index.members) <= 135
    cluster = index.cluster("layer1_project_memory_router")
    assert cluster.tags == ("behaviour", "caching", "hot", "hybrid", "lost")
    slugs = {m.slug for m in cluster.members}
    assert {"env_bash_tool_env_var_caching", "env_cloudflare_workers_build_secret_vs_text"} <= slugs
    tsv = example_cluster_file.with_suffix(".tsv")
    assert load_cluster_file(tsv) == index


def test_bundled_flat_index_matches_the_store(example_cluster_file, example_flat_index):
    from harness.memorydir import read_index

    index = load_cluster_file(example_cluster_file)
    entries = read_index(example_flat_index)
    assert {e.slug: e.hook for e in entries} == {m.slug: m.hook for m in index.members}
    size = example_flat_index.stat().st_size
    assert 17_000 <= size <= 20_500
