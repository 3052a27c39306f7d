"""benchmarks/realwording_data.py: the shipped real-wording stores are valid, the word-overlap
rule decides kinds as DATA-FORMAT.md says, and the checker reports each breakage of a small store
built here (the minimum counts lowered to its size)."""

import importlib.util
import pathlib
import shutil

import pytest

from harness.cli import main as cli_main
from router.store.clusterfile import load_cluster_file

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "realwording_data.py"


def _load():
    spec = importlib.util.spec_from_file_location("realwording_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def checker():
    return _load()


MEMORIES = {
    "env_kettle_descaler": ("env", "the kettle scale builds up fast; run KETTLE_DESCALE monthly with citric acid",
                            "Hard water here: the kettle needs the descaler every month."),
    "feedback_kettle_filter": ("feedback", "always refill the kettle through the filter jug, never from the tap",
                               "Tap water clogs the kettle's mesh within a week."),
    "project_garden_shed": ("project", "the garden shed roof leaks at the north corner; tarp until the roofer comes",
                            "Roofer booked for the spring; the tarp is in the garage."),
    "reference_garden_planner": ("reference", "garden planting plan lives in planner/beds-2026.ods",
                                 "Raised beds, tomatoes on the south side."),
}


def _write_store(root, name="demo"):
    store = root / name
    memory = store / "memory"
    memory.mkdir(parents=True)
    lines = ["# Memory Index", ""]
    for slug, (kind, hook, body) in MEMORIES.items():
        (memory / f"{slug}.md").write_text(
            f"---\nname: {slug}\ndescription: {hook}\ntype: {kind}\n---\n{body}\n", encoding="utf-8")
        lines.append(f"- [{slug}]({slug}.md) \u2014 {hook}")
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (store / "memory-router.toml").write_text('clusters = "clusters.md"\nmemory_dir = "memory"\n', encoding="utf-8")
    assert cli_main(["clusters", "build", "--memory-dir", str(memory), "--out", str(store / "clusters.md"),
                     "--clusters", "2", "--json"]) == 0
    index = load_cluster_file(str(store / "clusters.md"))
    home = {slug: index.find_member(slug)[0].cluster_id for slug in MEMORIES}
    cases = [
        ("identifier-descale", "how often should KETTLE_DESCALE run?", "identifier", "env_kettle_descaler"),
        ("member-filter", "should I use the filter jug for the kettle", "member", "feedback_kettle_filter"),
        ("paraphrase-roof", "rain is dripping into the hut out back", "paraphrase", "project_garden_shed"),
    ]
    suite = ["clusters: clusters.md", "cases:"]
    for case_id, prompt, kind, slug in cases:
        suite += [f"  - id: {case_id}", f'    prompt: "{prompt}"', f"    routes_to: {home[slug]}",
                  f"    injects: [{slug}]", f"    tags: [{kind}, {home[slug]}]", ""]
    suite += ["  - id: nm-bread", '    prompt: "which flour for a garden party sourdough"', "    silent: true",
              f"    tags: [near-miss-people, {home['project_garden_shed']}]", ""]
    (store / "people.yaml").write_text("\n".join(suite), encoding="utf-8")
    ids = [case[0] for case in cases] + ["nm-bread"] + list(MEMORIES)
    (store / "sources.tsv").write_text("".join(f"{i}\thttps://example.org/{i}\n" for i in ids), encoding="utf-8")
    (store / "README.md").write_text("# demo store\n", encoding="utf-8")
    (store / "clusters.tsv").unlink()
    return store


@pytest.fixture
def small(checker, monkeypatch):
    monkeypatch.setattr(checker, "MIN_MEMORIES", 3)
    monkeypatch.setattr(checker, "MIN_TOPICAL", 3)
    monkeypatch.setattr(checker, "MIN_NEAR_MISS", 1)
    return checker


def _edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("store", _load().store_dirs(), ids=lambda p: pathlib.Path(p).name)
def test_the_shipped_stores_are_valid(checker, store):
    problems, counts = checker.check_store(store)
    assert problems == []
    assert counts["near-miss-people"] >= checker.MIN_NEAR_MISS
    assert sum(counts[kind] for kind in checker.TOPICAL_KINDS) >= checker.MIN_TOPICAL


def test_the_overlap_rule_names_each_kind(checker):
    memory = "pandas raises SettingWithCopyWarning on chained assignment; use .loc on the frame"
    assert checker.overlap_kind("getting settingwithcopywarning again", memory) == "identifier"
    assert checker.overlap_kind("why does chained indexing warn me", memory) == "member"
    assert checker.overlap_kind("my edits to a slice vanish", memory) == "paraphrase"
    # function words and suffixes: "the", "is", "assignments" -> "assignment"
    assert checker.overlap_kind("what is the deal with assignments", memory) == "member"
    assert checker.overlap_kind("what is the deal", memory) == "paraphrase"


def test_code_like_tokens(checker):
    assert checker.code_tokens("see `df.loc`, ERR_SSL and 0x80070005, not plain words.") == {
        "df.loc", "err_ssl", "0x80070005"}
    assert checker.code_tokens("read_csv in pandas/io with setWithCopy") == {"read_csv", "pandas/io", "setwithcopy"}
    assert checker.code_tokens("A sentence. Another one, Capitalised") == set()
    assert checker.shared_identifiers("see df.loc now", "use .loc or df.loc.") == {"df.loc"}


def test_a_small_valid_store_passes(small, tmp_path, capsys):
    store = _write_store(tmp_path)
    clusters = load_cluster_file(str(store / "clusters.md")).cluster_ids
    (store / "blind-utterances.tsv").write_text(
        "".join(f"{slug}\tutterance {i}\n" for slug in MEMORIES for i in range(10)), encoding="utf-8")
    (store / "blind-nearmisses.tsv").write_text(
        "".join(f"{cid}\trequest {i}\n" for cid in clusters for i in range(12)), encoding="utf-8")
    capsys.readouterr()
    problems, counts = small.check_store(str(store))
    assert problems == []
    assert (counts["identifier"], counts["member"], counts["paraphrase"], counts["near-miss-people"]) == (1, 1, 1, 1)
    assert small.main([str(store)]) == 0
    assert capsys.readouterr().out.startswith("ok: 1 stores")


def test_table_prints_one_row_a_store(small, tmp_path, capsys):
    good = _write_store(tmp_path)
    held = _write_store(tmp_path, name=small.HELD_OUT_STORES[0])
    capsys.readouterr()
    assert small.main(["--table", str(good)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| store | held out | memories |")
    assert out[2] == "| demo | no | 4 | 2 | 1 | 1 | 1 | 1 |"
    # a held-out store is marked; its missing rule is a problem (exit 1, on stderr)
    assert small.main(["--table", str(held)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[2].startswith(f"| {small.HELD_OUT_STORES[0]} | **yes** |")
    assert "must carry the rule" in captured.err


def _unindexed_memory(store):
    (store / "memory" / "feedback_orphan.md").write_text(
        "---\nname: feedback_orphan\ndescription: an orphan\ntype: feedback\n---\nan orphan\n", encoding="utf-8")


def _wrong_kind(store):
    _edit(store / "people.yaml", "tags: [paraphrase,", "tags: [member,")


def _member_called_paraphrase(store):
    _edit(store / "people.yaml", "rain is dripping into the hut out back", "rain is dripping into the shed")


def _wrong_cluster(store):
    text = (store / "people.yaml").read_text(encoding="utf-8")
    clusters = load_cluster_file(str(store / "clusters.md")).cluster_ids
    block = text.split("  - id: member-filter")[1].split("\n\n")[0]
    home = block.split("routes_to: ")[1].split("\n")[0]
    other = next(c for c in clusters if c != home)
    _edit(store / "people.yaml", block, block.replace(home, other))


def _tag_names_another_cluster(store):
    text = (store / "people.yaml").read_text(encoding="utf-8")
    clusters = load_cluster_file(str(store / "clusters.md")).cluster_ids
    block = text.split("  - id: member-filter")[1].split("\n\n")[0]
    home = block.split("routes_to: ")[1].split("\n")[0]
    other = next(c for c in clusters if c != home)
    _edit(store / "people.yaml", block, block.replace(f"tags: [member, {home}]", f"tags: [member, {other}]"))


def _missing_source(store):
    _edit(store / "sources.tsv", "member-filter\thttps://example.org/member-filter\n", "")


def _http_source(store):
    _edit(store / "sources.tsv", "https://example.org/nm-bread", "http://example.org/nm-bread")


def _unknown_source(store):
    with open(store / "sources.tsv", "a", encoding="utf-8") as handle:
        handle.write("stray-id\thttps://example.org/stray\n")


def _near_miss_off_store(store):
    _edit(store / "people.yaml", "which flour for a garden party sourdough", "which flour for sourdough")


def _near_miss_routed(store):
    _edit(store / "people.yaml", "    silent: true\n", "    silent: false\n")


def _canary_named_suite(store):
    shutil.copy(store / "people.yaml", store / "canary-people.yaml")


def _too_few_topical(store):
    text = (store / "people.yaml").read_text(encoding="utf-8")
    start = text.index("  - id: paraphrase-roof")
    end = text.index("  - id: nm-bread")
    (store / "people.yaml").write_text(text[:start] + text[end:], encoding="utf-8")
    _edit(store / "sources.tsv", "paraphrase-roof\thttps://example.org/paraphrase-roof\n", "")


def _bad_type(store):
    _edit(store / "memory" / "env_kettle_descaler.md", "type: env", "type: gotcha")


def _blind_unknown_slug(store):
    (store / "blind-utterances.tsv").write_text("env_no_such\tdescale it\n", encoding="utf-8")


def _blind_too_few_requests(store):
    clusters = load_cluster_file(str(store / "clusters.md")).cluster_ids
    rows = [f"{cid}\trequest {i}" for cid in clusters for i in range(12)]
    (store / "blind-nearmisses.tsv").write_text("\n".join(rows[:-1]) + "\n", encoding="utf-8")


def _no_readme(store):
    (store / "README.md").unlink()


def _hook_mismatch(store):
    _edit(store / "memory" / "MEMORY.md", "citric acid", "vinegar")


@pytest.mark.parametrize("breakage, expected", [
    (_unindexed_memory, "memory file feedback_orphan.md is not listed in MEMORY.md"),
    (_unindexed_memory, "memory feedback_orphan is in no cluster"),
    (_wrong_kind, "is tagged member but the word-overlap rule makes it paraphrase"),
    (_member_called_paraphrase, "is tagged paraphrase but the word-overlap rule makes it member"),
    (_wrong_cluster, "'feedback_kettle_filter' belongs"),
    (_tag_names_another_cluster, "must route to exactly its cluster (its second tag)"),
    (_missing_source, "member-filter has no source URL"),
    (_http_source, "not an https URL"),
    (_unknown_source, "stray-id is neither a case id nor a memory slug"),
    (_near_miss_off_store, "shares no content word with the store"),
    (_near_miss_routed, "must expect silence"),
    (_canary_named_suite, "never name a store's suite canary*.yaml"),
    (_too_few_topical, "2 topical cases, at least 3 needed"),
    (_bad_type, "type 'gotcha' is not one of"),
    (_blind_unknown_slug, "env_no_such is not a memory slug of this store"),
    (_blind_too_few_requests, "has 11 rows, expected 12"),
    (_no_readme, "README.md: missing"),
    (_hook_mismatch, "hook differs"),
], ids=lambda value: value.__name__.strip("_") if callable(value) else None)
def test_each_breakage_is_reported(small, tmp_path, capsys, breakage, expected):
    store = _write_store(tmp_path)
    breakage(store)
    capsys.readouterr()
    problems, _ = small.check_store(str(store))
    assert any(expected in problem for problem in problems), problems
    assert small.main([str(store)]) == 1
    assert expected in capsys.readouterr().out


def test_too_few_memories_for_the_real_minimum(checker, tmp_path):
    problems, _ = checker.check_store(str(_write_store(tmp_path)))
    assert any("4 memories, expected 25 to 40" in problem for problem in problems), problems


def test_a_held_out_store_carries_the_rule(small, tmp_path):
    store = _write_store(tmp_path, name=small.HELD_OUT_STORES[0])
    problems, _ = small.check_store(str(store))
    assert any("must carry the rule" in problem for problem in problems), problems
    rule = small.heldout_rule()
    assert "never used to fit anything" in rule[0] and len(rule) == 4
    assert not any("heldout.yaml" in piece for piece in rule)
    (store / "README.md").write_text("# held out\n\n## The rule\n\n" + "\n".join(rule[:-1]) + "\n", encoding="utf-8")
    assert any("must carry the rule" in problem for problem in small.check_store(str(store))[0])
    (store / "README.md").write_text("# held out\n\n## The rule\n\n" + "\n".join(rule) + "\n", encoding="utf-8")
    assert small.check_store(str(store))[0] == []


def test_no_store_is_an_error(checker, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(checker, "ROOT", str(tmp_path))
    monkeypatch.setattr(checker, "store_dirs", lambda root=str(tmp_path): [])
    assert checker.main([]) == 1
    assert "no store found" in capsys.readouterr().out
