"""A tool result cut to fit a host's output cap, saying what was cut: the MCP server's results
(``harness.mcp.store``) must stay under ``--max-result-chars`` or Claude Code warns and truncates
them mid-JSON.

Apart from the server because it knows nothing of memories: it measures a JSON value as the SDK
sends it and shortens lists by bisection."""

import json


def json_size(value):
    """Characters of ``value`` as the SDK sends it: a structured result goes out as indented JSON
    text too (pydantic_core, as mcp does; the standard library's indenting encoder is pure Python
    and cost 8 ms per route on a 10,000-member store)."""
    try:
        import pydantic_core
    except ImportError:  # MemoryStore used without the mcp extra
        return len(json.dumps(value, indent=2, ensure_ascii=False))
    return len(pydantic_core.to_json(value, fallback=str, indent=2).decode())


def cap_lists(result, keys, max_chars):
    """``result`` with the lists under ``keys`` shortened from the end (first key first) until
    its JSON fits ``max_chars``; a ``truncated`` entry says what was cut, from how many."""
    if json_size(result) <= max_chars:
        return result
    note = f"cut to fit the server's result cap of {max_chars} characters (memory-router mcp --max-result-chars)"
    result = dict(result)
    truncated = {}
    for key in keys:
        items = result.get(key)
        if not isinstance(items, list) or not items:
            continue
        total = len(items)

        def trial(count):
            return dict(result, **{key: items[:count]},
                        truncated=dict(truncated, **{key: {"shown": count, "of": total}}, note=note))

        low, high = 0, total
        while low < high:  # the longest prefix that fits, by bisection
            mid = (low + high + 1) // 2
            if json_size(trial(mid)) <= max_chars:
                low = mid
            else:
                high = mid - 1
        result = trial(low)
        truncated = {k: v for k, v in result["truncated"].items() if k != "note"}
        if json_size(result) <= max_chars:
            break
    return result
