"""Running an engine's program: one request on stdin, the answer from stdout, a deadline, a cap
on what it may print, and its whole process group killed when it overstays or when the run is
ended by a signal (``ending_engines_on_signals``). The errors every engine raises for one request
(``EngineError``) and the policy that stops a run on them (``StopPolicy``) live here too, so the
runner, the engines and the runs share them without importing each other."""

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time

from harness.clusters.enrich_answers import MAX_ANSWER_BYTES
from router.errors import MemoryRouterError

STDERR_TAIL = 4000


class EngineError(MemoryRouterError):
    """One request's failure: that cluster is reported and skipped, the others go on, unless
    ``StopPolicy`` says the run cannot succeed. ``transient``: worth retrying; ``fatal``: no other
    request can succeed either (a refused login or key, a missing program); ``unreachable``: the
    engine gave no answer at all (a connection failure, a timeout); ``fix``: what the user does."""

    def __init__(self, message, *, transient=False, fatal=False, unreachable=False, retry_after=None, fix=None):
        super().__init__(message, fix=fix)
        self.transient = transient
        self.fatal = fatal
        self.unreachable = unreachable
        self.retry_after = retry_after


UNREACHABLE_IN_A_ROW = 2
UNREACHABLE_FIX = "check that the engine answers from this shell (network, proxy, ANTHROPIC_BASE_URL), or pass " \
                  "--timeout S for a slow model; then run the command again"


class StopPolicy:
    """When a run stops asking: after a fatal error (the first cluster a refused key reaches is the
    last asked), or after ``UNREACHABLE_IN_A_ROW`` clusters in a row got no answer at all (one
    timeout can be a slow model on a big cluster; two in a row is an engine that is not there, and
    each further cluster would wait its whole timeout). ``record`` each cluster's error (``None``
    when it succeeded); ``reason`` is then the one line saying why the run stopped, with the fix."""

    def __init__(self, in_a_row=UNREACHABLE_IN_A_ROW):
        self.in_a_row = in_a_row
        self.unreachable = 0
        self.reason = None

    def record(self, error):
        if error is None or not getattr(error, "unreachable", False):
            self.unreachable = 0
        else:
            self.unreachable += 1
        if error is not None and self.reason is None:
            if getattr(error, "fatal", False):
                self.reason = _with_fix(error.message, error.fix)
            elif self.unreachable >= self.in_a_row:
                self.reason = _with_fix(f"no answer on {self.unreachable} clusters in a row ({error.message})",
                                        error.fix or UNREACHABLE_FIX)
        return self.reason


def _with_fix(message, fix):
    return f"{message} (fix: {fix})" if fix else message


def one_line(text, limit=200):
    """The last non-empty line of a program's message, printable and short."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    last = "".join(ch if ch.isprintable() else "?" for ch in last)
    return last[:limit] + ("..." if len(last) > limit else "")


# --------------------------------------------------------------------------- running a program


def run_program(argv, data, timeout, env=None, cwd=None, limit=MAX_ANSWER_BYTES):
    """Run ``argv`` with ``data`` on stdin; ``(exit code, stdout bytes, stderr tail)``. Stdout
    past ``limit`` bytes, or a run past ``timeout`` seconds, kills the program's whole process
    group and raises ``EngineError``; a program that cannot start raises a fatal one.

    One thread and one ``select`` loop (as ``subprocess.communicate`` does), so the answer is read
    the moment it is written: no polling, no helper threads to start per request."""
    process = None
    try:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=env, cwd=cwd, start_new_session=True)
        _RUNNING.add(process.pid)
    except OSError as err:
        raise EngineError(f"cannot run {argv[0]}: {err.strerror or err}", fatal=True,
                          fix="pass the program's path, or put it on PATH") from None
    except BaseException:        # a signal between the start and the registration
        if process is not None:
            _kill(process)
        raise
    try:
        return _talk(process, argv, data, timeout, limit)
    finally:
        _RUNNING.discard(process.pid)


def _talk(process, argv, data, timeout, limit):
    name = os.path.basename(argv[0])
    out, err_tail = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    pending = memoryview(data)
    selector = selectors.DefaultSelector()
    try:
        os.set_blocking(process.stdin.fileno(), False)
        if pending:
            selector.register(process.stdin, selectors.EVENT_WRITE)
        else:
            process.stdin.close()
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(argv, timeout)
            # at most 0.2 s a wait: a program that exited while a child of its own holds its
            # output open has answered all it will, even when that child keeps writing to stderr
            events = selector.select(min(remaining, 0.2))
            if process.poll() is not None and not any(key.fileobj is process.stdout for key, _mask in events):
                if _registered(selector, process.stdout):
                    _drain(process, out, name, limit)   # what it wrote as it exited, after select looked
                break
            for key, _mask in events:
                if key.fileobj is process.stdin:
                    try:
                        pending = pending[os.write(key.fd, pending[:65536]):]
                    except BlockingIOError:
                        continue
                    except OSError:           # the program stopped reading: its answer tells the rest
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(process.stdin)
                        process.stdin.close()
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.fileobj is process.stdout:
                    out += chunk
                    if len(out) > limit:
                        _kill(process)
                        raise EngineError(f"{name} printed more than {limit:,} bytes (killed): not an answer")
                else:
                    err_tail += chunk
                    del err_tail[:-STDERR_TAIL]
        code = process.wait(timeout=max(0.01, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill(process)
        process.wait()
        raise EngineError(f"{name} gave no answer within {timeout:g} s (killed)", unreachable=True) from None
    except BaseException:
        _kill(process)
        process.wait()
        raise
    finally:
        selector.close()
        for pipe in (process.stdin, process.stdout, process.stderr):
            try:
                pipe.close()
            except OSError:
                pass
    return code, bytes(out), bytes(err_tail).decode("utf-8", "replace")


def _registered(selector, fileobj):
    try:
        selector.get_key(fileobj)
    except KeyError:
        return False
    return True


def _drain(process, out, name, limit):
    """Read what the exited program left in its stdout pipe, without waiting for more."""
    fd = process.stdout.fileno()
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return
        if not chunk:
            return
        out += chunk
        if len(out) > limit:
            _kill(process)
            raise EngineError(f"{name} printed more than {limit:,} bytes (killed): not an answer")


def _kill(process):
    try:
        os.killpg(process.pid, 9)
    except OSError:
        try:
            process.kill()
        except OSError:
            pass


# --------------------------------------------------------------------------- ending a run by a signal

# The process groups of the engine programs running now. Each runs in a session of its own (so a
# Ctrl-C at the terminal reaches memory-router alone and is handled once, here), which is also
# why a signal that ends memory-router would leave them running, re-parented to PID 1, unless it
# kills them first.
_RUNNING = set()
END_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """The run was ended by ``signum``: raised where the run was, as Ctrl-C's KeyboardInterrupt is,
    so every ``finally`` runs and what finished stays written. Exit code 128 + the signal's number."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum


def kill_running_engines():
    """Kill the whole process group of every engine program running now."""
    for pid in list(_RUNNING):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


@contextlib.contextmanager
def ending_engines_on_signals(signals=END_SIGNALS):
    """Within the block, SIGINT, SIGTERM and SIGHUP kill every running engine's process group and
    raise ``Interrupted`` in the run; the handlers before it are restored after. Outside the main
    thread (where Python cannot set handlers) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        kill_running_engines()
        raise Interrupted(signum)

    previous = {}
    try:
        for signum in signals:
            previous[signum] = signal.signal(signum, handler)
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
