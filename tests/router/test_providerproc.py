"""The child-interpreter protocol of a custom provider (router/providers/providerproc.py): the request it
sees, and every way the exchange can fail, each a ProviderError, never a wait or a crash. What a
provider cannot do to the hook from there (issue 24, items 16-18) is tested through the hook in
tests/router/test_provider.py."""

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from router.store.clusterfile import load_cluster_file
from router.config import default_settings
from router.providers.provider import build_table, route
from router.providername import ProviderError
from router.providers import providerproc

SETX = "I set an env var with setx but the Bash tool still can't see it, why?"
_names = itertools.count()

# Returns the first cluster's first line; ``{before}`` runs at import, in the factory and in the call.
PROVIDER = '''
import os, sys
{at_import}
def make(settings):
    {in_factory}
    def provider(request):
        {in_call}
        cluster_id, _tags, _label, members = request["table"]["clusters"][0]
        slug, _type, hook = members[0]
        return {{"clusters": [cluster_id], "lines": [{{"cluster_id": cluster_id, "slug": slug, "hook": hook}}],
                 "confidence": 0.9, "explanation": type(request["table"]["clusters"][0]).__name__}}
    return provider
'''


@pytest.fixture
def table(example_cluster_file):
    return build_table(load_cluster_file(example_cluster_file))


@pytest.fixture
def write_provider(tmp_path, monkeypatch):
    """A provider module on PYTHONPATH (as a user installs one); returns 'module:make'."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))

    def write(at_import="pass", in_factory="pass", in_call="pass"):
        name = f"child_provider_{next(_names)}"
        source = PROVIDER.format(at_import=at_import, in_factory=in_factory, in_call=in_call)
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return f"{name}:make"

    return write


@pytest.fixture
def log_file(tmp_path, monkeypatch):
    path = tmp_path / "router.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(path))
    return path


def settings(**overrides):
    return dict(default_settings(), **overrides)


# --------------------------------------------------------------------------- the protocol


def test_the_provider_sees_the_contracts_table_shape(table, write_provider):
    decision = route(SETX, table, settings(provider=write_provider()))
    assert decision["explanation"] == "tuple" and decision["routed"] == ["layer1_project_memory_router"]


def test_the_child_request_holds_the_clusters_only(table):
    sent = providerproc.child_request({"prompt": "p", "table": table, "cluster_file": None})
    assert list(sent["table"]) == ["clusters"] and sent["table"]["clusters"] == tuple(table["clusters"])


def test_a_module_in_the_users_cwd_cannot_shadow_the_childs(table, write_provider, tmp_path, monkeypatch):
    """-P: the cwd is not on the child's sys.path, so a json.py there is never imported."""
    shadow = tmp_path / "cwd"
    shadow.mkdir()
    (shadow / "json.py").write_text("raise SystemExit(7)\n", encoding="utf-8")
    monkeypatch.chdir(shadow)
    assert route(SETX, table, settings(provider=write_provider()))["routed"] == ["layer1_project_memory_router"]


def _request(table):
    return {"prompt": SETX, "cwd": None, "session_id": None, "table": table, "cluster_file": None,
            "settings": settings()}


@pytest.mark.parametrize("python, message", [
    ("/bin/false", "its process exited with status 1 before answering"),
    ("/nonexistent/python3", "its interpreter did not start"),
])
def test_a_child_that_cannot_answer_is_a_provider_error(table, python, message):
    if not os.path.exists("/bin/false") and python == "/bin/false":
        pytest.skip("no /bin/false")
    with pytest.raises(ProviderError, match=message):
        providerproc.run_provider("anything:make", _request(table), 5, python=python)


def test_a_child_killed_by_a_signal_is_named(table, write_provider):
    with pytest.raises(ProviderError, match="killed by signal 9"):
        providerproc.run_provider(write_provider(in_call="os.kill(os.getpid(), 9)"), _request(table), 5)


def test_an_answer_over_the_limit_is_refused(table, write_provider, monkeypatch):
    monkeypatch.setattr(providerproc, "MAX_ANSWER_BYTES", 1000)
    name = write_provider(in_call="return {'clusters': [], 'lines': [], 'confidence': 0, 'explanation': 'x' * 500000}")
    with pytest.raises(ProviderError, match="over 1000 bytes"):
        providerproc.run_provider(name, _request(table), 5)


@pytest.mark.parametrize("answer, message", [
    (b"not json", "not JSON"), (b'{"decision_typo": 1}', "has no decision"), (b"[1]", "has no decision"),
    (b'{"error": "provider x: it broke"}', "it broke"),
])
def test_answers_that_are_not_decisions(answer, message):
    with pytest.raises(ProviderError, match=message):
        providerproc._parse_answer("x:make", answer)


def test_a_decision_that_is_not_json_is_reported(table, write_provider):
    name = write_provider(in_call="return {'clusters': {1, 2}, 'lines': [], 'confidence': 0, 'explanation': ''}")
    with pytest.raises(ProviderError, match="its decision is not JSON"):
        providerproc.run_provider(name, _request(table), 5)


def test_a_damaged_request_still_gets_one_answer_line():
    done = subprocess.run([sys.executable, "-P", "-c", providerproc._CHILD_CODE], input=b"\x00garbage",
                          capture_output=True, timeout=30)
    answer = json.loads(done.stdout.decode("ascii").rstrip("\n"))
    assert done.returncode == 0 and done.stdout.count(b"\n") == 1 and "bad request" in answer["error"]


def test_an_unsendable_request_is_a_provider_error(table):
    request = dict(_request(table), settings=dict(settings(), odd=object()))
    with pytest.raises(ProviderError, match="cannot be sent"):
        providerproc.run_provider("anything:make", request, 5)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX timers")
def test_a_child_whose_hook_is_gone_ends_by_itself(table, write_provider):
    """Claude Code may kill the hook before the hook kills the child: the child's own timer (budget
    plus ORPHAN_SLACK_S, SIGALRM's default action) ends it even inside one long C call."""
    import marshal

    name = write_provider(in_call="import re; re.match(r'(a+)+$', 'a' * 64 + 'b')")
    payload = marshal.dumps((name, providerproc.child_request(_request(table)), 0.2))
    done = subprocess.run([sys.executable, "-P", "-c", providerproc._CHILD_CODE], input=payload,
                          capture_output=True, timeout=30)
    assert done.returncode == -signal.SIGALRM and done.stdout == b""
