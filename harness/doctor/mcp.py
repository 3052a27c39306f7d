"""Doctor's check of the MCP server a project's ``.mcp.json`` wires up: start it as Claude Code
would (in the project, ``CLAUDE_PROJECT_DIR`` set, the entry's ``${VAR}`` references expanded),
list its tools and route a neutral prompt.

Apart from ``harness.install.mcpjson`` because it runs the server instead of editing the file: it
needs the ``mcp`` client and a subprocess, and only ``memory-router doctor`` calls it."""

import os
import re
import time

from harness.install.extras import missing_extra
from harness.install.mcpjson import mcp_json_path, read_mcp_json, runs_our_server
from router.errors import InputError

DOCTOR_TIMEOUT_SECONDS = 30
PROBE_PROMPT = "memory-router doctor probe: please ignore"

_ENV_REF_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _expand(value, environ):
    """Claude Code's ``${VAR}`` and ``${VAR:-default}`` in .mcp.json strings."""
    return _ENV_REF_RE.sub(lambda m: environ.get(m.group(1), m.group(2) or ""), value)


def probe_server(entry, project_dir, timeout=DOCTOR_TIMEOUT_SECONDS):
    """Start the server an .mcp.json ``entry`` describes, as Claude Code would (in the project,
    with ``CLAUDE_PROJECT_DIR`` set), initialize, list its tools and route a neutral prompt.
    Returns ``{"ok", "message", "tools", "cluster_file", "seconds"}``."""
    import tempfile

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    environ = dict(os.environ, CLAUDE_PROJECT_DIR=project_dir)
    env = {"CLAUDE_PROJECT_DIR": project_dir}
    for key in ("MEMORY_ROUTER_CACHE_DIR", "MEMORY_ROUTER_CLUSTERS", "CLAUDE_CONFIG_DIR", "XDG_CACHE_HOME",
                "MEMORY_ROUTER_BIN"):  # the plugin's launcher honours MEMORY_ROUTER_BIN
        if key in os.environ:
            env[key] = os.environ[key]
    env.update({k: _expand(str(v), environ) for k, v in (entry.get("env") or {}).items()})
    params = StdioServerParameters(command=_expand(entry["command"], environ),
                                   args=[_expand(str(a), environ) for a in entry.get("args") or []],
                                   env=env, cwd=project_dir)
    found = {}

    async def scenario(errlog):
        with anyio.fail_after(timeout):
            async with stdio_client(params, errlog=errlog) as (read_stream, write_stream):
                async with ClientSession(read_stream, write_stream) as session:
                    await session.initialize()
                    found["tools"] = [tool.name for tool in (await session.list_tools()).tools]
                    if "route" in found["tools"]:
                        found["route"] = await session.call_tool("route", {"prompt": PROBE_PROMPT})

    started = time.perf_counter()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            anyio.run(scenario, errlog)
            error = None
        except Exception as err:  # the server did not start or answer: say what it printed
            error = err
        errlog.seek(0)
        stderr = errlog.read().strip()
    seconds = round(time.perf_counter() - started, 3)
    if error is not None:
        reason = "timed out after %d s" % timeout if isinstance(error, TimeoutError) else (
            f"{type(error).__name__}: {error}".strip())
        last = stderr.splitlines()[-1][:300] if stderr else ""
        return {"ok": False, "seconds": seconds, "tools": found.get("tools", []), "cluster_file": None,
                "message": f"did not start or answer ({reason})" + (f"; it printed: {last}" if last else "")}
    tools = found["tools"]
    from harness.mcp.store import TOOL_NAMES

    missing = [name for name in TOOL_NAMES if name not in tools]
    if missing:
        return {"ok": False, "seconds": seconds, "tools": tools, "cluster_file": None,
                "message": f"started, but lacks tool(s) {', '.join(missing)}; it lists {', '.join(tools) or 'none'}"}
    route = found["route"]
    if route.is_error:
        text = "".join(getattr(part, "text", "") for part in route.content)
        return {"ok": False, "seconds": seconds, "tools": tools, "cluster_file": None,
                "message": f"started with tools {', '.join(tools)}, but route failed: {text[:300]}"}
    cluster_file = (route.structured_content or {}).get("cluster_file")
    return {"ok": True, "seconds": seconds, "tools": tools, "cluster_file": cluster_file,
            "message": f"started in {seconds} s; tools {', '.join(tools)}; serves {cluster_file}"}


def plugin_checks(project_dir, plugins, run=True):
    """The MCP servers the enabled ``plugins`` (``harness.install.plugins.RouterPlugin``) start,
    trial-run as the ones in .mcp.json are: started as Claude Code starts a plugin's server,
    initialized, their tools listed, a neutral prompt routed."""
    from harness.install.plugins import mcp_entries

    checks = []
    for plugin in plugins:
        for key, entry in mcp_entries(plugin):
            where = f"the {plugin.where()} starts mcpServers.{key}"
            if not run:
                checks.append({"name": "mcp server", "status": "info", "message": f"{where} (not started)"})
                continue
            result = probe_server(entry, project_dir)
            checks.append({"name": "mcp server", "status": "pass" if result["ok"] else "fail",
                           "message": f"{where}: {result['message']}", "tools": result["tools"],
                           "seconds": result["seconds"], "cluster_file": result["cluster_file"], "plugin": plugin.plugin_id,
                           **({} if result["ok"] else {"fix": "memory-router plugin bootstrap (the plugin's environment, "
                                                              "with the mcp extra), then run memory-router doctor again"})})
    return checks


def doctor_checks(project_dir, run=True, plugins=()):
    """Doctor's checks of the MCP server in ``project_dir``/.mcp.json and of the one each enabled
    plugin in ``plugins`` starts (dicts with ``name``, ``status``, ``message``): none at all is
    ``info`` (the server is optional); each one there is started and must list every tool and
    route."""
    path = mcp_json_path(project_dir)
    name = "mcp server"
    from_plugins = plugin_checks(project_dir, [p for p in plugins if p.enabled and p.mcp_server], run)
    if not os.path.isfile(path):
        return from_plugins or [{"name": name, "status": "info",
                                 "message": f"no {path} (optional: memory-router install --mcp)"}]
    return from_plugins + _mcp_json_checks(project_dir, path, name, run)


def _mcp_json_checks(project_dir, path, name, run):
    try:
        _snap, doc = read_mcp_json(path)
    except InputError as err:
        return [{"name": name, "status": "fail", "message": str(err), "path": path,
                 "fix": "correct the JSON; Claude Code cannot load the project's MCP servers either"}]
    servers = doc.get("mcpServers") or {}
    ours = [(key, value) for key, value in servers.items() if runs_our_server(value)]
    if not ours:
        return [{"name": name, "status": "info",
                 "message": f"{path} has no server running memory-router mcp (optional: memory-router install --mcp)"}]
    checks = []
    if len(ours) > 1:
        checks.append({"name": name, "status": "fail", "message": f"{len(ours)} entries in {path} run memory-router "
                       f"mcp ({', '.join(k for k, _v in ours)}); the host would list every tool twice",
                       "fix": "keep one of them"})
    for key, entry in ours:
        if not run:
            checks.append({"name": name, "status": "info", "message": f"{path} mcpServers.{key} (not started)"})
            continue
        fix = missing_extra("mcp")
        if fix is not None:
            checks.append({"name": name, "status": "fail", "message": f"{path} mcpServers.{key} is wired, but the "
                           "mcp extra is not installed in this memory-router, so the server cannot start (nor can "
                           "doctor start it to check)", "fix": fix})
            continue
        result = probe_server(entry, project_dir)
        checks.append({"name": name, "status": "pass" if result["ok"] else "fail",
                       "message": f"mcpServers.{key}: {result['message']}", "tools": result["tools"],
                       "seconds": result["seconds"], "cluster_file": result["cluster_file"],
                       **({} if result["ok"] else {"fix": "run the entry's command by hand to see why; "
                                                         "memory-router install --mcp rewrites it"})})
    return checks
