"""``memory-router learn``: lab sessions in which the agent read a memory file after a prompt the
router missed; the dry run's diff, the write, the cap, hand tags, refusals and bad input; and the
same phrasing routing after learning."""

import json
import os
import shutil

import pytest

from harness.cli import main
from router.store.clusterfile import load_cluster_file
from router.config import DEFAULTS, bundled_cluster_file
from router.config import learned_path
from router.store.learned import learned_hits, merge_learned_postings, read_learned, terms_by_slug
from router.routing.score import build_routing_table, choose_clusters, route_prompt, score_clusters
from router.tokens import tokenize

MEMORY = "/home/dev/.claude/projects/-home-dev-code-demo/memory/"
MISSED = "the antivirus makes installing packages painfully slow"
DEFENDER = "env_defender_excludes_dev_dir"   # in layer1_01 (tags: windows, msys, powershell, crlf, defender)


@pytest.fixture
def project(tmp_path):
    """A project with its own copy of the example store and learning on."""
    root = tmp_path / "proj"
    (root / "brain").mkdir(parents=True)
    shutil.copy(bundled_cluster_file(), root / "brain" / "memory-layer1-clusters.md")
    write_config(root, "learning = true\n")
    return root


def write_config(root, extra):
    (root / "memory-router.toml").write_text('clusters = "brain/memory-layer1-clusters.md"\n' + extra,
                                             encoding="utf-8")
    return root / "memory-router.toml"


def learned_file(root):
    return learned_path(str(root / "brain" / "memory-layer1-clusters.md"))


def lab_session(session, path, prompt=MISSED, slug=DEFENDER, injected=None, version="2.1.328"):
    """A scripted session: the prompt, the router's injection if any, the agent reading a memory file."""
    s = session(version=version)
    s.prompt(prompt)
    if injected:
        s.injection(f"Routed memory cluster: layer1_01\n- {injected} \u2014 hook")
    s.tool_call("Read", {"file_path": MEMORY + slug + ".md"}, "---\nname: x\n---\nbody")
    s.assistant("done")
    return s.write(path)


def learn(root, *args):
    return main(["learn", *map(str, args), "--config", str(root / "memory-router.toml")])


def test_dry_run_shows_the_diff_and_writes_nothing(project, session, tmp_path, capsys):
    transcript = lab_session(session, tmp_path / "s.jsonl")
    assert learn(project, transcript, "--dry-run") == 0
    out = capsys.readouterr().out
    assert not os.path.exists(learned_file(project))
    assert f"--- /dev/null\n+++ {learned_file(project)}\n" in out
    for term in ("antivirus", "installing", "package", "painfully", "slow"):
        assert f"\tlayer1_01\t{DEFENDER}\t{term}\tlearn\n" in out
    assert "+added\tcluster_id\tslug\tterm\tsource\n" in out


def test_learn_writes_the_learned_file_and_a_second_run_changes_nothing(project, session, tmp_path, capsys):
    transcript = lab_session(session, tmp_path / "s.jsonl")
    assert learn(project, transcript) == 0
    rows = read_learned(learned_file(project))
    assert [(r.slug, r.term, r.source) for r in rows] == [
        (DEFENDER, t, "learn") for t in ("antivirus", "installing", "package", "painfully", "slow")]
    assert {r.added for r in rows} == {"2026-10-08T11:00:01Z"}   # the prompt's time
    assert "wrote " in capsys.readouterr().out
    before = open(learned_file(project), encoding="utf-8").read()
    assert learn(project, transcript) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert open(learned_file(project), encoding="utf-8").read() == before


def test_a_read_of_the_injected_memory_teaches_nothing(project, session, tmp_path, capsys):
    transcript = lab_session(session, tmp_path / "s.jsonl", injected=DEFENDER)
    assert learn(project, transcript, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["learned"] == [] and out["written"] is False and out["diff"] == ""
    assert out["sessions"][0]["prompts"][0]["ignored"] == [{"slug": DEFENDER, "why": "injected"}]
    assert not os.path.exists(learned_file(project))


def test_json_shape(project, session, tmp_path, capsys):
    transcript = lab_session(session, tmp_path / "s.jsonl")
    assert learn(project, transcript, "--json", "--dry-run") == 0
    out = json.loads(capsys.readouterr().out)
    assert {"cluster_file", "learned_file", "dry_run", "learning", "learned_cap", "written", "sessions", "learned",
            "diff"} <= set(out)
    assert out["dry_run"] is True and out["learning"] is True and out["learned_cap"] == 24
    (item,) = out["learned"]
    assert item["slug"] == DEFENDER and item["how"] == "read" and item["line"] == 1
    assert item["seen_at"] == {"path": str(transcript), "line": 2}
    assert item["added"] == ["antivirus", "installing", "package", "painfully", "slow"]
    assert out["sessions"][0]["prompt_count"] == 1 and out["sessions"][0]["injections_visible"] is True


def test_hand_tags_are_never_learned(project, session, tmp_path, capsys):
    transcript = lab_session(session, tmp_path / "s.jsonl", prompt="windows defender antivirus crawl")
    assert learn(project, transcript, "--json") == 0
    (item,) = json.loads(capsys.readouterr().out)["learned"]
    assert item["skipped"]["hand_tag"] == ["window", "defender"]
    assert [r.term for r in read_learned(learned_file(project))] == ["antivirus", "crawl"]


def test_the_cap_holds_per_cluster_oldest_out_across_sessions(project, session, tmp_path, capsys):
    write_config(project, "learning = true\nlearned_cap = 4\n")
    sessions = tmp_path / "sessions"
    lab_session(session, sessions / "a.jsonl", prompt="antivirus installing crawl")
    later = session(version="2.1.328")
    later.clock = 100   # a later session: its evidence is learned after the first's
    later.prompt("shells opened before the winget install lack the tool")
    later.tool_call("Read", {"file_path": MEMORY + "env_winget_path_refresh.md"}, "body")
    later.write(sessions / "b.jsonl")
    assert learn(project, sessions, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    rows = read_learned(learned_file(project))
    assert len(rows) == 4 and {r.cluster_id for r in rows} == {"layer1_01"}
    assert [r.term for r in rows if r.slug == DEFENDER] == []   # the oldest left first
    assert [e["term"] for e in out["learned"][1]["evicted"]] == ["antivirus", "installing", "crawl"]


def test_a_directory_means_every_session_under_it_with_its_subagents(project, session, tmp_path, capsys):
    sessions = tmp_path / "projects" / "-home-dev-code-demo"
    main_session = session(version="2.1.328")
    main_session.prompt(MISSED)
    main_session.assistant("delegating")
    main_session.write(sessions / "s1.jsonl")
    sub = session(session_id=main_session.session_id, sidechain=True, agent_id="a1", version="2.1.328")
    sub.clock = main_session.clock
    sub.prompt("find why installs are slow")
    sub.tool_call("Read", {"file_path": MEMORY + DEFENDER + ".md"}, "body")
    sub_path = sub.write(sessions / "s1" / "subagents" / "agent-a1.jsonl")
    assert learn(project, tmp_path / "projects", "--json", "--dry-run") == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["path"] for s in out["sessions"]] == [str(sessions / "s1.jsonl")]
    (item,) = out["learned"]
    assert item["slug"] == DEFENDER and item["seen_at"]["path"] == str(sub_path)


def test_learning_off_refuses_to_write_but_a_dry_run_works(project, session, tmp_path, capsys):
    write_config(project, "")
    transcript = lab_session(session, tmp_path / "s.jsonl")
    assert learn(project, transcript) == 1
    err = capsys.readouterr().err
    assert err.startswith("memory-router: error: learning is off") and "set learning = true" in err
    assert err.count("\n") == 1 and not os.path.exists(learned_file(project))
    assert learn(project, transcript, "--dry-run") == 0
    assert "learning is off" in capsys.readouterr().out and not os.path.exists(learned_file(project))


def test_the_bundled_store_is_never_written(session, tmp_path, capsys):
    config = tmp_path / "memory-router.toml"
    config.write_text(f'clusters = "{bundled_cluster_file()}"\nlearning = true\n', encoding="utf-8")
    transcript = lab_session(session, tmp_path / "s.jsonl")
    assert main(["learn", str(transcript), "--config", str(config)]) == 1
    assert "bundled example store" in capsys.readouterr().err
    assert not os.path.exists(learned_path(bundled_cluster_file()))


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "missing.jsonl", "no such transcript file or directory"),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "no session transcript (*.jsonl) under this directory"),
    (lambda tmp: (tmp / "bad.jsonl").write_text("not json\n") and tmp / "bad.jsonl", "not a Claude Code transcript"),
])
def test_bad_input_is_one_line_and_exit_2(project, tmp_path, capsys, make, message):
    target = make(tmp_path)
    assert learn(project, target) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"memory-router: error: {target}") and message in err and err.count("\n") == 1
    assert not os.path.exists(learned_file(project))


def test_a_damaged_learned_file_is_exit_2_and_left_as_it_is(project, session, tmp_path, capsys):
    damaged = "added\tcluster_id\tslug\tterm\tsource\nyesterday\tlayer1_01\tenv_x\tslow\tmcp\n"
    with open(learned_file(project), "w", encoding="utf-8") as handle:
        handle.write(damaged)
    assert learn(project, lab_session(session, tmp_path / "s.jsonl")) == 2
    assert ":2:1: added 'yesterday'" in capsys.readouterr().err
    assert open(learned_file(project), encoding="utf-8").read() == damaged


def test_help_shows_the_learning_defaults(capsys):
    assert main(["learn", "--help"]) == 0
    out = capsys.readouterr().out
    assert "learning = false" in out and "learned_cap = 24" in out and "--dry-run" in out


# --------------------------------------------------------------------------- the same phrasing routes after


def route_with_learned(prompt, table, settings, learned_weight):
    """Spec §10's choice over spec scores plus ``learned_weight`` per learned term (what a provider
    does with the merged table)."""
    tokens = tokenize(prompt)
    scored = {position: [score, tags, members] for position, score, tags, members in
              score_clusters(tokens, table, settings)}
    for position, terms in learned_hits(tokens, table).items():
        row = scored.setdefault(position, [0, [], []])
        row[0] += learned_weight * len(terms)
    ranked = sorted(((p, s, t, m) for p, (s, t, m) in scored.items()), key=lambda r: (-r[1], -len(r[2]), r[0]))
    return [table["clusters"][p][0] for p in choose_clusters(ranked, settings)]


@pytest.mark.parametrize("prompt, cluster, slug", [
    (MISSED, "layer1_01", DEFENDER),
    ("my nightly supplier import shows garbled letters", "layer1_03", "env_supplier_csv_encoding"),
    ("the invoices page times out when the export job runs", "layer1_02", "env_workers_cpu_limit_image_resize"),
])
def test_the_same_phrasing_routes_after_learning(project, session, tmp_path, prompt, cluster, slug):
    settings = dict(DEFAULTS)
    cluster_file = str(project / "brain" / "memory-layer1-clusters.md")
    table = build_routing_table(load_cluster_file(cluster_file))
    before = route_prompt(prompt, table, settings)["routed"]
    assert cluster not in before
    assert learn(project, lab_session(session, tmp_path / "s.jsonl", prompt=prompt, slug=slug)) == 0
    merged = merge_learned_postings(table, terms_by_slug(read_learned(learned_file(project))))
    assert route_with_learned(prompt, merged, settings, learned_weight=settings["member_weight"])[0] == cluster
    # Another store-related prompt that shares no learned word routes as before.
    other = "the Cloudflare Workers build says PUBLIC_API_URL is undefined"
    assert route_with_learned(other, merged, settings, settings["member_weight"]) == \
        route_prompt(other, table, settings)["routed"]


@pytest.mark.parametrize("prompt, cluster, slug", [
    (MISSED, "layer1_01", DEFENDER),
    ("my nightly supplier import shows garbled letters", "layer1_03", "env_supplier_csv_encoding"),
    ("the invoices page times out when the export job runs", "layer1_02", "env_workers_cpu_limit_image_resize"),
])
def test_the_default_provider_routes_the_same_phrasing_after_learning(project, session, tmp_path, capsys, prompt,
                                                                       cluster, slug):
    """The real path end to end: `learn` writes the file, and `route` (the hook's table and the
    configured default provider, learning on) reads it."""
    def route():
        assert main(["route", prompt, "--config", str(project / "memory-router.toml"), "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    before = route()
    assert before["provider"] == DEFAULTS["provider"]
    assert slug not in [line["slug"] for line in before["lines"]]
    assert learn(project, lab_session(session, tmp_path / "s.jsonl", prompt=prompt, slug=slug)) == 0
    capsys.readouterr()
    after = route()
    assert after["routed"][0] == cluster
    assert slug in [line["slug"] for line in after["lines"]]


# --------------------------------------------------------------------------- issue 24 item 22; utterances


def with_lone_surrogate(path):
    """The transcript with half an emoji in its prompt, as JSON carries it (``\\ud83d``)."""
    path.write_text(path.read_text(encoding="utf-8").replace("HALF", "\\ud83d"), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", [[], ["--json"], ["--dry-run"], ["--json", "--dry-run"]],
                         ids=["plain", "json", "dry-run", "json-dry-run"])
def test_item22_a_lone_surrogate_in_a_prompt_is_learned_from_in_every_output_mode(project, session, tmp_path,
                                                                                 capsys, mode):
    transcript = with_lone_surrogate(lab_session(session, tmp_path / "s.jsonl", prompt="the antivirus HALF makes "
                                                 "installing packages painfully slow"))
    assert learn(project, transcript, *mode) == 0
    out = capsys.readouterr().out
    assert "\ufffd" in out
    if "--json" in mode:
        (item,) = json.loads(out)["learned"]
        assert item["prompt"] == "the antivirus \ufffd makes installing packages painfully slow"
    written = "--dry-run" not in mode
    assert os.path.exists(learned_file(project)) is written
    if written:
        assert [r.term for r in read_learned(learned_file(project))] == [
            "antivirus", "installing", "package", "painfully", "slow"]


@pytest.mark.parametrize("mode", [[], ["--json"]], ids=["plain", "json"])
def test_item22_nothing_is_written_when_the_output_cannot_be_made(project, session, tmp_path, monkeypatch, mode):
    import harness.learn

    def broken(*_args, **_kwargs):
        raise RuntimeError("the report cannot be made")

    monkeypatch.setattr(harness.learn, "_short", broken)
    monkeypatch.setattr(harness.learn, "utterance_words", broken, raising=False)
    with pytest.raises(RuntimeError, match="cannot be made"):
        learn(project, lab_session(session, tmp_path / "s.jsonl"), *mode)
    assert not os.path.exists(learned_file(project))


def utterances_file(root, rows):
    path = root / "brain" / "memory-layer1-clusters.utterances.tsv"
    header = "slug\tutterance\tmemory_hash\tengine\tmodel\twritten\n"
    path.write_text(header + "".join(f"{slug}\t{text}\t-\thand\t-\t2026-12-01T21:00:00Z\n" for slug, text in rows),
                    encoding="utf-8")
    return path


def test_learn_says_which_evidence_words_the_memorys_utterances_already_hold(project, session, tmp_path, capsys,
                                                                           monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")   # the table unfolded
    utterances_file(project, [(DEFENDER, "antivirus scans slow down my installs"),
                              ("env_bash_tool_env_var_caching", "painfully slow shell")])
    transcript = lab_session(session, tmp_path / "s.jsonl")
    assert learn(project, transcript, "--json", "--dry-run") == 0
    out = json.loads(capsys.readouterr().out)
    (item,) = out["learned"]
    # by stem, as the router matches them ("installing" meets "installs"); another memory's words do not count
    assert item["utterance_hits"] == ["antivirus", "installing", "slow"]
    assert out["utterances_problem"] is None and out["utterances_file"].endswith(".utterances.tsv")
    assert learn(project, transcript, "--dry-run") == 0
    assert "antivirus, installing, slow" in capsys.readouterr().out


def test_a_damaged_utterances_file_is_reported_and_learning_goes_on(project, session, tmp_path, capsys):
    utterances_file(project, [("Not A Slug", "antivirus")])
    assert learn(project, lab_session(session, tmp_path / "s.jsonl"), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert "invalid slug 'Not A Slug'" in out["utterances_problem"] and out["written"] is True
    assert out["learned"][0]["utterance_hits"] == []
