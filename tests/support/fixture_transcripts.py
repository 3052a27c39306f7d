"""The committed real Claude Code transcripts (tests/fixtures/transcripts/, written by the real
clients under the lab; tests/fixtures/README.md): where they are, what index.json says of each
session, and lines found by what they hold (never by line number, which a regeneration moves)."""

import json
import pathlib

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
INDEX_FILE = FIXTURES / "index.json"
VERSIONS = ("1.0.98", "1.0.108", "2.0.76", "2.1.38", "2.1.39", "2.1.293", "2.1.328")
SCENARIOS = ("routed-silent-routed", "tools", "compact", "subagent", "interrupt")
# The first version whose transcript records a UserPromptSubmit hook's context as an attachment.
ATTACHMENT_ERA = (2, 1, 293)


def index():
    """``{main file name: entry}`` from index.json (version, scenario, prompts, files, exit codes)."""
    return json.loads(INDEX_FILE.read_text(encoding="utf-8"))


def session_file(version, scenario):
    return FIXTURES / f"v{version}-{scenario}.jsonl"


def all_files():
    """Every committed transcript file (sessions and subagent files), as index.json lists them."""
    return sorted(FIXTURES / name for entry in index().values() for name in entry["files"])


def vtuple(version):
    return tuple(int(part) for part in version.split("."))


def raw_lines(path):
    """``[(line number, parsed object)]`` with plain ``json``: the tests' independent reading."""
    with open(path, encoding="utf-8") as handle:
        return [(n, json.loads(text)) for n, text in enumerate(handle, 1)]


def user_text(obj):
    """The text of a user line's message (a string, or its first text block), '' otherwise."""
    content = (obj.get("message") or {}).get("content") if isinstance(obj.get("message"), dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                return block.get("text") or ""
    return ""


def find_line(path, predicate):
    """``(line number, object)`` of the first line for which ``predicate(obj)`` holds."""
    for number, obj in raw_lines(path):
        if predicate(obj):
            return number, obj
    raise AssertionError(f"{path.name}: no line matches")


def is_injection_attachment(obj):
    return obj.get("type") == "attachment" and (obj.get("attachment") or {}).get("type") == "hook_additional_context"


def real_injection_line(version="2.1.293"):
    """The first ``hook_additional_context`` line 2.1.293 wrote for our hook (routed prompt 1)."""
    return find_line(session_file(version, "routed-silent-routed"), is_injection_attachment)[1]


def task_notification_text(version="2.1.328"):
    """The <task-notification> turn the client recorded when the subagent scenario's background
    agent finished: the prompt text its UserPromptSubmit hook received."""
    def is_notification(obj):
        return obj.get("type") == "user" and user_text(obj).startswith("<task-notification>")

    return user_text(find_line(session_file(version, "subagent"), is_notification)[1])
