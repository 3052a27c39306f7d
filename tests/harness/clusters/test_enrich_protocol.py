"""The enrichment protocol: requests, the JSON Schema (package data), and untrusted answers."""

import json

import jsonschema
import pytest

from harness.clusters import enrich_protocol as protocol
from harness.clusters.enrich_plan import MemoryText
from router.store.clusterfile import Cluster, Member

CLUSTER = Cluster("layer1_tools", 2, False, ("pnpm", "lockfile"), "package tools",
                  (Member("env_pnpm_store", "env", "pnpm store on D:", 0),
                   Member("feedback_bun_scripts", "feedback", "use bun for scripts", 0)), 0)
MEMORIES = (MemoryText("env_pnpm_store", "env", "pnpm store on D:", "The store lives on D:.", "0" * 16),
            MemoryText("feedback_bun_scripts", "feedback", "use bun for scripts", "", "1" * 16))


def schema_for(kind):
    schema = protocol.load_schema()
    return {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{kind}"}


def valid(kind, value):
    return jsonschema.Draft202012Validator(schema_for(kind)).is_valid(value)


def test_the_schema_file_is_a_valid_draft_2020_12_schema_and_ships_as_package_data():
    schema = protocol.load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["$defs"]) >= {"enrich_request", "enrich_answer", "label_request", "label_answer"}
    assert schema["$defs"]["enrich_request"]["properties"]["protocol"]["const"] == protocol.ENRICH_PROTOCOL
    assert schema["$defs"]["label_request"]["properties"]["protocol"]["const"] == protocol.LABEL_PROTOCOL


def test_an_enrich_request_keeps_the_protocol():
    request = protocol.enrich_request(CLUSTER, MEMORIES[:1], 10, neighbours=MEMORIES[1:])
    assert request["protocol"] == "memory-router.enrich/2" and request["per_memory"] == 10
    assert request["cluster"] == {"id": "layer1_tools", "label": "package tools", "tags": ["pnpm", "lockfile"]}
    assert request["memories"] == [{"slug": "env_pnpm_store", "type": "env", "hook": "pnpm store on D:",
                                    "body": "The store lives on D:."}]
    assert request["neighbours"] == [{"slug": "feedback_bun_scripts", "hook": "use bun for scripts"}]
    assert "10 short things" in request["instructions"]
    assert valid("enrich_request", request)
    assert protocol.request_problems(request) == []


def test_a_long_body_is_cut_in_the_request():
    long = MEMORIES[0]._replace(body="y" * 9000)
    body = protocol.enrich_request(CLUSTER, [long], 3)["memories"][0]["body"]
    assert len(body) == protocol.MAX_BODY_CHARS + 1 and body.endswith("\u2026")


def test_a_label_request_keeps_the_protocol():
    request = protocol.label_request(CLUSTER, MEMORIES, taken_ids={"layer1_b", "layer1_a"})
    assert request["taken_ids"] == ["layer1_a", "layer1_b"]
    assert valid("label_request", request) and protocol.request_problems(request) == []


def _broken(change):
    request = protocol.enrich_request(CLUSTER, MEMORIES, 10)
    change(request)
    return request


BROKEN_REQUESTS = [
    ("wrong protocol", lambda r: r.update(protocol="memory-router.enrich/1")),
    ("per_memory zero", lambda r: r.update(per_memory=0)),
    ("per_memory too many", lambda r: r.update(per_memory=51)),
    ("per_memory a bool", lambda r: r.update(per_memory=True)),
    ("unknown key", lambda r: r.update(model="x")),
    ("no instructions", lambda r: r.pop("instructions")),
    ("empty memories", lambda r: r.update(memories=[])),
    ("bad slug", lambda r: r["memories"][0].update(slug="Bad Slug")),
    ("memory missing body", lambda r: r["memories"][0].pop("body")),
    ("memory extra key", lambda r: r["memories"][0].update(path="/x")),
    ("cluster tags not strings", lambda r: r["cluster"].update(tags=[1])),
    ("neighbour extra key", lambda r: r.update(neighbours=[{"slug": "a", "hook": "h", "body": "b"}])),
]


@pytest.mark.parametrize("why, change", BROKEN_REQUESTS, ids=[b[0] for b in BROKEN_REQUESTS])
def test_a_broken_request_is_refused(why, change):
    request = _broken(change)
    assert not valid("enrich_request", request)
    assert protocol.request_problems(request)


def test_request_problems_name_the_field_and_what_is_wrong():
    assert protocol.request_problems(["x"]) == ["the request: ['x'] is not of type 'object'"]
    problems = protocol.request_problems(_broken(lambda r: r["memories"][1].update(slug="Bad Slug")))
    assert problems == ["memories[1].slug: 'Bad Slug' does not match '^[a-z0-9_]+$'"]
    label = protocol.label_request(CLUSTER, MEMORIES)
    label["taken_ids"] = [3]
    assert protocol.request_problems(label) == ["taken_ids[0]: 3 is not of type 'string'"]


def test_prompt_text_carries_the_instructions_and_the_request():
    request = protocol.enrich_request(CLUSTER, MEMORIES, 2)
    text = protocol.prompt_text(request)
    assert text.startswith(request["instructions"])
    assert json.loads(text.split("The request, as JSON:\n", 1)[1]) == request
