"""The behavioural checklist's pure checks and Markdown rendering."""

import types

import pytest

from canaries import memoryindex
from canaries.memoryindex import memory_index_facts
from harness.canary import checks as cl
from harness.install import settings as inst
from harness.slim import index as slim

SLUG = "env_cloudflare_workers_build_secret_vs_text"
HOOK = "a PUBLIC_ build-time variable set as a Secret is undefined in the Workers build: set its type to Text"

SLIM_TEXT = "\n".join([
    slim.INDEX_HEADER, "", slim.FORMAT_LINE, "", memoryindex.HOT_HEADING, "",
    "- env_bash_tool_env_var_caching \u2014 setx vars never reach the Bash tool",
    "", memoryindex.ROUTER_HEADING, "", slim.ROUTER_NOTE, "",
    "- layer1_project_memory_router (9) \u2014 behaviour, caching \u2014 memory router saga",
    "- layer1_20 (4) \u2014 secrets, vault \u2014 secrets handling",
]) + "\n"

CASE = types.SimpleNamespace(id="cloudflare-cold", fact=SLUG, expect_any=("Text", "Plaintext"),
                             forbid=("use a Secret",),
                             prompt="my PUBLIC_ env var is undefined in the Cloudflare Workers build, I set it as a "
                                    "Secret \u2014 why?")


def test_memory_index_facts_of_a_slim_index():
    facts = memory_index_facts(SLIM_TEXT, SLUG, HOOK)
    assert facts["slim"] and facts["has_hot_heading"] and facts["has_router_heading"]
    assert facts["hot_slugs"] == ["env_bash_tool_env_var_caching"]
    assert facts["router_clusters"] == ["layer1_project_memory_router", "layer1_20"]
    assert facts["slug_lines"] == [] and facts["hook_lines"] == [] and not facts["slug_in_hot_strip"]
    assert facts["lines"] == len(SLIM_TEXT.splitlines()) and facts["bytes"] == len(SLIM_TEXT.encode())


@pytest.mark.parametrize("extra, field", [
    (f"- {SLUG} \u2014 {HOOK}", "slug_lines"),
    ("- [Cloudflare](env_cloudflare_workers_build_secret_vs_text.md) \u2014 build vars", "slug_lines"),
    (f"- cf_note \u2014 {HOOK.upper()}", "hook_lines"),
])
def test_memory_index_facts_find_the_fact_anywhere(extra, field):
    facts = memory_index_facts(SLIM_TEXT + extra + "\n", SLUG, HOOK)
    assert facts[field] == [len(SLIM_TEXT.splitlines()) + 1]


def test_check_slim():
    assert cl.check_slim("/m/MEMORY.md", memory_index_facts(SLIM_TEXT, SLUG)).status == cl.MET
    flat = cl.check_slim("/m/MEMORY.md", memory_index_facts("# Memory Index\n- a \u2014 b\n", SLUG))
    assert flat.status == cl.NOT_MET and "slim render" in flat.evidence
    assert cl.check_slim("/m/MEMORY.md", None).status == cl.UNKNOWN


def test_check_not_hot():
    clean = memory_index_facts(SLIM_TEXT, SLUG, HOOK)
    assert cl.check_not_hot(SLUG, "/m", clean).status == cl.MET
    assert cl.check_not_hot(SLUG, "/m", clean, config_hot=(SLUG,)).status == cl.NOT_MET
    assert "hot: true" in cl.check_not_hot(SLUG, "/m", clean, flagged_hot=(SLUG,)).evidence
    leaky = memory_index_facts(SLIM_TEXT.replace("- env_bash_tool_env_var_caching", f"- {SLUG}"), SLUG)
    result = cl.check_not_hot(SLUG, "/m/MEMORY.md", leaky)
    assert result.status == cl.NOT_MET and "hot strip" in result.evidence and "/m/MEMORY.md:7" in result.evidence
    assert cl.check_not_hot(SLUG, "/m", None).status == cl.UNKNOWN


def test_check_routes():
    decision = {"lines": [{"cluster_id": "c", "slug": SLUG, "hook": HOOK}], "routed": ["c"], "top_score": 10,
                "floor": 3}
    met = cl.check_routes(SLUG, decision, "/c.md")
    assert met.status == cl.MET and HOOK in met.evidence
    miss = cl.check_routes(SLUG, dict(decision, lines=[], routed=[]), "/c.md")
    assert miss.status == cl.NOT_MET and "routes to nothing" in miss.evidence
    assert cl.check_routes(SLUG, None, "/c.md").status == cl.UNKNOWN


def test_check_hook_installed_and_enabled():
    entry = inst.Entry(0, 0, "mr hook # memory-router install", 5, True)
    assert cl.check_hook_installed([("project", "/p/s.json", entry)]).status == cl.MET
    assert cl.check_hook_installed([]).status == cl.NOT_MET
    assert cl.check_hook_installed([("project", "/p", entry)], ["project settings: bad JSON"]).status == cl.NOT_MET
    assert cl.check_hooks_enabled([]).status == cl.MET
    assert cl.check_hooks_enabled(["user (/h/s.json)"]).status == cl.NOT_MET


def test_check_no_repo_leak_and_load_limit():
    assert cl.check_no_repo_leak(SLUG, [], 12, False, "/p").status == cl.MET
    hits = [f"doc{i}.md" for i in range(7)]
    leak = cl.check_no_repo_leak(SLUG, hits, 12, False, "/p")
    assert leak.status == cl.NOT_MET and "and 2 more" in leak.evidence
    assert cl.check_no_repo_leak(SLUG, [], 20000, True, "/p").status == cl.UNKNOWN
    assert cl.check_no_repo_leak(SLUG, [], 0, False, None).status == cl.UNKNOWN
    big = memory_index_facts("x\n" * 201, SLUG)
    assert cl.check_load_limit("/m", big).status == cl.NOT_MET
    assert cl.check_load_limit("/m", memory_index_facts(SLIM_TEXT, SLUG)).status == cl.MET


def render(checks):
    return cl.render_checklist(CASE, checks, {"suite": "/s/spec.yaml", "project_dir": "/p", "memory_dir": "/m",
                                              "commands": cl.verdict_commands(CASE.id, "/p")})


def test_render_marks_each_state_and_quotes_the_prompt():
    checks = [cl.Check(cl.MET, "met one", "ev1"), cl.Check(cl.NOT_MET, "unmet one", "ev2"),
              cl.Check(cl.UNKNOWN, "unknown one")]
    text = render(checks)
    assert "- [x] met one \u2014 ev1" in text
    assert "- [ ] unmet one \u2014 **not met:** ev2" in text
    assert "- [?] unknown one" in text
    assert "```text\n" + CASE.prompt + "\n```" in text
    assert "`Text`, `Plaintext`" in text and "`use a Secret`" in text
    assert "**Not ready:**" in text
    assert text.count("- [ ] ") == 1 + len(cl.MANUAL_STEPS)


def test_render_ready_and_check_by_hand():
    assert "**Ready:**" in render([cl.Check(cl.MET, "a")])
    assert "**Check by hand:**" in render([cl.Check(cl.MET, "a"), cl.Check(cl.UNKNOWN, "b")])


def test_prompt_with_backticks_keeps_its_fence():
    case = types.SimpleNamespace(**{**vars(CASE), "prompt": "run ```rm``` here"})
    text = cl.render_checklist(case, [], {"commands": []})
    assert "````text\nrun ```rm``` here\n````" in text


def test_verdict_commands_quote_paths():
    lines = cl.verdict_commands("cloudflare-cold", "/my project", suite="/s/it's.yaml")
    assert lines[0] == "memory-router transcript locate --project '/my project'"
    assert "\"$(memory-router transcript locate --project '/my project')\"" in lines[1]
    assert "--case cloudflare-cold" in lines[1] and "--suite '/s/it'\"'\"'s.yaml'" in lines[1]
    assert lines[1].endswith("--record '/my project/.claude/memory-router/behavioural-canaries.jsonl'")


def test_summary_shape():
    summary = cl.checklist_summary(CASE, [cl.Check(cl.MET, "a", "e"), cl.Check(cl.NOT_MET, "b")])
    assert summary["ready"] is False and summary["case"] == CASE.id
    assert summary["preconditions"][1] == {"status": "not met", "text": "b", "evidence": ""}
    assert summary["manual_steps"] == list(cl.MANUAL_STEPS)
