"""harness.lab.script: rules checked when loaded, from JSON or YAML, naming what is wrong."""

import json

import pytest

from harness.lab.script import Script
from router.errors import InputError


@pytest.mark.parametrize("data, fragment", [
    ("just text", "list of rules"),
    ([{"when": {}}], 'no "reply"'),
    ([{"when": {"prompt_startswith": "x"}, "reply": {"text": "y"}}], "unknown condition"),
    ([{"reply": {"txt": "y"}}], "unknown reply key"),
])
def test_script_from_data_rejects_bad_rules(data, fragment):
    with pytest.raises(InputError) as err:
        Script.from_data(data, source="s.json")
    assert fragment in str(err.value) and "s.json" in str(err.value)


def test_script_load_json_and_yaml_and_tool_names(tmp_path):
    rules = [{"when": {"prompt_contains": "a"}, "reply": {"tool_use": {"name": "Agent", "input": {}}}},
             {"reply": {"tool_use": [{"name": "mcp__srv__tool"}, {"name": "Agent"}]}}]
    (tmp_path / "s.json").write_text(json.dumps({"rules": rules, "input_tokens": 5}))
    (tmp_path / "s.yaml").write_text("- reply: {text: hi}\n")
    script = Script.load(tmp_path / "s.json")
    assert script.tool_names() == ["Agent", "mcp__srv__tool"] and script.input_tokens == 5
    assert Script.load(tmp_path / "s.yaml").rules == [{"reply": {"text": "hi"}}]
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(InputError):
        Script.load(tmp_path / "bad.json")


def test_yaml_script_error_names_the_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("- reply: {text: hi}\n- reply: [unclosed\n")
    with pytest.raises(InputError) as err:
        Script.load(tmp_path / "bad.yaml")
    assert f"{tmp_path / 'bad.yaml'}:" in str(err.value)
