"""MCP tool latency against a running server, as a ratio to the MCP round trip itself.

Starts the installed ``memory-router mcp`` (as a host does: a subprocess on stdio, driven by the
official SDK's ``stdio_client`` + ``ClientSession``) and, in the same run, a baseline server built
with the same SDK whose one tool does nothing (``noop``). Calls are interleaved: each round makes
one ``noop`` call, then one call of each memory-router tool, so both sides see the same machine.
Prints the median of N calls (default 100) of each tool, in milliseconds, and its ratio to the
no-op round trip; also the in-process ``route_prompt`` median, to show what is routing and what is
protocol. On the bundled example store and on a generated 10,000-member store.

    python benchmarks/mcp_latency.py [--calls 100] [--json]

Target: each tool's median within 2x the no-op round trip on the example store and 3x on the
10,000-member store (exit 1 otherwise). The first call of each tool (the store's first load) is
not counted: a host starts the server once per session.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from stores import generate_store  # noqa: E402

TARGETS = {"example": 2.0, "10k": 3.0}
PROMPT = "I set an env var with setx but the Bash tool still can't see it, why?"
SEARCH = "windows path setx bash"

NOOP_SERVER = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("noop", log_level="WARNING")

@server.tool()
def noop() -> dict:
    return {}

server.run("stdio")
"""


def memory_router_exe():
    found = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if found is None:
        sys.exit("memory-router is not installed in this environment (pip install -e '.[mcp]')")
    return found


def calls_for(store_name, index):
    """One call per tool, on the store's own words."""
    if store_name == "example":
        prompt, query, slug = PROMPT, SEARCH, "env_bash_tool_env_var_caching"
    else:
        member = index.clusters[len(index.clusters) // 2].members[0]
        prompt = query = " ".join(member.hook.split()[:6])
        slug = member.slug
    return {
        "route": {"prompt": prompt},
        "search_memory": {"query": query, "limit": 10},
        "get_memory": {"slug": slug},
        "record_feedback": {"prompt": prompt, "slug": slug, "useful": True},
    }


def in_process_route_ms(cluster_path, prompt, calls):
    from router.store.clusterfile import load_cluster_file
    from router.config import default_settings
    from router.routing.score import build_routing_table, route_prompt

    table = build_routing_table(load_cluster_file(cluster_path))
    settings = default_settings()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        route_prompt(prompt, table, settings)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(project, tool_calls, calls):
    """``{name: [ms, ...]}`` for the no-op baseline and every memory-router tool, interleaved."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"CLAUDE_PROJECT_DIR": project, "MEMORY_ROUTER_CACHE_DIR": os.path.join(project, ".cache")}
    ours = StdioServerParameters(command=memory_router_exe(), args=["mcp", "--memory-dir",
                                                                    os.path.join(project, "memory")],
                                 cwd=project, env=env)
    noop = StdioServerParameters(command=sys.executable, args=["-c", NOOP_SERVER], cwd=project)
    times = {name: [] for name in ["noop", *tool_calls]}

    async def timed(session, name, arguments):
        started = time.perf_counter()
        result = await session.call_tool(name, arguments)
        elapsed = (time.perf_counter() - started) * 1000
        if result.is_error:
            raise SystemExit(f"{name} failed: {result.content[0].text}")
        return elapsed

    async def run():
        with open(os.devnull, "w") as errlog:
            async with stdio_client(ours, errlog=errlog) as (r1, w1), stdio_client(noop, errlog=errlog) as (r2, w2):
                async with ClientSession(r1, w1) as server, ClientSession(r2, w2) as baseline:
                    await server.initialize()
                    await baseline.initialize()
                    for name, arguments in tool_calls.items():  # the first load is not counted
                        await timed(server, name, arguments)
                    await timed(baseline, "noop", {})
                    for _ in range(calls):
                        times["noop"].append(await timed(baseline, "noop", {}))
                        for name, arguments in tool_calls.items():
                            times[name].append(await timed(server, name, arguments))

    anyio.run(run)
    return times


def make_project(root, name, text):
    project = os.path.join(root, name)
    os.makedirs(os.path.join(project, "brain"))
    os.makedirs(os.path.join(project, "memory"))
    with open(os.path.join(project, "brain", "memory-layer1-clusters.md"), "w", encoding="utf-8") as handle:
        handle.write(text)
    with open(os.path.join(project, "memory-router.toml"), "w", encoding="utf-8") as handle:
        handle.write("learning = true\n")
    return project


def bench_store(root, name, text, calls):
    from router.store.clusterfile import load_cluster_file

    project = make_project(root, name, text)
    cluster_path = os.path.join(project, "brain", "memory-layer1-clusters.md")
    index = load_cluster_file(cluster_path)
    tool_calls = calls_for(name, index)
    slug = tool_calls["get_memory"]["slug"]
    with open(os.path.join(project, "memory", slug + ".md"), "w", encoding="utf-8") as handle:
        handle.write("---\ntype: env\n---\n" + "A memory body line.\n" * 40)
    times = measure(project, tool_calls, calls)
    result = summarise(times, TARGETS[name])
    result.update(store=name, members=len(index.members), clusters=len(index), calls=calls,
                  in_process_route_median_ms=round(in_process_route_ms(cluster_path, tool_calls["route"]["prompt"],
                                                                       calls), 3))
    return result


def summarise(times, target):
    """Medians and ratios to the ``noop`` baseline of ``{name: [ms, ...]}``; ``ok`` when every
    tool's ratio is within ``target``."""
    baseline = statistics.median(times["noop"])
    rows = {tool: {"median_ms": round(statistics.median(values), 3),
                   "ratio": round(statistics.median(values) / baseline, 2)} for tool, values in times.items()
            if tool != "noop"}
    return {"noop_median_ms": round(baseline, 3), "tools": rows, "target_ratio": target,
            "ok": all(row["ratio"] <= target for row in rows.values())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100, help="calls of each tool per store (default: 100)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    from router.config import bundled_cluster_file

    with open(bundled_cluster_file(), encoding="utf-8") as handle:
        example = handle.read()
    with tempfile.TemporaryDirectory(prefix="mcp-latency-") as root:
        results = [bench_store(root, "example", example, args.calls),
                   bench_store(root, "10k", generate_store(clusters=2000, members_per_cluster=5), args.calls)]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for result in results:
            print(f"{result['store']} store ({result['members']} members, {result['clusters']} clusters), "
                  f"median of {result['calls']} calls:")
            print(f"  no-op MCP tool (baseline)   {result['noop_median_ms']:8.2f} ms")
            print(f"  in-process route_prompt     {result['in_process_route_median_ms']:8.3f} ms")
            for tool, row in result["tools"].items():
                print(f"  {tool:<27} {row['median_ms']:8.2f} ms  {row['ratio']:5.2f}x baseline")
            print(f"  target <= {result['target_ratio']}x: {'met' if result['ok'] else 'MISSED'}")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
