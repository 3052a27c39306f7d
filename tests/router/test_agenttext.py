"""Issue 35 item 1: what can reach a model is rendered by ``router.agenttext`` alone, from member
lines, cluster ids and labels, never from the build-time files (utterances, near-misses, generic
negatives, learned terms).

Two proofs: a marker planted in every build-time file never comes back from any MCP tool, the
hook or session-start; and a walk of the code fails when anything but the owner builds an
agent-facing object (each check is shown failing on a planted violation)."""

import ast
import io
import json
import os
import shutil

import pytest

from router.config import bundled_cluster_file
from router.store.clusterfile import load_cluster_file

MARKER = "zqxmarker"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROUTED_PROMPT = "setx PATH never reaches the bash tool on windows"
SLUG = "env_bash_tool_env_var_caching"
STAMP = "2026-12-01T21:00:00Z"
# The example store vetoes this one (tests/harness/test_route.py): its nearest negative is planted below.
VETOED_PROMPT = "write me a tiny python LRU cache decorator with a TTL per entry"
PROMPTS = [ROUTED_PROMPT, "my env var set with setx is empty in the bash tool", "fix the typo in the readme",
           "why does the bash tool not see my environment variable", "write a haiku about autumn", VETOED_PROMPT]


def _append(path, rows):
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("".join(row + "\n" for row in rows))


@pytest.fixture
def marked(tmp_path, monkeypatch):
    """A project whose every build-time file carries MARKER: in good rows (utterances and
    near-misses worded like the routed prompt, so the veto weighs them; learned terms) and in bad
    rows (a slug and an engine no reader accepts, which an error message would quote)."""
    example = os.path.dirname(bundled_cluster_file())
    project = tmp_path / "project"
    brain = project / "brain"
    brain.mkdir(parents=True)
    for name in ("memory-layer1-clusters.md", "memory-layer1-clusters.utterances.tsv",
                 "memory-layer1-clusters.nearmisses.tsv"):
        shutil.copy(os.path.join(example, name), brain / name)
    clusters = brain / "memory-layer1-clusters.md"
    index = load_cluster_file(str(clusters))
    cluster_id = index.find_member(SLUG)[0].cluster_id
    _append(brain / "memory-layer1-clusters.utterances.tsv", [
        f"{SLUG}\t{MARKER} setx path bash tool windows\t-\thand\t-\t{STAMP}",
        f"{MARKER.upper()}_slug\tsetx path\t-\thand\t-\t{STAMP}",
        f"{SLUG}\tsetx bash\t-\t{MARKER.upper()}!\t-\t{STAMP}"])
    _append(brain / "memory-layer1-clusters.nearmisses.tsv", [
        f"{cluster_id}\t{MARKER} {ROUTED_PROMPT}\t-\thand\t-\t{STAMP}",
        f"{cluster_id}\t{MARKER} my env var set with setx is empty in the bash tool\t-\thand\t-\t{STAMP}",
        f"{cluster_id}\tsetx bash\t-\t{MARKER.upper()}!\t-\t{STAMP}"]
        + [f"{cluster.cluster_id}\t{MARKER} {VETOED_PROMPT}\t-\thand\t-\t{STAMP}" for cluster in index.clusters])
    learned = brain / "memory-layer1-clusters.learned.tsv"
    learned.write_text("added\tcluster_id\tslug\tterm\tsource\n"
                       + "".join(f"{STAMP}\t{cluster_id}\t{SLUG}\t{MARKER}{n}\thand\n" for n in "abc"),
                       encoding="utf-8")
    _append(learned, [f"{STAMP}\t{cluster_id}\t{MARKER.upper()}\tterm\thand"])
    (project / "memory-router.toml").write_text(
        'clusters = "brain/memory-layer1-clusters.md"\nlearning = true\nlearned_cap = 3\n', encoding="utf-8")
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / f"{SLUG}.md").write_text("---\ntype: env\n---\nsetx writes the registry only.\n", encoding="utf-8")
    from router.store import nearmisses

    generics = nearmisses.read_generic_negatives()
    monkeypatch.setattr(nearmisses, "read_generic_negatives",
                        lambda path=None: generics + (f"{MARKER} setx path bash tool windows",
                                                      f"{MARKER} {VETOED_PROMPT}"))
    monkeypatch.setenv("MEMORY_ROUTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.chdir(project)
    return {"project": project, "clusters": clusters, "memory": memory, "learned": learned}


def _clean(what, value):
    text = value if isinstance(value, str) else json.dumps(value)
    assert MARKER not in text.lower(), f"{what} carries build-time text: {text[:600]}"


def test_no_build_time_text_reaches_the_agent_through_mcp_the_hook_or_session_start(marked):
    from harness.mcp.store import MemoryStore
    from router.configfile import load_config
    from router.hooks.hook import run_hook, run_session_start

    config = load_config(str(marked["project"] / "memory-router.toml"))
    store = MemoryStore(str(marked["clusters"]), config, str(marked["memory"]), "test")
    for prompt in PROMPTS:
        _clean(f"route({prompt!r})", store.route(prompt))
        _clean(f"search_memory({prompt!r})", store.search(prompt, 50))
        out = io.StringIO()
        run_hook([], io.BytesIO(json.dumps({"prompt": prompt, "cwd": str(marked["project"]),
                                            "session_id": "s1"}).encode()), out)
        _clean("the hook", out.getvalue())
    _clean("get_memory", store.get_memory(SLUG))
    _clean("the cluster index", store.cluster_index())
    # A writer never drops a row it cannot read: the feedback is refused, and the refusal names the
    # bad row by place only (it becomes the tool error the agent reads).
    from router.agenttext import tool_error
    from router.errors import MemoryRouterError

    with pytest.raises(MemoryRouterError) as refused:
        store.record_feedback("setx registry broken", SLUG, True)
    assert ":5:" in tool_error(refused.value)
    _clean("the record_feedback error", tool_error(refused.value))
    text = marked["learned"].read_text(encoding="utf-8")
    marked["learned"].write_text(text[:text.rindex(STAMP)], encoding="utf-8")
    for words in ("setx registry broken", "bash environment variable registry", "setx reboot terminal"):
        # learned_cap 3: every feedback evicts a planted learned term
        _clean("record_feedback", store.record_feedback(words, SLUG, True))
    _clean("route after feedback", store.route(ROUTED_PROMPT))
    out = io.StringIO()
    run_session_start([], io.BytesIO(json.dumps({"session_id": "s1", "source": "compact"}).encode()), out)
    _clean("session-start", out.getvalue())
    # The planted rows are live: the veto weighed them, and a person at a terminal is shown them
    # (memory-router route), so their absence above is the owner's doing, not the test's.
    from harness.context import name_exemplars

    ctx = store.context()
    vetoes = [decision["veto"] for decision in (ctx.route(prompt) for prompt in PROMPTS) if decision.get("veto")]
    assert MARKER in json.dumps([name_exemplars(ctx, veto, with_text=True) for veto in vetoes])


def test_no_build_time_text_reaches_the_agent_through_the_real_server(marked, mcp_session):
    home = marked["project"].parent / "home"
    home.mkdir()
    calls = [("route", "route", {"prompt": ROUTED_PROMPT}),
             ("route2", "route", {"prompt": PROMPTS[1]}),
             ("route-vetoed", "route", {"prompt": VETOED_PROMPT}),
             ("search", "search_memory", {"query": "setx bash tool", "limit": 50}),
             ("feedback", "record_feedback", {"prompt": "setx registry broken", "slug": SLUG, "useful": True})]
    session = mcp_session(["mcp", "--memory-dir", marked["memory"]], marked["project"], home, calls=calls,
                          read=["memory-router://clusters"])
    for label, result in session["calls"].items():
        # the feedback is refused (a bad row in the learned file): its error is agent-facing too
        assert result.is_error is (label == "feedback"), (label, result.content)
        _clean(label, [getattr(part, "text", "") for part in result.content])
        _clean(label, result.structured_content)
    _clean("the cluster index", session["reads"]["memory-router://clusters"])


# --------------------------------------------------------------------------- the structural test

OWNER = "router/agenttext.py"
# The keys of the objects a hook prints that the client hands to the model (or shows the user).
AGENT_KEYS = {"hookSpecificOutput", "additionalContext", "permissionDecisionReason", "systemMessage"}
# The MCP tool logic: each tool method returns what the owner rendered.
MCP_STORE = "harness/mcp/store.py"
MCP_TOOLS = ("route", "search", "get_memory", "record_feedback", "cluster_index")
MCP_SERVER = "harness/mcp/server.py"


def _owner_names(tree):
    """Names this module imported from the owner (``from router.agenttext import x`` or the module)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "router.agenttext":
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "router" and any(
                a.name == "agenttext" for a in node.names):
            names.add("agenttext")
    return names


def _is_owner_call(node, names):
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in names
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "agenttext" \
        and "agenttext" in names


def _own_returns(func):
    """The ``return`` statements of ``func`` itself, not of the functions defined inside it."""
    todo = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def agent_output_violations(relpath, source):
    """``[(path:line, why)]``: where ``source`` builds agent-facing output outside the owner."""
    if relpath == OWNER:
        return []
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and key.value in AGENT_KEYS:
                    found.append((f"{relpath}:{key.lineno}", f"builds a {key.value!r} object"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            for keyword in node.keywords:
                if keyword.arg in AGENT_KEYS:
                    found.append((f"{relpath}:{node.lineno}", f"builds a {keyword.arg!r} object"))
    names = _owner_names(tree)
    if relpath == MCP_STORE:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "MemoryStore":
                for method in node.body:
                    if isinstance(method, ast.FunctionDef) and method.name in MCP_TOOLS:
                        for ret in _own_returns(method):
                            if not _is_owner_call(ret.value, names):
                                found.append((f"{relpath}:{ret.lineno}",
                                              f"MemoryStore.{method.name} returns what router.agenttext did not render"))
    if relpath == MCP_SERVER:
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name) \
                    and node.exc.func.id in ("ToolError", "ResourceError") \
                    and not all(_is_owner_call(arg, names) for arg in node.exc.args):
                found.append((f"{relpath}:{node.lineno}", f"an MCP {node.exc.func.id} carries text router.agenttext did "
                                                          "not render"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            decorated = any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                            and d.func.attr in ("tool", "resource") for d in node.decorator_list)
            if not decorated:
                continue
            for ret in _own_returns(node):
                value = ret.value
                ok = isinstance(value, ast.Call) and (
                    (isinstance(value.func, ast.Name) and value.func.id == "run" and value.args
                     and isinstance(value.args[0], ast.Attribute) and value.args[0].attr in MCP_TOOLS)
                    or (isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
                        and value.func.value.id == "store" and value.func.attr in MCP_TOOLS))
                if not ok:
                    found.append((f"{relpath}:{ret.lineno}", f"MCP tool {node.name} returns what no store tool made"))
    return found


def _code_files():
    for package in ("router", "harness", "transcripts", "canaries"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def test_only_the_owner_builds_what_reaches_a_model():
    violations = []
    for relpath, path in _code_files():
        with open(path, encoding="utf-8") as handle:
            violations += agent_output_violations(relpath, handle.read())
    assert violations == []


@pytest.mark.parametrize("relpath, source", [
    ("router/hooks/hook.py", "def f(text):\n    return {'hookSpecificOutput': {'additionalContext': text}}\n"),
    ("harness/sentinel/hook.py", "def f(text):\n    return dict(systemMessage=text)\n"),
    ("router/gate/gate.py", "def f(r):\n    return {'permissionDecisionReason': r}\n"),
    (MCP_STORE, "from router.agenttext import route_result\nclass MemoryStore:\n"
                "    def route(self, prompt):\n        return {'veto': self.explain(prompt)}\n"),
    (MCP_SERVER, "def build(server, store):\n    @server.tool()\n    def route(prompt):\n"
                 "        return store.explain_veto(prompt)\n"),
    (MCP_SERVER, "from router.agenttext import tool_error\ndef run(call):\n    try:\n        return call()\n"
                 "    except Exception as err:\n        raise ToolError(str(err)) from None\n"),
])
def test_the_walk_fails_on_a_planted_violation(relpath, source):
    assert agent_output_violations(relpath, source)


def test_the_walk_passes_the_owners_own_calls():
    source = ("from router.agenttext import route_result\nclass MemoryStore:\n"
              "    def route(self, prompt):\n        return route_result(self.decide(prompt))\n")
    assert agent_output_violations(MCP_STORE, source) == []
