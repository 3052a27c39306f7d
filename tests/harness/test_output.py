"""harness.output: the one unified diff every --dry-run prints, and the --json encoder."""

import dataclasses
import io
import json

import pytest

from harness.output import print_json, unified_diff


def test_unified_diff_marks_missing_final_newline():
    assert unified_diff("same\n", "same\n", "a", "b") == ""
    diff = unified_diff("one\ntwo", "one\nthree\n", "a", "b")
    assert "-two\n\\ No newline at end of file\n" in diff
    assert "+three\n" in diff


@pytest.mark.parametrize("before, after, head", [
    (b"{}\n", b'{"a": 1}\n', "--- f (now)\n+++ f (after)\n"),              # settings.json bytes
    (None, "x\n", "--- /dev/null\n+++ f (after)\n"),                         # a file not there yet
    ("x\n", None, "--- f (now)\n+++ /dev/null\n"),                           # a file to be deleted
    (b"\xff\n", b"ok\n", "--- f (now)\n+++ f (after)\n"),                    # bad UTF-8 is replaced, not fatal
])
def test_unified_diff_takes_bytes_text_and_absent_files(before, after, head):
    diff = unified_diff(before, after, "f (now)", "f (after)")
    assert diff.startswith(head)


def test_print_json_writes_sets_sorted_and_dataclasses_as_objects():
    @dataclasses.dataclass
    class Row:
        a: int

    out = io.StringIO()
    print_json({"row": Row(1), "tags": {"b", "a"}}, out)
    assert json.loads(out.getvalue()) == {"row": {"a": 1}, "tags": ["a", "b"]}
