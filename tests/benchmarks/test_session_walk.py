"""benchmarks/session_walk.py: the hook's session stage walks each of its modules once."""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location("session_walk", os.path.join(ROOT, "benchmarks", "session_walk.py"))
session_walk = importlib.util.module_from_spec(spec)
spec.loader.exec_module(session_walk)

STAGE = ("router/hooks/sessionrecord.py", "router/store/transcriptscan.py", "router/routing/injection.py")


def test_the_session_stage_reads_plans_and_writes_in_one_pass():
    walked = session_walk.walk(ROOT)
    stays, entries = walked["stays"], walked["entries"]
    assert stays[0] == "router/hooks/session.py" and stays[-1] == "router/hooks/session.py"
    assert {name: entries.get(name) for name in STAGE} == dict.fromkeys(STAGE, 1)
    # the record's owner hands over to the plan and takes it back without the stage in between
    at = stays.index("router/routing/injection.py")
    assert stays[at - 1] == "router/hooks/sessionrecord.py" and "router/hooks/session.py" not in stays[1:-1]


def test_the_walk_counts_a_second_entry(tmp_path):
    # a copy of router/ whose stage goes back to the record's module a second time
    import shutil

    copy = tmp_path / "code"
    shutil.copytree(os.path.join(ROOT, "router"), copy / "router")
    stage = copy / "router" / "hooks" / "session.py"
    text = stage.read_text(encoding="utf-8")
    stage.write_text(text.replace("    return session_pass(session_id, cluster_path, transcript, plan, log)",
                                  "    record_path(session_id)\n"
                                  "    return session_pass(session_id, cluster_path, transcript, plan, log)"),
                     encoding="utf-8")
    assert session_walk.walk(str(copy))["entries"]["router/hooks/sessionrecord.py"] == 2
