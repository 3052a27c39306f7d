"""A custom provider (``package.module:factory``) run in a child interpreter, so it cannot touch
the hook's stdout, exit status or time budget (issue 24).

In the hook's own process a provider could hold the GIL in one long C call (a catastrophic
regex: no thread-based budget can interrupt it), ``print()`` onto the JSON the hook writes, or
``os._exit(2)`` the hook (Claude Code then erases the prompt). Here it runs in
``sys.executable -P`` (``-P``: the user's current directory is not on ``sys.path``, so a file
there cannot shadow a module) with pipes of its own; the built-ins (``spec``, ``weighted``,
``null``) stay in-process and never import this module.

The protocol, one exchange per prompt:

- request, on the child's stdin: ``marshal`` bytes of ``(name, request, budget_s)``. Marshal, not JSON:
  parent and child are the same interpreter, it keeps the table's tuples tuples (the provider
  contract's shape), and it is several times faster to write and read. The request's ``table``
  holds ``clusters`` only (the built-ins' postings stay in the hook: materialising them from the
  sharded cache would cost more than the budget on a large store).
- answer, on the child's stdout: one line of ASCII JSON, ``{"decision": ...}`` or
  ``{"error": "..."}``, read up to its newline (a child the provider forked may hold the pipe
  open for as long as it lives; the hook does not wait for the pipe's end) and at most
  ``MAX_ANSWER_BYTES``. The child writes it on a copy of its stdout; its fd 1 is pointed at the
  null device first, so what the provider prints goes nowhere.
- stderr: the null device. A traceback the provider causes is reported in the answer instead.

The budget (``provider_timeout_ms``) runs from the child's start to its answer: interpreter
start-up, import, factory and call. At the budget, or once the answer is read, the child's
whole process group is killed (a forked grandchild with it), so nothing the provider started
outlives the prompt. Should the hook itself be killed first (Claude Code's own timeout), the
child ends anyway: it arms a timer of its budget plus ``ORPHAN_SLACK_S`` whose signal's default
action ends the process even inside a C call. Any failure raises ``ProviderError``; ``router.providers.provider.route`` turns that
into silence and one log line.

Standard library only. ``subprocess`` and ``selectors`` are imported only when a custom provider
runs; the hook with a built-in provider never imports this module.
"""

import json
import os
import sys

from router.providername import ProviderError, parse_provider_name

MAX_ANSWER_BYTES = 4 * 1024 * 1024
# A child whose hook is gone ends this long after its budget (SIGALRM, default action: terminate).
ORPHAN_SLACK_S = 1.0
_CHUNK = 64 * 1024
_CHILD_CODE = "from router.providers.providerproc import child_main; child_main()"


# --------------------------------------------------------------------------- loading (in the child)


def load_custom_factory(name):
    """The factory named ``package.module:factory``; ``ProviderError`` for a malformed name, a
    module that does not import (whatever it raises while importing, ``SystemExit`` included) or
    a missing or non-callable attribute."""
    module_name, attribute = parse_provider_name(name)
    import importlib

    try:
        module = importlib.import_module(module_name)
    except BaseException as err:  # noqa: BLE001 - a provider's import must not take its caller down
        if isinstance(err, KeyboardInterrupt):
            raise
        raise ProviderError(f"provider {name}: import failed: {type(err).__name__}: {err}") from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ProviderError(f"provider {name}: {module_name} has no callable {attribute!r}")
    return factory


def _decide(name, request):
    provider = load_custom_factory(name)(request["settings"])
    if not callable(provider):
        raise ProviderError(f"provider {name}: the factory returned {type(provider).__name__}, not a callable")
    return provider(request)


def _answer_bytes(name, request):
    try:
        decision = _decide(name, request)
        try:
            return json.dumps({"decision": decision}).encode("ascii")
        except (TypeError, ValueError) as err:
            raise ProviderError(f"provider {name}: its decision is not JSON ({err})") from None
    except ProviderError as err:
        message = str(err)
    except BaseException as err:  # noqa: BLE001 - reported to the hook, which stays silent
        message = f"provider {name} raised {type(err).__name__}: {err}"
    return json.dumps({"error": message}).encode("ascii")


def child_main():
    """The child's entry point: read the request, answer one line, exit 0 without clean-up (a
    provider's threads or atexit handlers must not hold the answer back)."""
    answer_fd = os.dup(1)                    # not inheritable: a program the provider runs lacks it
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)                         # print() and os.write(1, ...) go nowhere
    os.close(null)
    try:
        import marshal

        name, request, budget_s = marshal.loads(sys.stdin.buffer.read())
        if hasattr(os, "fork"):   # POSIX: setitimer and SIGALRM exist
            import signal

            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_REAL, budget_s + ORPHAN_SLACK_S)
        data = _answer_bytes(name, request)
    except BaseException as err:  # noqa: BLE001 - a damaged request still gets an answer
        data = json.dumps({"error": f"provider child: bad request ({type(err).__name__}: {err})"}).encode("ascii")
    data += b"\n"
    while data:
        data = data[os.write(answer_fd, data):]
    os._exit(0)


# --------------------------------------------------------------------------- running (in the hook)


def child_request(request):
    """``request`` as the child receives it: the table cut to its clusters (read whole from a
    sharded cache view), paths as strings."""
    clusters = request["table"]["clusters"]
    sent = dict(request, table={"clusters": tuple(clusters[i] for i in range(len(clusters)))})
    if sent.get("cluster_file") is not None:
        sent["cluster_file"] = os.fspath(sent["cluster_file"])
    return sent


def run_provider(name, request, budget_s, python=None):
    """The decision (parsed JSON, unchecked) of custom provider ``name`` for ``request``, run in a
    child interpreter killed at ``budget_s`` seconds; ``ProviderError`` for every failure."""
    import marshal
    import subprocess
    import time

    deadline = time.monotonic() + budget_s
    try:
        payload = marshal.dumps((name, child_request(request), float(budget_s)))
    except ValueError as err:
        raise ProviderError(f"provider {name}: the request cannot be sent to it ({err})") from None
    posix = os.name != "nt"
    try:
        child = subprocess.Popen([python or sys.executable, "-P", "-c", _CHILD_CODE], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
                                 start_new_session=posix)
    except OSError as err:
        raise ProviderError(f"provider {name}: its interpreter did not start ({err})") from None
    try:
        line = (_exchange if posix else _exchange_windows)(child, payload, deadline)
        if line is None:
            raise ProviderError(f"provider {name} took longer than its budget of {budget_s * 1000:.0f} ms")
    finally:
        status = _end(child, posix)
    if not line:
        why = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        raise ProviderError(f"provider {name}: its process {why} before answering")
    return _parse_answer(name, line)


def _parse_answer(name, line):
    try:
        answer = json.loads(line)
    except ValueError:
        raise ProviderError(f"provider {name}: its answer is not JSON") from None
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        raise ProviderError(answer["error"][:2000])
    if not isinstance(answer, dict) or "decision" not in answer:
        raise ProviderError(f"provider {name}: its answer has no decision")
    return answer["decision"]


def _exchange(child, payload, deadline):
    """Write ``payload``, read up to the first newline. Returns the answer line, ``b""`` if the
    child closed its output first, ``None`` at the deadline."""
    import selectors
    import time

    request_fd, answer_fd = child.stdin.fileno(), child.stdout.fileno()
    os.set_blocking(request_fd, False)
    view = memoryview(payload)
    read = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(request_fd, selectors.EVENT_WRITE)
        selector.register(answer_fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for key, _events in selector.select(left):
                if key.fd == request_fd:
                    try:
                        view = view[os.write(request_fd, view[:_CHUNK]):]
                    except BlockingIOError:
                        continue
                    except OSError:   # the child is gone; its exit status says why
                        view = view[:0]
                    if not view:
                        selector.unregister(request_fd)
                        child.stdin.close()
                    continue
                chunk = os.read(answer_fd, _CHUNK)
                if not chunk:
                    return b""
                end = chunk.find(b"\n")
                if end >= 0:
                    return bytes(read + chunk[:end])
                read += chunk
                if len(read) > MAX_ANSWER_BYTES:
                    raise ProviderError(f"the provider's answer is over {MAX_ANSWER_BYTES} bytes")


def _exchange_windows(child, payload, deadline):
    # No select() on pipes there: communicate() runs its reader threads. A child there cannot
    # fork, so its output ends when it does.
    import subprocess
    import time

    try:
        out, _ = child.communicate(payload, timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return None
    return out.split(b"\n", 1)[0] if b"\n" in out else b""


def _end(child, posix):
    """Kill the child's process group (what the provider forked goes with it) and reap the child;
    returns its exit status. Killed before the wait: until the child is reaped, its pid (the
    group's id) cannot be reused by another process."""
    import signal

    try:
        if posix:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
    except OSError:
        pass
    for stream in (child.stdin, child.stdout):
        try:
            stream.close()
        except OSError:
            pass
    return child.wait()
