"""The main session's turns (first turn, every prompt) and where a text occurs, over sessions
built in the 2.1.293 shape."""

import json

from transcripts.auditmodel import RECORDED
from transcripts.reader import read_session
from transcripts.turns import find_text, first_turn, iter_turns

SENTINEL = "SENTINEL-7f3c-0042"


def test_first_turn_gives_prompt_injections_reply_and_tool_uses(tmp_path, session, bodies):
    s = session()
    s.prompt("why can't bash see my setx variable?")
    s.injection(bodies["setx"])
    s.assistant("Checking memory.")
    s.tool_call("Read", {"file_path": "/home/user/.claude/MEMORY.md"}, "index")
    s.injection(bodies["setx"])                      # a late (re-sent) one
    side = session(session_id=s.session_id, sidechain=True, agent_id="b1")
    side.prompt("sub", parent=None)
    side.injection(bodies["cloudflare"])
    for line in side.lines:
        s.raw(line)
    s.assistant("A reboot didn't fix it because only a user-opened terminal sees setx.")
    s.prompt("thanks")
    s.assistant("welcome")
    for i in range(20):
        s.raw(json.dumps({"type": "mode", "mode": "normal", "n": i}))
    reader = read_session(s.write(tmp_path / "s.jsonl"))
    turn = first_turn(reader)
    assert turn.prompt.line == 1 and turn.prompt.text.startswith("why can't bash")
    assert [e.line for e in turn.injections] == [2] and [e.line for e in turn.late_injections] == [6]
    assert [(t.name, t.input) for t in turn.tool_uses] == [("Read", {"file_path": "/home/user/.claude/MEMORY.md"})]
    assert turn.reply_text == "Checking memory.\nA reboot didn't fix it because only a user-opened terminal sees setx."
    assert [e.line for e in turn.sidechain_injections] == [8] and turn.sidechain_lines == 2
    assert turn.capability[0] == RECORDED and turn.end_line == 9
    assert reader.lines == 10, "first_turn stops reading at the second prompt"


def test_iter_turns_yields_every_main_prompt(tmp_path, session, bodies):
    s = session()
    for i in range(3):
        s.prompt(f"prompt {i}")
        s.assistant(f"reply {i}")
    turns = list(iter_turns(read_session(s.write(tmp_path / "s.jsonl"))))
    assert [t.reply_text for t in turns] == ["reply 0", "reply 1", "reply 2"]
    assert first_turn([]) is None


def test_find_text(tmp_path, session):
    s = session()
    s.prompt("hello")
    s.injection(f"ctx {SENTINEL}")
    s.assistant(f"saw {SENTINEL}")
    found = find_text(read_session(s.write(tmp_path / "s.jsonl")), SENTINEL)
    assert [(o.line, o.kind, o.stream) for o in found] == [(2, "injection", "main"), (3, "assistant", "main")]
