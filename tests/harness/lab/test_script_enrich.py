"""The lab stand-in answering memory-router enrichment requests (``reply: {enrich_answer: true}``)."""

import json

import pytest

from harness.clusters.enrich_plan import MemoryText
from harness.clusters.enrich_answers import check_enrich_answer, check_label_answer
from harness.clusters.enrich_protocol import enrich_request, label_request, prompt_text
from harness.lab.script import Script, enrich_reply
from router.store.clusterfile import Cluster, Member

CLUSTER = Cluster("layer1_x", 2, False, ("adb",), "", (Member("env_adb_devices", "env", "adb", 0),
                                                       Member("feedback_pixel_serial", "feedback", "serial", 0)), 0)
MEMORIES = [MemoryText("env_adb_devices", "env", "adb sees two devices", "", "0" * 16),
            MemoryText("feedback_pixel_serial", "feedback", "export ANDROID_SERIAL", "", "1" * 16)]


def body(request, tools=()):
    return {"model": "m", "messages": [{"role": "user", "content": prompt_text(request)}],
            "tools": [{"name": name, "input_schema": {}} for name in tools]}


def test_an_enrich_request_gets_per_memory_utterances_for_every_asked_slug():
    reply = enrich_reply(body(enrich_request(CLUSTER, MEMORIES, 3)))
    answer = json.loads(reply["text"])
    assert answer["utterances"]["env_adb_devices"] == ["trouble with adb devices, take 1",
                                                       "trouble with adb devices, take 2",
                                                       "trouble with adb devices, take 3"]
    check = check_enrich_answer(answer, ["env_adb_devices", "feedback_pixel_serial"], 3)
    assert check.refused is None and check.notes == []


def test_a_label_request_gets_names_from_its_first_member():
    answer = json.loads(enrich_reply(body(label_request(CLUSTER, MEMORIES)))["text"])
    assert answer == {"cluster": {"id": "adb_devices", "label": "about adb devices", "tags": ["adb", "devices"]}}
    assert check_label_answer(answer).cluster_id == "layer1_adb_devices"


def test_the_answer_is_a_tool_call_when_the_request_offers_record_answer():
    reply = enrich_reply(body(enrich_request(CLUSTER, MEMORIES, 1), tools=["record_answer"]))
    assert reply["tool_use"]["name"] == "record_answer"
    assert set(reply["tool_use"]["input"]["utterances"]) == {"env_adb_devices", "feedback_pixel_serial"}


@pytest.mark.parametrize("prompt", ["no request here", "The request, as JSON:\n{not json"])
def test_a_prompt_without_a_request_gets_nothing_from_it(prompt):
    assert enrich_reply({"messages": [{"role": "user", "content": prompt}]}) == {}


def test_a_script_rule_with_enrich_answer_replies_from_the_request():
    script = Script.from_data([{"when": {"prompt_contains": "memory-router.enrich/2"},
                                "reply": {"enrich_answer": True}, "times": 0}])
    reply = script.reply_for(body(enrich_request(CLUSTER, MEMORIES, 2)))
    assert "enrich_answer" not in reply and reply["rule"] == 0
    assert len(json.loads(reply["text"])["utterances"]["feedback_pixel_serial"]) == 2
