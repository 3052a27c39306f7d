"""Token counts behind ``memory-router tokens report`` (the session model is in
``harness.tokens.sessionmodel``). Pure: counters take
their backend (the ``ctok`` module, an API call) as arguments; nothing here touches the network,
the file system or argv.

Every token figure carries how it was obtained:

- ``measured``: read from the ``usage`` of a real transcript (API-reported);
- ``api``: Anthropic's count_tokens endpoint;
- ``offline``: the ``ctok`` package, an offline reconstruction of Claude's counts;
- ``estimate``: ``ceil(UTF-8 bytes / 4)``, a rough rule that is only an estimate.
"""


# claude-code-formats.md §4.1: what Claude Code loads of MEMORY.md; one definition for the slim
# warnings, doctor, the checklist and this report.
import json
import os

from canaries.memoryindex import claude_code_loaded
from router.errors import InputError, MemoryRouterError

ESTIMATE_RULE = "ceil(UTF-8 bytes / 4)"

# claude-code-formats.md §2.4: Claude Code hands additionalContext to the model wrapped like this.
REMINDER_PREFIX = "<system-reminder>\nUserPromptSubmit hook additional context: "
REMINDER_SUFFIX = "\n</system-reminder>"



def estimate_tokens(text):
    """The documented estimate: one token per 4 bytes of UTF-8, rounded up (0 for empty text)."""
    return -(-len(text.encode("utf-8")) // 4)


class TokenCounter:
    """Counts tokens of text with one method; remembers counts of texts it has seen."""

    __slots__ = ("method", "detail", "count_fn", "_cache")

    def __init__(self, method, detail, count_fn):
        self.method = method
        self.detail = detail
        self.count_fn = count_fn
        self._cache = {}

    def __repr__(self):
        return f"TokenCounter({self.method!r}, {self.detail!r})"

    def count(self, text):
        if text not in self._cache:
            self._cache[text] = int(self.count_fn(text))
        return self._cache[text]


def estimate_counter():
    return TokenCounter("estimate", ESTIMATE_RULE, estimate_tokens)


CTOK_PAD = "\u27e8pad\u27e9"


def ctok_counter(ctok, version=None, package_version=None):
    """An ``offline`` counter over the ``ctok`` module (passed in, so tests can fake it).

    ``ctok.token_count(text[, version])`` counts one user message *including* its frame of
    ``⟨pad⟩`` tokens. The text's own tokens are the ``ctok.tokenize`` pieces that are not
    ``⟨pad⟩`` (ctok's README); a ctok without ``tokenize`` gets the frame measured once on the
    empty string and subtracted instead.
    """
    args = () if version is None else (version,)
    tokenize = getattr(ctok, "tokenize", None)
    if callable(tokenize):
        def count(text):
            return sum(1 for piece in tokenize(text, *args) if piece != CTOK_PAD) if text else 0
        how = "\u27e8pad\u27e9 frame tokens excluded"
    else:
        try:
            frame = int(ctok.token_count("", *args))
        except Exception:  # an implementation that rejects empty text: counts keep their frame
            frame = 0

        def count(text):
            return max(0, ctok.token_count(text, *args) - frame) if text else 0
        how = f"message frame of {frame} token(s) removed"
    family = version or "its default family"
    package_version = package_version or getattr(ctok, "__version__", None)
    name = f"ctok {package_version}" if package_version else "ctok"
    detail = f"{name} ({family}), {how}"
    return TokenCounter("offline", detail, count)


def api_counter(count_message, model):
    """An ``api`` counter over ``count_message(text) -> input_tokens`` for one user message.

    The endpoint counts a whole message (frame included) and rejects empty content, so the frame
    is taken as the count of a one-character message minus one token.
    """
    frame = max(0, int(count_message(".")) - 1)
    detail = f"count_tokens API, model {model}, message frame of {frame} token(s) removed"
    return TokenCounter("api", detail, lambda text: max(0, count_message(text) - frame) if text else 0)


# --------------------------------------------------------------------------- always-loaded


def loaded_portion(text):
    """What Claude Code actually loads of a MEMORY.md (``canaries.memoryindex.claude_code_loaded``: whole
    lines, at most 200, within 25,000 characters). Returns ``(loaded_text, truncated)``."""
    return claude_code_loaded(text)


def index_figures(text, counter):
    """Bytes, lines and tokens of an always-loaded index (tokens of the part Claude Code loads)."""
    loaded, truncated = loaded_portion(text)
    return {
        "bytes": len(text.encode("utf-8")),
        "lines": len(text.splitlines()),
        "loaded_bytes": len(loaded.encode("utf-8")),
        "loaded_lines": len(loaded.splitlines()),
        "truncated": truncated,
        "tokens": counter.count(loaded),
        "tokens_method": counter.method,
    }


def always_loaded(flat_text, slim_text, counter):
    flat = index_figures(flat_text, counter)
    slim = index_figures(slim_text, counter)
    saved_bytes = flat["loaded_bytes"] - slim["loaded_bytes"]
    return {
        "flat": flat,
        "slim": slim,
        "saved": {
            "bytes": saved_bytes,
            "lines": flat["loaded_lines"] - slim["loaded_lines"],
            "tokens": flat["tokens"] - slim["tokens"],
            "tokens_method": counter.method,
            "cut_percent": round(100.0 * saved_bytes / flat["loaded_bytes"], 1) if flat["loaded_bytes"] else 0.0,
        },
    }


# --------------------------------------------------------------------------- injections


def rendered_injection(additional_context):
    """The text the model receives for one injection (the hook's text in its system reminder)."""
    return REMINDER_PREFIX + additional_context + REMINDER_SUFFIX


def percentile(values, pct):
    """Nearest-rank percentile (always an observed value); ``None`` for no values. The one
    definition the canary metrics use too, so both reports agree."""
    from canaries.metrics import percentile_nearest_rank

    return percentile_nearest_rank(values, pct)


def distribution(values):
    """mean, p50, p95, max of ``values`` (zeros included) and the mean over the non-zero ones."""
    if not values:
        return {"mean": None, "p50": None, "p95": None, "max": None, "mean_when_injecting": None}
    nonzero = [v for v in values if v]
    return {
        "mean": round(sum(values) / len(values), 1),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values),
        "mean_when_injecting": round(sum(nonzero) / len(nonzero), 1) if nonzero else 0.0,
    }


def injection_sizes(decisions, counter):
    """Per-prompt sizes from ``route_prompt`` decisions: chars of the hook's additionalContext and
    tokens of the rendered reminder the model sees (0 and 0 when nothing is injected)."""
    rows = []
    for position, decision in enumerate(decisions):
        text = decision.get("additional_context")
        rows.append({
            "prompt_index": position,
            "routed": list(decision.get("routed") or ()),
            "chars": len(text) if text else 0,
            "tokens": counter.count(rendered_injection(text)) if text else 0,
        })
    return rows


def injection_summary(rows, tokens_method):
    chars = [row["chars"] for row in rows]
    tokens = [row["tokens"] for row in rows]
    injecting = sum(1 for c in chars if c)
    return {
        "prompts": len(rows),
        "injecting": injecting,
        "share_injecting": round(injecting / len(rows), 3) if rows else None,
        "chars": distribution(chars),
        "tokens": dict(distribution(tokens), method=tokens_method),
    }


# --------------------------------------------------------------------------- transcripts


def _usage_int(usage, key):
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def first_call_usage(entries):
    """The first main-thread API call of a session, from ``(line_number, entry)`` pairs.

    Assistant rows of one API response repeat while it streams (same ``message.id``, growing
    ``output_tokens``): rows are deduplicated by ``message.id`` and the last row wins. Sidechain
    (subagent) rows and ``<synthetic>`` rows are not API calls of this session. Returns ``None``
    when there is no call; otherwise the call's usage, its input total (input + cache creation +
    cache read) and how many rows were folded.
    """
    first_id = None
    first = None
    ids = set()
    rows = 0
    for line_number, entry in entries:
        if not isinstance(entry, dict) or entry.get("type") != "assistant" or entry.get("isSidechain") is True:
            continue
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("model") == "<synthetic>":
            continue
        usage = message.get("usage")
        if not isinstance(usage, dict):
            continue
        message_id = message.get("id") or entry.get("requestId") or f"line-{line_number}"
        rows += 1
        ids.add(message_id)
        if first_id is None:
            first_id = message_id
        if message_id == first_id:
            first = (line_number, entry, message, usage)
    if first is None:
        return None
    line_number, entry, message, usage = first
    figures = {key: _usage_int(usage, key) for key in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")}
    return {
        "message_id": first_id,
        "request_id": entry.get("requestId"),
        "model": message.get("model"),
        "line": line_number,
        **figures,
        "total_input_tokens": figures["input_tokens"] + figures["cache_creation_input_tokens"]
        + figures["cache_read_input_tokens"],
        "assistant_rows": rows,
        "api_calls": len(ids),
        "duplicate_rows_dropped": rows - len(ids),
        "method": "measured",
    }


def transcript_delta(before, after):
    """Measured change of the first call's input between two sessions (after minus before)."""
    if before is None or after is None:
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "total_input_tokens")
    delta = {key: after[key] - before[key] for key in keys}
    delta["method"] = "measured"
    return delta


# --------------------------------------------------------------------------- choosing a counter

COUNT_TOKENS_URL = "https://api.anthropic.com/v1/messages/count_tokens"
DEFAULT_API_MODEL = "claude-opus-5"


def import_ctok():
    """The ``ctok`` module, or ``None`` when it is not installed (it is optional, never required)."""
    import importlib

    try:
        return importlib.import_module("ctok")
    except ImportError:
        return None


def _distribution_version(name):
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def api_count_message(model, api_key, timeout=30.0):
    """``count(text) -> input_tokens`` of one user message, via Anthropic's count_tokens endpoint."""
    import urllib.error
    import urllib.request

    def count(text):
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": text}]}).encode("utf-8")
        request = urllib.request.Request(COUNT_TOKENS_URL, data=body, method="POST", headers={
            "x-api-key": api_key, "anthropic-version": "2023-06-01", "content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                data = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            detail = err.read()[:300].decode("utf-8", "replace")
            raise MemoryRouterError(f"count_tokens API answered HTTP {err.code}: {detail}",
                                    fix="check ANTHROPIC_API_KEY and --model, or use --tokenizer estimate") from None
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise MemoryRouterError(f"count_tokens API call failed: {err}",
                                    fix="check the network, or use --tokenizer offline / estimate") from None
        value = data.get("input_tokens") if isinstance(data, dict) else None
        if not isinstance(value, int):
            raise MemoryRouterError(f"count_tokens API answered without input_tokens: {str(data)[:200]}")
        return value

    return count


def ctok_install_command(python=None, version=None):
    """The command that adds ctok where this memory-router runs (``python``, default this
    interpreter). ctok's releases declare Python 3.12 or newer but run on 3.11, so on 3.11 the
    command says ``--ignore-requires-python`` (plain ``pip install ctok`` finds nothing there)."""
    import sys

    from harness import printedcommands

    python = python or sys.executable
    version = version or sys.version_info
    relax = ["--ignore-requires-python"] if tuple(version[:2]) < (3, 12) else []
    return printedcommands.command(python, "-m", "pip", "install", *relax, "ctok")


def make_counter(choice, model=DEFAULT_API_MODEL, ctok_version=None, environ=None):
    """The token counter for ``--tokenizer``: ``auto`` is ``offline`` when ctok is installed, else
    ``estimate``; ``api`` needs ANTHROPIC_API_KEY; ``offline`` needs ctok."""
    environ = os.environ if environ is None else environ
    if choice == "api":
        key = environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise InputError("--tokenizer api needs ANTHROPIC_API_KEY in the environment; nothing was sent",
                             fix="export ANTHROPIC_API_KEY, or use --tokenizer offline or estimate")
        return api_counter(api_count_message(model, key), model)
    if choice in ("offline", "auto"):
        ctok = import_ctok()
        if ctok is not None:
            return ctok_counter(ctok, ctok_version, _distribution_version("ctok"))
        if choice == "offline":
            raise InputError("--tokenizer offline needs the ctok package, which is not installed",
                             fix=f"{ctok_install_command()}, or use --tokenizer estimate")
    return estimate_counter()
