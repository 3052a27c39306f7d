import json

import pytest

from harness.cli import main

SPEC_PROMPT = "I set an env var with setx but the Bash tool still can't see it, why?"


def test_route_json_shape(capsys, example_cluster_file):
    assert main(["route", SPEC_PROMPT, "--clusters", str(example_cluster_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("prompt_tokens", "scores", "floor", "top_score", "second_score", "margin_over_floor",
                "lead_over_second", "routed", "lines", "total_member_lines", "additional_context",
                "hook_output", "cluster_file", "settings"):
        assert key in out, key
    assert out["routed"][0] == "layer1_project_memory_router"
    assert out["hook_output"]["hookSpecificOutput"]["additionalContext"] == out["additional_context"]
    assert {"cluster_id", "score", "tag_hits", "member_hits"} <= set(out["scores"][0])


def test_route_table_for_people(capsys, example_cluster_file):
    assert main(["route", "refactor this loop", "--clusters", str(example_cluster_file)]) == 0
    assert "routed: nothing" in capsys.readouterr().out


@pytest.mark.parametrize("settings, provider, floor", [
    ('provider = "weighted"\nutterances = false\n', "weighted", "floor 8.0 = weighted_floor"),
    ('provider = "weighted"\n', "weighted", "floor 8.0 = utterance_floor"),   # the shipped utterances file
    ('provider = "spec"\n', "spec", "floor 3 = score_floor"),
])
def test_route_names_the_provider_and_the_setting_its_floor_comes_from(capsys, example_cluster_file, tmp_path,
                                                                       settings, provider, floor):
    from router.config import DEFAULTS

    config = tmp_path / "memory-router.toml"
    config.write_text(settings)
    # the figures are the defaults' (a change of default is a change here too)
    assert floor.split()[1] == str(DEFAULTS[floor.split(" = ")[1]])
    assert main(["route", SPEC_PROMPT, "--clusters", str(example_cluster_file), "--config", str(config)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the title may wrap
    assert f"Scores by the {provider} provider ({floor};" in out
    assert f"clusters: {example_cluster_file}" in out


def test_a_custom_provider_floor_is_called_its_own():
    from harness.route import floor_text

    assert floor_text({"provider": "mypkg.mod:make", "floor": 0.4}) == "floor 0.4, the provider's own"


def test_route_table_keeps_cluster_ids_whole_at_80_columns(capsys, example_cluster_file, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["route", SPEC_PROMPT, "--clusters", str(example_cluster_file)]) == 0
    out = capsys.readouterr().out
    assert "│ layer1_project_memory_router │" in out
    assert max(len(line) for line in out.splitlines() if line.startswith(("┃", "│"))) <= 80


def test_route_uses_bundled_store_when_none_configured(capsys):
    assert main(["route", SPEC_PROMPT, "--json"]) == 0
    captured = capsys.readouterr()
    assert "bundled example store" not in captured.err  # --json keeps stderr quiet too
    assert json.loads(captured.out)["routed"]


def test_route_bad_cluster_file_exits_2(capsys, tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_text("## Layer 0 - Cluster Router\n- c · x · tags: a\n## Layer 1 - Member Lines\n", encoding="utf-8")
    assert main(["route", "x", "--clusters", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"memory-router: error: {bad}:2:")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "pyproject",
    [b"tool = 5\n", b"[tool]\nmemory-router = 5\n", b"score_floor = 3 # \xff\n"],
    ids=["tool not a table", "our key not a table", "not UTF-8"],
)
def test_route_with_a_malformed_config_never_crashes(tmp_path, monkeypatch, capsys, pyproject,
                                                     example_cluster_file):
    monkeypatch.chdir(tmp_path)
    name = "memory-router.toml" if b"score_floor" in pyproject else "pyproject.toml"
    (tmp_path / name).write_bytes(pyproject)
    code = main(["route", "setx bash tool", "--clusters", str(example_cluster_file), "--json"])
    captured = capsys.readouterr()
    if name == "pyproject.toml" and b"memory-router" not in pyproject:
        assert code == 0 and json.loads(captured.out)["routed"]
    else:
        assert code == 2
        assert captured.err.startswith("memory-router: error: ") and len(captured.err.splitlines()) == 1


@pytest.mark.parametrize("columns", ["80", "40"])
def test_route_prints_the_additional_context_raw_when_piped(run_cli, example_cluster_file, columns):
    # Issue 11: piped, rich word-wrapped the "exact" text at 80 columns.
    prompt = "why does setx not reach the bash tool"
    exact = json.loads(run_cli("route", "--json", "--clusters", example_cluster_file, prompt).stdout)["additional_context"]
    assert max(len(line) for line in exact.splitlines()) > 80  # the text has lines a wrap would break
    out = run_cli("route", "--clusters", example_cluster_file, prompt, env={"COLUMNS": columns}).stdout.decode()
    assert out.endswith(exact + "\n")


def test_route_shows_the_words_as_typed_beside_the_stems_and_heads_every_column(capsys, example_cluster_file,
                                                                              monkeypatch, tmp_path):
    # issue 29 item 9: the table showed stems (window, sedg, archiv) and its last column had no name
    config = tmp_path / "memory-router.toml"
    config.write_text('provider = "weighted"\nutterances = false\n')
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["route", "my pnpm install is slow on Windows", "--clusters", str(example_cluster_file),
                 "--config", str(config)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == [
        "cluster", "score", "tag hits", "member hits", "routed"]
    assert "Windows (window)" in out
    assert "│ yes    │" in out
    assert "prompt words (as typed; in brackets the stem matched, where it differs): " \
           "install, pnpm, slow, Windows (window)" in out


def test_as_typed_keeps_an_unchanged_word_and_a_fuzzy_match_alone():
    from harness.context import as_typed, typed_words

    typed = typed_words("Archived the sedge files; pnpm_store moved")
    assert typed["archiv"] == ["Archived"] and typed["pnpm_store"] == ["pnpm_store"] and typed["pnpm"] == ["pnpm_store"]
    assert as_typed(["archiv", "pnpm_store", "sedg", "zzz"], typed) == [
        "Archived (archiv)", "pnpm_store", "sedge (sedg)", "zzz"]


def test_route_says_when_the_veto_silenced_a_prompt_and_names_the_exemplars(capsys, example_cluster_file):
    prompt = "write me a tiny python LRU cache decorator with a TTL per entry"
    assert main(["route", prompt, "--clusters", str(example_cluster_file), "--json"]) == 0
    decision = json.loads(capsys.readouterr().out)
    veto = decision["veto"]
    assert veto["vetoed"] and decision["routed"] == []
    # --json is the MCP route result: exemplars named, never their text (issue 35 item 1) ...
    assert "text" not in veto["nearest_negative"] and veto["nearest_negative"]["similarity"] > 0
    assert veto["best_member_exemplar"]["slug"] and "text" not in veto["best_member_exemplar"]
    assert main(["route", prompt, "--clusters", str(example_cluster_file)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # ... while a person at a terminal is shown the text
    assert f"vetoed: nearest {veto['nearest_negative']['kind'].replace('_', '-')} '" in out


def test_route_names_a_skipped_row_for_the_person_and_by_place_in_json(capsys, tmp_path, example_cluster_file):
    """Issue 35 items 1 and 7: the bad row is skipped, route prints it whole with its fix on stderr,
    and route --json (the MCP route result) names it by place only."""
    import shutil

    from router.config import utterances_path

    store = tmp_path / "c.md"
    shutil.copy(example_cluster_file, store)
    shutil.copy(utterances_path(str(example_cluster_file)), utterances_path(str(store)))
    with open(utterances_path(str(store)), "a", encoding="utf-8") as handle:
        handle.write("Bad_Slug\tsetx never reaches bash\t-\thand\t-\t2026-12-01T21:00:00Z\n")
    assert main(["route", SPEC_PROMPT, "--clusters", str(store)]) == 0
    captured = capsys.readouterr()
    assert f"{utterances_path(str(store))}:" in captured.err and "invalid slug 'Bad_Slug'" in captured.err
    assert "fix:" in captured.err and "routed: layer1_project_memory_router" in captured.out
    assert main(["route", SPEC_PROMPT, "--clusters", str(store), "--json"]) == 0
    decision = json.loads(capsys.readouterr().out)
    [problem] = decision["store_problems"]
    assert problem.startswith(f"{utterances_path(str(store))}:") and "Bad_Slug" not in problem


def test_route_names_the_veto_floor_when_the_floor_fired(capsys, example_cluster_file, tmp_path):
    """Issue 35 item 9: a veto fired by veto_floor is not printed as the nearest near-miss."""
    config = tmp_path / "memory-router.toml"
    config.write_text("veto_floor = 0.99\nveto_protect = 0.0\nveto_strong = 0.0\nveto_margin = 1.0\n")
    prompt = "the Bash tool isn't picking up my PATH change"
    assert main(["route", prompt, "--clusters", str(example_cluster_file), "--config", str(config), "--json"]) == 0
    veto = json.loads(capsys.readouterr().out)["veto"]
    assert veto["vetoed"] and veto["rule"] == "floor"
    assert main(["route", prompt, "--clusters", str(example_cluster_file), "--config", str(config)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "vetoed by veto_floor: no routed member's own exemplar reaches 0.99" in out
    assert "vetoed: nearest" not in out
