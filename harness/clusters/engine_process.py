"""Running an engine's program: one request on stdin, the answer from stdout, a deadline, a cap
on what it may print, and its whole process group killed when it overstays. The errors every
engine raises for one request (``EngineError``) live here too, so the runner and the engines
share them without importing each other."""

import os
import selectors
import subprocess
import time

from harness.clusters.enrich_protocol import MAX_ANSWER_BYTES
from router.errors import MemoryRouterError

STDERR_TAIL = 4000


class EngineError(MemoryRouterError):
    """One request's failure: that cluster is reported and skipped, the others go on."""

    def __init__(self, message, *, transient=False, fatal=False, retry_after=None):
        super().__init__(message)
        self.transient = transient
        self.fatal = fatal
        self.retry_after = retry_after


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
    try:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=env, cwd=cwd, start_new_session=True)
    except OSError as err:
        raise EngineError(f"cannot run {argv[0]}: {err.strerror or err}", fatal=True) from None
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
            # output open has answered all it will
            events = selector.select(min(remaining, 0.2))
            if not events and process.poll() is not None:
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
        raise EngineError(f"{name} gave no answer within {timeout:g} s (killed)") from None
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


def _kill(process):
    try:
        os.killpg(process.pid, 9)
    except OSError:
        try:
            process.kill()
        except OSError:
            pass
