"""Engines: who answers an enrichment request (docs/enrich.md). A small registry, like simonw/llm's
model plugins: three built in, more from the ``memory_router.engines`` entry point group.

- ``command``: any program. One JSON request on stdin, one JSON answer on stdout; a non-zero exit,
  a timeout, or output that is not one JSON value is that cluster's error (exit 75, EX_TEMPFAIL,
  means "try again": the cluster is retried with backoff).
- ``claude``: the user's own Claude Code CLI, headless (``CLAUDE_FLAGS``, each proved against the
  real 2.1.328 client in tests/harness/clusters/test_engines_realclient.py).
- ``anthropic``: the official Anthropic Python SDK (the ``enrich`` extra), ``ANTHROPIC_API_KEY``
  and ``ANTHROPIC_BASE_URL`` honoured, the answer's shape given as a tool the model must call.

An engine returns the answer as parsed JSON, unchecked: ``harness.clusters.enrich_answers``
decides what of it is kept. It raises ``EngineError`` for one cluster's failure (``transient``:
worth retrying; ``fatal``: no other cluster can succeed either, such as a missing program or a
refused login or key; ``unreachable``: no answer at all, a connection failure or a timeout) and
``EngineUnavailable`` (exit 2) before any request when it cannot run at all.
``harness.clusters.engine_process.StopPolicy`` decides from these when a run stops.

Timeouts fit the answer: without ``--timeout``, a request may take ``Engine.timeout_for`` seconds,
a start-up allowance plus its expected answer (``answer_tokens``) at a rate well under what a
small model streams (docs/enrich.md, "Timeouts", says how they were chosen).
"""

import json
import os
import shlex
import shutil
import tempfile

from harness.clusters.enrich_answers import AnswerError, answer_tool_schema, parse_answer_text
from harness.clusters.enrich_protocol import SYSTEM_PROMPT, prompt_text
from harness.clusters.engine_process import UNREACHABLE_FIX, EngineError, one_line, run_program
from router.errors import InputError

ENTRY_POINT_GROUP = "memory_router.engines"
TEMPFAIL_EXIT = 75
NOPERM_EXIT = 77               # EX_NOPERM: the program's model refused its credentials; stops the run

# An answer's size: a short line plus its JSON quoting per utterance, the slug key and brackets per
# memory (the estimate's output tokens and the timeouts both read it).
CHARS_PER_UTTERANCE = 70
CHARS_PER_MEMORY = 40


def answer_tokens(request):
    """The tokens expected in the answer to ``request``: one per 4 bytes, rounded up."""
    memories = len(request.get("memories") or ())
    per = int(request.get("per_memory") or 0)
    return -(-(memories * (CHARS_PER_MEMORY + per * CHARS_PER_UTTERANCE) + 40) // 4)


class EngineUnavailable(InputError):
    """The engine cannot run at all (no program, no SDK, no key): nothing was sent."""


# --------------------------------------------------------------------------- the engines


class Engine:
    """One engine, built once per run. ``model`` is what the user chose (``None``: the default)."""

    name = ""
    default_model = "-"
    overhead_tokens = 0            # what the engine adds to each request, for the estimate
    # Without --timeout: start-up allowance + the expected answer at this rate (docs/enrich.md,
    # "Timeouts"). A hosted small model streams 100+ tokens/s; 20 leaves it five times as long.
    start_seconds = 30.0
    tokens_per_second = 20.0

    def __init__(self, model=None, command=None, timeout=None, env=None):
        self.model = model or self.default_model
        self.command = command
        self.timeout = float(timeout) if timeout else None     # None: fitted to each request
        self.env = env

    def timeout_for(self, request):
        """Seconds ``request`` may take: ``--timeout`` if given, else fitted to its answer."""
        if self.timeout is not None:
            return self.timeout
        return round(self.start_seconds + answer_tokens(request) / self.tokens_per_second)

    def describe(self):
        return f"{self.name} ({self.model})"

    def check(self):
        """Raise ``EngineUnavailable`` when the engine cannot run at all."""

    def ask(self, request):
        raise NotImplementedError

    def close(self):
        pass


class CommandEngine(Engine):
    """Any program: ``--command 'PROGRAM ARGS'`` (or ``enrich_command``), split like a shell line."""

    name = "command"
    # Any program, often a local model on a CPU (ollama's 8B models stream 5 to 10 tokens/s there).
    start_seconds = 60.0
    tokens_per_second = 5.0

    def argv(self):
        return shlex.split(self.command or "")

    def describe(self):
        return f"command `{self.command}`" + (f" ({self.model})" if self.model != "-" else "")

    def check(self):
        if not self.command or not self.command.strip():
            raise EngineUnavailable("the command engine needs a program",
                                    fix="pass --command 'PROGRAM ARGS' or set enrich_command in memory-router.toml")
        try:
            argv = self.argv()
        except ValueError as err:
            raise EngineUnavailable(f"cannot split --command: {err}",
                                    fix="quote it like a shell command line") from None
        if shutil.which(argv[0]) is None and not os.path.isfile(argv[0]):
            raise EngineUnavailable(f"program {argv[0]!r} not found", fix="pass its path, or put it on PATH")

    def ask(self, request):
        env = dict(os.environ if self.env is None else self.env)
        if self.model != "-":
            env["MEMORY_ROUTER_ENRICH_MODEL"] = self.model
        data = json.dumps(request, ensure_ascii=False).encode("utf-8")
        code, out, err = run_program(self.argv(), data, self.timeout_for(request), env=env)
        if code == TEMPFAIL_EXIT:
            raise EngineError(f"the program asks to try again (exit 75): {one_line(err) or 'no message'}",
                              transient=True)
        if code == NOPERM_EXIT:
            raise EngineError(f"the program was refused its credentials (exit 77): {one_line(err) or 'no message'}",
                              fatal=True, fix="fix the program's key or login, then run the command again")
        if code != 0:
            why = f"killed by signal {-code}" if code < 0 else f"exit {code}"
            raise EngineError(f"the program failed ({why}): {one_line(err) or 'no message on stderr'}")
        try:
            return parse_answer_text(out)
        except AnswerError as error:
            raise EngineError(f"protocol broken: {error}") from None


# Each flag keeps one thing of the user's setup out of the call (proved in the lab, one test each):
CLAUDE_FLAGS = (
    "-p", "--output-format", "json",
    "--tools", "",                   # no built-in tools in the request
    "--strict-mcp-config",           # MCP servers only from --mcp-config, which is not given: none start
    "--safe-mode",                   # no hooks (ours above all), CLAUDE.md, skills, plugins, MCP; auth works
    "--no-session-persistence",      # no transcript under ~/.claude/projects
)
# Variables a Claude Code session sets for its children: a nested client must not think it is one.
CLAUDE_SESSION_VARIABLES = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SSE_PORT")
TRANSIENT_STATUSES = frozenset((408, 409, 429, 500, 502, 503, 504, 529))
REFUSED_STATUSES = frozenset((401, 403))
# What the claude CLI answers, with no HTTP status, when it has no usable login (2.1.328 prints
# "Not logged in · Please run /login" in ``result``, ``api_error_status`` null, exit 1).
CLAUDE_LOGIN_REFUSED = ("not logged in", "please run /login", "invalid api key", "oauth token has expired",
                        "oauth token revoked", "authentication_error")
CLAUDE_LOGIN_FIX = "log the CLI in (run `claude`, then /login) or set ANTHROPIC_API_KEY; then run the command again"
CLAUDE_UNREACHABLE_FIX = "check that `claude -p hello` answers from this shell (network, proxy, " \
                         "ANTHROPIC_BASE_URL), or pass --timeout S for a slow model; then run the command again"


class ClaudeEngine(Engine):
    """The user's Claude Code CLI, headless: ``claude CLAUDE_FLAGS --model M --system-prompt S``,
    the request on stdin, run in a fresh empty directory. ``command``: the client's path (default:
    ``$MEMORY_ROUTER_CLAUDE``, else ``claude`` on PATH)."""

    name = "claude"
    default_model = "haiku"
    overhead_tokens = 700         # the client's own system text and environment block

    def program(self):
        env = os.environ if self.env is None else self.env
        explicit = self.command or env.get("MEMORY_ROUTER_CLAUDE")
        return explicit or shutil.which("claude", path=env.get("PATH")) or "claude"

    def argv(self):
        return [self.program(), *CLAUDE_FLAGS, "--model", self.model, "--system-prompt", SYSTEM_PROMPT]

    def describe(self):
        return f"claude ({self.model}) via {self.program()}"

    def check(self):
        program = self.program()
        if shutil.which(program) is None and not os.path.isfile(program):
            raise EngineUnavailable("Claude Code's CLI (claude) was not found",
                                    fix="install Claude Code, pass --command PATH-TO-CLAUDE, or use --engine anthropic")

    def environment(self):
        env = dict(os.environ if self.env is None else self.env)
        for name in CLAUDE_SESSION_VARIABLES:
            env.pop(name, None)
        env.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        return env

    def ask(self, request):
        data = prompt_text(request).encode("utf-8")
        with tempfile.TemporaryDirectory(prefix="memory-router-enrich-") as cwd:
            try:
                code, out, err = run_program(self.argv(), data, self.timeout_for(request), env=self.environment(),
                                             cwd=cwd)
            except EngineError as error:
                # the client retries an unreachable API by itself, silently, until it is killed
                if error.unreachable:
                    error.fix = CLAUDE_UNREACHABLE_FIX
                raise
        try:
            result = json.loads(out.decode("utf-8", "replace")) if out.strip() else None
        except ValueError:
            result = None
        if not isinstance(result, dict):
            said = one_line(err) or one_line(out.decode("utf-8", "replace")) or "no message"
            raise EngineError(f"claude exited {code} without a result: {said}", transient=code != 0)
        if result.get("is_error") or code != 0:
            status = result.get("api_error_status")
            message = one_line(str(result.get("result") or result.get("subtype") or "")) or f"exit {code}"
            refused = status in REFUSED_STATUSES or any(sign in message.lower() for sign in CLAUDE_LOGIN_REFUSED)
            raise EngineError(f"claude reported an error{f' (HTTP {status})' if status else ''}: {message}",
                              transient=status in TRANSIENT_STATUSES and not refused, fatal=refused,
                              fix=CLAUDE_LOGIN_FIX if refused else None)
        try:
            return parse_answer_text(str(result.get("result") or ""))
        except AnswerError as error:
            raise EngineError(f"protocol broken: {error}") from None


class AnthropicEngine(Engine):
    """The Anthropic Messages API through the official SDK (memory-router's ``enrich`` extra)."""

    name = "anthropic"
    default_model = "claude-haiku-5-5"
    overhead_tokens = 200         # the tool carrying the answer's schema
    start_seconds = 20.0          # no client to start: the API's time to first token, with room
    TOOL = "record_answer"

    def __init__(self, model=None, command=None, timeout=None, env=None):
        super().__init__(model, command, timeout, env)
        self._client = None

    def check(self):
        try:
            import anthropic  # noqa: F401
        except ImportError:
            import sys

            from harness import installsource

            raise EngineUnavailable("the anthropic engine needs the Anthropic SDK",
                                    fix=installsource.extra_hint("enrich", installsource.installed_source(),
                                                                 sys.executable) + " (or pip install anthropic)") from None
        env = os.environ if self.env is None else self.env
        if not (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")):
            raise EngineUnavailable("ANTHROPIC_API_KEY is not set",
                                    fix="export ANTHROPIC_API_KEY=..., or use --engine claude")

    def client(self):
        if self._client is None:
            import anthropic

            env = os.environ if self.env is None else self.env
            self._client = anthropic.Anthropic(api_key=env.get("ANTHROPIC_API_KEY"),
                                               auth_token=env.get("ANTHROPIC_AUTH_TOKEN"),
                                               base_url=env.get("ANTHROPIC_BASE_URL") or None,
                                               max_retries=0, timeout=self.timeout or 600.0)
        return self._client

    def ask(self, request):
        import anthropic

        members = len(request.get("memories") or ())
        max_tokens = min(16000, 512 + members * int(request.get("per_memory") or 6) * 48)
        tool = {"name": self.TOOL, "description": "Record the answer to the request.",
                "input_schema": answer_tool_schema(request)}
        try:
            message = self.client().messages.create(
                model=self.model, max_tokens=max_tokens, system=SYSTEM_PROMPT, tools=[tool],
                tool_choice={"type": "tool", "name": self.TOOL},
                messages=[{"role": "user", "content": prompt_text(request)}], timeout=self.timeout_for(request))
        except anthropic.APIStatusError as err:
            status = getattr(err, "status_code", None)
            after = _retry_after(getattr(err, "response", None))
            refused = status in REFUSED_STATUSES
            raise EngineError(f"the API answered HTTP {status}: {one_line(str(getattr(err, 'message', err)))}",
                              transient=status in TRANSIENT_STATUSES, fatal=refused, retry_after=after,
                              fix="check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN): the API refused it; "
                                  "then run the command again" if refused else None) from None
        except anthropic.APITimeoutError as err:
            # not retried: a model this slow will be as slow again; the run stops after two in a row
            raise EngineError(f"no answer within {self.timeout_for(request):g} s: {one_line(str(err))}",
                              unreachable=True, fix=UNREACHABLE_FIX) from None
        except anthropic.APIConnectionError as err:
            raise EngineError(f"cannot reach the API: {one_line(str(err))}", transient=True, unreachable=True,
                              fix=UNREACHABLE_FIX) from None
        except anthropic.AnthropicError as err:
            raise EngineError(f"the SDK failed: {one_line(str(err))}") from None
        for block in message.content or ():
            if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == self.TOOL:
                return block.input
        text = "".join(getattr(b, "text", "") for b in message.content or () if getattr(b, "type", None) == "text")
        try:
            return parse_answer_text(text)
        except AnswerError as error:
            raise EngineError(f"protocol broken: the model did not call {self.TOOL} and {error}") from None


def _retry_after(response):
    try:
        return min(60.0, float(response.headers.get("retry-after")))
    except (AttributeError, TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- the registry

BUILTIN_ENGINES = {"claude": ClaudeEngine, "anthropic": AnthropicEngine, "command": CommandEngine}


def _entry_points():
    from importlib.metadata import entry_points

    try:
        return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    except Exception:  # a broken installed distribution must not stop the built-in engines
        return {}


def engine_names():
    return sorted(set(BUILTIN_ENGINES) | set(_entry_points()))


def create_engine(name, model=None, command=None, timeout=None, env=None):
    """The engine called ``name``: built in, else a plugin's (an ``Engine`` subclass, or a factory
    taking the same keyword arguments). Unknown names are an ``EngineUnavailable``."""
    factory = BUILTIN_ENGINES.get(name)
    if factory is None:
        found = _entry_points().get(name)
        if found is None:
            raise EngineUnavailable(f"unknown engine {name!r}", fix=f"use one of {', '.join(engine_names())}")
        try:
            factory = found.load()
        except Exception as err:
            raise EngineUnavailable(f"the engine plugin {name!r} cannot be loaded: {one_line(str(err))}",
                                    fix=f"reinstall the package providing it ({found.value})") from None
    return factory(model=model, command=command, timeout=timeout, env=env)
