"""Running an engine's program: stdin, stdout, the deadline, the cap, the process group."""

import sys
import time

import pytest

from harness.clusters.engine_process import EngineError, one_line, run_program


def python(code):
    return [sys.executable, "-c", code]


def test_a_program_gets_its_stdin_and_its_answer_is_read():
    code, out, err = run_program(python("import sys; data = sys.stdin.read(); print(len(data)); "
                                        "print('note', file=sys.stderr)"), b"x" * 300_000, 30)
    assert (code, out, err) == (0, b"300000\n", "note\n")


def test_a_program_that_never_reads_its_stdin_still_answers():
    code, out, _err = run_program(python("print('answer')"), b"y" * 1_000_000, 30)
    assert code == 0 and out == b"answer\n"


def test_a_program_that_exits_while_its_child_holds_stdout_open_is_not_waited_for():
    started = time.monotonic()
    code, out, _err = run_program(["sh", "-c", "echo answer; sleep 30 &"], b"", 20)
    assert code == 0 and out == b"answer\n" and time.monotonic() - started < 5


def test_an_answer_is_taken_when_it_arrives_though_a_child_keeps_writing_to_stderr(tmp_path):
    # The program answers and exits; a child it left behind writes to the inherited stderr until
    # told to stop (at most 20 s), then leaves a file saying it ended. The answer must come back
    # while the child still writes, not when it ends or at the 60 s deadline.
    stop, ended = tmp_path / "stop", tmp_path / "ended"
    chatter = ("import os, sys, time\nend = time.monotonic() + 20\n"
               "while time.monotonic() < end and not os.path.exists(sys.argv[1]):\n"
               "    sys.stderr.write('still here\\n'); sys.stderr.flush(); time.sleep(0.02)\n"
               "open(sys.argv[2], 'w').close()\n")
    program = ("import subprocess, sys; subprocess.Popen([sys.executable, '-c'] + sys.argv[1:]); "
               "print('answer', flush=True)")
    try:
        code, out, _err = run_program([sys.executable, "-c", program, chatter, str(stop), str(ended)], b"", 60)
        assert code == 0 and out == b"answer\n"
        assert not ended.exists(), "the answer waited for the child to stop writing"
    finally:
        stop.touch()


def test_the_exit_code_and_the_stderr_tail_come_back():
    code, _out, err = run_program(python("import sys; sys.stderr.write('e' * 10000 + 'END'); sys.exit(4)"), b"", 30)
    assert code == 4 and len(err) == 4000 and err.endswith("END")


def test_output_past_the_cap_kills_the_program():
    with pytest.raises(EngineError, match="printed more than 1,000 bytes"):
        run_program(python("print('z' * 5000)"), b"", 30, limit=1000)


def test_a_missing_program_is_fatal():
    with pytest.raises(EngineError) as caught:
        run_program(["/nonexistent/program"], b"", 5)
    assert caught.value.fatal and not caught.value.transient


@pytest.mark.parametrize("text, line", [("", ""), ("a\n\nlast one \n\n", "last one"), ("bad\x1b[2J", "bad?[2J"),
                                        ("x" * 300, "x" * 200 + "...")])
def test_one_line(text, line):
    assert one_line(text) == line
