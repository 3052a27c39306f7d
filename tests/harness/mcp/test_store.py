"""``memory-router mcp`` through the official SDK's own stdio client: initialize, list tools, call
each tool, bad arguments, a missing store, path tricks, result caps and the feedback tool."""

import json
import os
import shutil
import sys

import pytest

from harness.mcp import store as mcp_server
from harness.mcp.store import MemoryStore
from harness.mcp.resultcap import json_size
from harness.cli import main
from router import config as config_mod
from router.config import bundled_cluster_file
from router.errors import InputError, RefusedError

pytest.importorskip("mcp")

MEMORY_FILE = "---\nname: Bash tool env\ndescription: setx never reaches the Bash tool\ntype: env\n---\n" \
              "The Bash tool inherits the environment Claude Code started with.\n"
SYMLINKED = "env_git_autocrlf_false"        # memory dir entry is a symlink to a file outside it
FIFO = "env_msys_path_conversion"            # memory dir entry is a FIFO
HYPHENATED = "env_windows_long_paths"        # stored as env-windows-long-paths.md
BIG = "env_defender_excludes_dev_dir"        # a 200 KB body
NO_FILE = "env_winget_path_refresh"          # in the store, no file
ROUTED_PROMPT = "setx PATH never reaches the bash tool on windows"


def text_of(result):
    return "".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-store")
    project = root / "project"
    (project / "brain").mkdir(parents=True)
    shutil.copy(bundled_cluster_file(), project / "brain" / "memory-layer1-clusters.md")
    memory = root / "memory"
    memory.mkdir()
    (memory / "env_bash_tool_env_var_caching.md").write_text(MEMORY_FILE, encoding="utf-8")
    (memory / "env-windows-long-paths.md").write_text("---\ntype: env\n---\nLongPathsEnabled=1\n", encoding="utf-8")
    (memory / f"{BIG}.md").write_text("---\ntype: env\n---\n" + "defender exclusion line\n" * 9000, encoding="utf-8")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("SECRET OUTSIDE THE MEMORY DIRECTORY\n", encoding="utf-8")
    os.symlink(outside / "secret.md", memory / f"{SYMLINKED}.md")
    os.mkfifo(memory / f"{FIFO}.md")
    home = root / "home"
    home.mkdir()
    return {"root": root, "project": project, "memory": memory, "home": home,
            "clusters": project / "brain" / "memory-layer1-clusters.md"}


CALLS = [
    ("route", "route", {"prompt": ROUTED_PROMPT}),
    ("route-nothing", "route", {"prompt": "write a haiku about autumn leaves"}),
    ("search", "search_memory", {"query": "setx bash tool", "limit": 3}),
    ("search-default", "search_memory", {"query": "windows"}),
    ("search-stopwords", "search_memory", {"query": "the and of"}),
    ("get", "get_memory", {"slug": "env_bash_tool_env_var_caching"}),
    ("get-hyphenated", "get_memory", {"slug": HYPHENATED}),
    ("get-big", "get_memory", {"slug": BIG}),
    ("feedback-off", "record_feedback", {"prompt": ROUTED_PROMPT, "slug": "env_bash_tool_env_var_caching",
                                         "useful": True}),
    # path tricks and slugs outside the store
    ("trick-dotdot", "get_memory", {"slug": "../outside/secret"}),
    ("trick-absolute", "get_memory", {"slug": "/etc/passwd"}),
    ("trick-dotdot-only", "get_memory", {"slug": ".."}),
    ("trick-with-suffix", "get_memory", {"slug": "env_bash_tool_env_var_caching.md"}),
    ("trick-backslash", "get_memory", {"slug": "..\\outside\\secret"}),
    ("trick-nul", "get_memory", {"slug": "env_bash\x00"}),
    ("trick-empty", "get_memory", {"slug": ""}),
    ("not-in-store", "get_memory", {"slug": "secret"}),
    ("symlink-out", "get_memory", {"slug": SYMLINKED}),
    ("fifo", "get_memory", {"slug": FIFO}),
    ("no-file", "get_memory", {"slug": NO_FILE}),
    # bad arguments
    ("route-missing-prompt", "route", {}),
    ("route-empty-prompt", "route", {"prompt": "   "}),
    ("route-prompt-list", "route", {"prompt": ["a"]}),
    ("search-limit-text", "search_memory", {"query": "windows", "limit": "many"}),
    ("search-limit-zero", "search_memory", {"query": "windows", "limit": 0}),
    ("search-limit-huge", "search_memory", {"query": "windows", "limit": 10_000}),
    ("get-slug-number", "get_memory", {"slug": 7}),
    ("feedback-missing-useful", "record_feedback", {"prompt": "x", "slug": "env_bash_tool_env_var_caching"}),
    ("unknown-tool", "delete_memory", {"slug": "env_bash_tool_env_var_caching"}),
]


@pytest.fixture(scope="module")
def session(store, mcp_session):
    return mcp_session(["mcp", "--memory-dir", store["memory"]], store["project"], store["home"], calls=CALLS,
                       read=[mcp_server.INDEX_URI, "memory-router://nothing-here"])


def test_initialize_names_the_server_and_says_what_it_is_for(session):
    from router import __version__

    init = session["init"]
    assert init.server_info.name == "memory-router"
    assert init.server_info.version == __version__
    assert "route" in init.instructions
    assert init.capabilities.tools is not None and init.capabilities.resources is not None


def test_lists_exactly_the_four_tools_with_their_annotations(session):
    tools = {tool.name: tool for tool in session["tools"]}
    assert tuple(sorted(tools)) == tuple(sorted(mcp_server.TOOL_NAMES))
    for name in ("route", "search_memory", "get_memory"):
        assert tools[name].annotations.read_only_hint is True, name
        assert tools[name].annotations.open_world_hint is False, name
    assert tools["record_feedback"].annotations.read_only_hint is False
    assert tools["route"].input_schema["required"] == ["prompt"]
    assert tools["record_feedback"].input_schema["properties"]["useful"]["type"] == "boolean"


def test_route_tool_returns_the_route_json_object(session, store, run_cli):
    result = session["calls"]["route"]
    assert result.is_error is False
    expected = run_cli("route", ROUTED_PROMPT, "--json", env={"CLAUDE_PROJECT_DIR": str(store["project"])})
    assert expected.returncode == 0, expected.stderr
    assert result.structured_content == json.loads(expected.stdout)
    assert "env_bash_tool_env_var_caching" in result.structured_content["additional_context"]
    assert json.loads(text_of(result)) == result.structured_content


def test_route_tool_that_routes_nothing_says_so(session):
    decision = session["calls"]["route-nothing"].structured_content
    assert decision["routed"] == [] and decision["additional_context"] is None and decision["hook_output"] is None


def test_search_ranks_the_memory_with_the_query_words_first(session):
    found = session["calls"]["search"].structured_content
    assert found["results"][0]["slug"] == "env_bash_tool_env_var_caching"
    assert set(found["results"][0]["member_hits"]) >= {"setx", "bash", "tool"}
    assert len(found["results"]) <= 3
    scores = [r["score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True)


def test_search_says_when_there_are_more_matches_than_the_limit(session):
    found = session["calls"]["search-default"].structured_content
    assert found["limit"] == mcp_server.SEARCH_DEFAULT_LIMIT
    assert found["total_matches"] > found["limit"] == len(found["results"])
    assert "raise limit" in found["note"]


def test_search_with_only_stopwords_explains_the_empty_result(session):
    found = session["calls"]["search-stopwords"].structured_content
    assert found["results"] == [] and "no routing words" in found["note"]


def test_get_memory_returns_the_file_body_and_front_matter(session, store):
    got = session["calls"]["get"].structured_content
    assert got["body"] == "The Bash tool inherits the environment Claude Code started with.\n"
    assert got["name"] == "Bash tool env" and got["description"] == "setx never reaches the Bash tool"
    assert got["cluster_id"] == "layer1_project_memory_router"
    assert got["path"] == str(store["memory"] / "env_bash_tool_env_var_caching.md")
    assert "truncated" not in got


def test_get_memory_finds_a_file_whose_name_normalises_to_the_slug(session):
    assert session["calls"]["get-hyphenated"].structured_content["body"] == "LongPathsEnabled=1\n"


def test_get_memory_caps_a_large_body_and_says_so(session):
    result = session["calls"]["get-big"]
    got = result.structured_content
    assert got["truncated"]["body"]["file_bytes"] == got["bytes"] > len(got["body"])
    assert "read " in got["truncated"]["note"]
    assert len(text_of(result)) <= mcp_server.DEFAULT_MAX_RESULT_CHARS


@pytest.mark.parametrize("label, message", [
    ("trick-dotdot", "is not a memory slug"),
    ("trick-absolute", "is not a memory slug"),
    ("trick-dotdot-only", "is not a memory slug"),
    ("trick-with-suffix", "is not a memory slug"),
    ("trick-backslash", "is not a memory slug"),
    ("trick-nul", "is not a memory slug"),
    ("trick-empty", "is not a memory slug"),
    ("not-in-store", "is not in the store"),
    ("symlink-out", "resolves outside the memory directory"),
    ("fifo", "not a regular file"),
    ("no-file", "has no file in the memory directory"),
])
def test_get_memory_refuses_path_tricks_and_unknown_slugs(session, label, message):
    result = session["calls"][label]
    assert result.is_error is True
    assert message in text_of(result)
    assert "SECRET" not in text_of(result)
    assert "(fix: " in text_of(result)


@pytest.mark.parametrize("label, message", [
    ("route-missing-prompt", "prompt"),
    ("route-empty-prompt", "prompt must be a non-empty string"),
    ("route-prompt-list", "prompt"),
    ("search-limit-text", "limit"),
    ("search-limit-zero", "limit must be an integer from 1 to 50"),
    ("search-limit-huge", "limit must be an integer from 1 to 50"),
    ("get-slug-number", "slug"),
    ("feedback-missing-useful", "useful"),
    ("unknown-tool", "Unknown tool"),
])
def test_bad_arguments_are_tool_errors_naming_the_argument(session, label, message):
    result = session["calls"][label]
    assert result.is_error is True
    assert message in text_of(result)
    assert "Traceback" not in text_of(result)


def test_record_feedback_refuses_while_learning_is_off(session, store):
    result = session["calls"]["feedback-off"]
    assert result.is_error is True
    assert "learning is off" in text_of(result) and "learning = true" in text_of(result)
    assert not list(store["project"].glob("brain/*.learned.tsv"))


def test_the_cluster_index_is_a_resource(session, store):
    (resource,) = session["resources"]
    assert str(resource.uri) == mcp_server.INDEX_URI and resource.mime_type == "text/markdown"
    text = session["reads"][mcp_server.INDEX_URI]
    assert text.startswith("# Memory clusters: 26 clusters, 126 members")
    assert f"cluster file: {store['clusters']}" in text
    assert "- layer1_01 \u00b7 5 \u00b7 tags: windows, msys, powershell, crlf, defender" in text


def test_an_unknown_resource_is_an_error(session):
    assert isinstance(session["reads"]["memory-router://nothing-here"], Exception)


def test_the_server_writes_nothing_but_protocol_and_no_traceback(session):
    assert "Traceback" not in session["stderr"]


# --------------------------------------------------------------------------- a missing or broken store


@pytest.mark.parametrize("clusters, message", [
    ("no-such-clusters.md", "cannot read the cluster file"),
    ("broken.md", "no '## Layer 0 - Cluster Router' section"),
])
def test_a_missing_or_broken_store_is_a_tool_error_not_a_dead_server(store, mcp_session, clusters, message):
    (store["root"] / "broken.md").write_text("# not a cluster file\n", encoding="utf-8")
    path = store["root"] / clusters
    calls = [("route", "route", {"prompt": ROUTED_PROMPT}), ("search", "search_memory", {"query": "setx"}),
             ("get", "get_memory", {"slug": "env_bash_tool_env_var_caching"})]
    out = mcp_session(["mcp", "--clusters", path, "--memory-dir", store["memory"]], store["project"], store["home"],
                      calls=calls, read=[mcp_server.INDEX_URI])
    assert len(out["tools"]) == 4
    for label in ("route", "search", "get"):
        result = out["calls"][label]
        assert result.is_error is True, label
        assert message in text_of(result) and str(path) in text_of(result), label
    assert isinstance(out["reads"][mcp_server.INDEX_URI], Exception)


def test_the_server_rereads_the_cluster_file_when_it_changes(tmp_path):
    clusters = tmp_path / "clusters.md"
    shutil.copy(bundled_cluster_file(), clusters)
    store = MemoryStore(clusters)
    assert store.search("setx")["total_matches"] == 1
    text = clusters.read_text(encoding="utf-8").replace("setx", "regedit")
    clusters.write_text(text, encoding="utf-8")
    os.utime(clusters, ns=(1, 1))  # a different mtime even on a coarse clock
    assert store.search("setx")["total_matches"] == 0
    assert store.search("regedit")["total_matches"] == 1


# --------------------------------------------------------------------------- caps


def test_results_over_the_cap_are_cut_and_say_so(store, mcp_session):
    calls = [("search", "search_memory", {"query": "windows tidepool fernbrook ledger decision ci", "limit": 50}),
             ("route", "route", {"prompt": "windows msys powershell crlf defender tidepool wrangler d1 " * 40})]
    out = mcp_session(["mcp", "--max-result-chars", 2000, "--memory-dir", store["memory"]], store["project"],
                      store["home"], calls=calls, read=[mcp_server.INDEX_URI])
    search = out["calls"]["search"]
    assert search.is_error is False
    assert len(text_of(search)) <= 2000
    assert search.structured_content["truncated"]["results"]["of"] > search.structured_content["truncated"][
        "results"]["shown"]
    assert "--max-result-chars" in search.structured_content["truncated"]["note"]
    assert "(showing " in out["reads"][mcp_server.INDEX_URI] and len(out["reads"][mcp_server.INDEX_URI]) <= 2000


# --------------------------------------------------------------------------- feedback with learning on


def test_record_feedback_with_learning_on_writes_learned_terms_that_search_uses(tmp_path, mcp_session):
    project = tmp_path / "project"
    (project / "brain").mkdir(parents=True)
    shutil.copy(bundled_cluster_file(), project / "brain" / "memory-layer1-clusters.md")
    (project / "memory-router.toml").write_text("learning = true\nlearned_cap = 3\n", encoding="utf-8")
    prompt = "the invoice renderer stalls on nightly batches"
    calls = [
        ("before", "search_memory", {"query": "invoice renderer"}),
        ("useful", "record_feedback", {"prompt": prompt, "slug": "feedback_polars_not_pandas", "useful": True}),
        ("after", "search_memory", {"query": "invoice renderer"}),
        ("not-useful", "record_feedback", {"prompt": "renderer", "slug": "feedback_polars_not_pandas",
                                           "useful": False}),
        ("unknown-slug", "record_feedback", {"prompt": prompt, "slug": "no_such_memory", "useful": True}),
        ("path-slug", "record_feedback", {"prompt": prompt, "slug": "../x", "useful": True}),
    ]
    out = mcp_session(["mcp"], project, tmp_path, calls=calls)
    assert out["calls"]["before"].structured_content["total_matches"] == 0
    report = out["calls"]["useful"].structured_content
    assert report["added"] == ["invoice", "renderer", "stall"] and report["skipped"]["over_limit"] == [
        "nightly", "batche"]
    learned = project / "brain" / "memory-layer1-clusters.learned.tsv"
    assert report["path"] == str(learned)
    (top,) = [r for r in out["calls"]["after"].structured_content["results"]]
    assert top["slug"] == "feedback_polars_not_pandas" and top["learned_hits"] == ["invoice", "renderer"]
    assert out["calls"]["not-useful"].structured_content["removed"] == ["renderer"]
    assert "\trenderer\t" not in learned.read_text(encoding="utf-8")
    assert "\tinvoice\t" in learned.read_text(encoding="utf-8")
    assert "is not in the store" in text_of(out["calls"]["unknown-slug"])
    assert "is not a memory slug" in text_of(out["calls"]["path-slug"])


def test_record_feedback_never_writes_into_the_bundled_example_store(tmp_path):
    store = MemoryStore(bundled_cluster_file(), {"learning": True, "learned_cap": 24, "source": "x",
                                                 "settings": dict(__import__("router.config").config.DEFAULTS)},
                        bundled=True)
    with pytest.raises(RefusedError, match="bundled example store"):
        store.record_feedback("setx", "env_bash_tool_env_var_caching", True)


@pytest.mark.parametrize("useful", ["yes", 1, None])
def test_record_feedback_wants_a_real_boolean(tmp_path, useful):
    clusters = tmp_path / "c.md"
    shutil.copy(bundled_cluster_file(), clusters)
    from router.configcheck import validate_config

    store = MemoryStore(clusters, validate_config({"learning": True}, str(tmp_path / "memory-router.toml")))
    with pytest.raises(InputError, match="useful must be true or false"):
        store.record_feedback("setx", "env_bash_tool_env_var_caching", useful)


# --------------------------------------------------------------------------- the command


def test_mcp_without_the_sdk_says_which_extra_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    assert main(["mcp"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("memory-router: error: the MCP server needs the mcp package")
    # issue 29: the extra from where this memory-router came from (the package index has no release)
    from harness import installsource

    assert installsource.requirement(installsource.installed_source(), ("mcp",)) in err


@pytest.mark.parametrize("args, message", [
    (["mcp", "--max-result-chars", "10"], "--max-result-chars must be at least"),
    (["mcp", "--config", "missing.toml"], "cannot read config file"),
])
def test_bad_command_lines_exit_2_before_serving(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("query", ["windows", "setx bash tool", "tidepool wrangler d1 migrations", "ledger",
                                   "quirk", "polars duckdb windows ci", "nothing matches zzqx"])
def test_search_finds_exactly_what_a_scan_of_every_member_finds(tmp_path, query):
    from router.store.feedback import add_feedback
    from router.tokens import slug_words, tokenize

    clusters = tmp_path / "c.md"
    shutil.copy(bundled_cluster_file(), clusters)
    config = {"learning": True, "learned_cap": 24, "source": "t", "settings": dict(config_mod.DEFAULTS)}
    store = MemoryStore(clusters, config)
    index = store.context().index
    add_feedback(store.learned_path(), "quirk gremlin", "feedback_polars_not_pandas", True, index=index, cap=24)
    learned = store._learned_terms()
    tokens = tokenize(query)
    expected = set()
    for cluster in index.clusters:
        tags = set().union(*(tokenize(t) for t in cluster.tags))
        for member in cluster.members:
            own = tokens & ((slug_words(member.slug) | tokenize(member.hook)) - tags)
            if own or tokens & tags or tokens & learned.get(member.slug, frozenset()):
                expected.add(member.slug)
    found = store.search(query, mcp_server.SEARCH_MAX_LIMIT)
    assert len(expected) <= mcp_server.SEARCH_MAX_LIMIT  # so every match is listed and compared
    assert found["total_matches"] == len(expected)
    assert {r["slug"] for r in found["results"]} == expected


@pytest.mark.parametrize("text, cut, expected", [
    ("abc", 3, "abc"),
    ("ab\u00e9", 3, "ab"),          # é is 2 bytes: cut after its first
    ("ab\u00e9", 4, "ab\u00e9"),
    ("a\u20ac", 2, "a"),            # € is 3 bytes
    ("a\u20ac", 3, "a"),
    ("a\U0001f600", 4, "a"),        # 4-byte emoji cut after 3
    ("a\U0001f600", 5, "a\U0001f600"),
])
def test_a_cut_read_drops_only_a_partial_character(text, cut, expected):
    assert mcp_server._without_partial_char(text.encode("utf-8")[:cut]).decode("utf-8") == expected


@pytest.mark.parametrize("front, body_unit", [("", "\u00e9t\u00e9 \u20ac "), ("description: " + "d" * 5000 + "\n", "x")])
def test_get_memory_caps_non_ascii_and_long_front_matter(tmp_path, front, body_unit):
    clusters = tmp_path / "c.md"
    shutil.copy(bundled_cluster_file(), clusters)
    memory = tmp_path / "memory"
    memory.mkdir()
    slug = "env_git_autocrlf_false"
    (memory / f"{slug}.md").write_text(f"---\n{front}type: env\n---\n" + body_unit * 20_000, encoding="utf-8")
    store = MemoryStore(clusters, memory_dir=memory, max_result_chars=3000)
    got = store.get_memory(slug)
    assert json_size(got) <= 3000
    assert got["truncated"]["body"]["shown_chars"] == len(got["body"]) < len(body_unit * 20_000)
    assert (body_unit * 20_000).startswith(got["body"])
