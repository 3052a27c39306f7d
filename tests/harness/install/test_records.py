"""The records install and init keep (harness.install.settingsfile, harness.setuprecord):
a time in them that is not a real time is refused at its file:line:col, with the fix (issue 30
item 7). memory-router writes only real times (router.store.learned.utc_stamp), so such a record
was edited by hand and is not trusted."""

import json
import pathlib

import pytest

from harness import setuprecord
from harness.install import settingsfile


def written_record(path, record):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("key, value, words", [
    ("installed_at", "2026-13-45T99:99:99Z", "there is no month 13"),
    ("uninstalled_at", "2026-02-30T10:00:00Z", "2026-02 has no day 30"),
    ("installed_at", "yesterday", "is not a UTC time like"),
])
def test_an_install_record_with_an_impossible_time_is_refused_at_its_place(tmp_path, key, value, words):
    settings = tmp_path / "project" / ".claude" / "settings.json"
    state = tmp_path / "state"
    record = {"settings": str(settings), "installed_at": "2026-11-30T19:55:01Z", key: value}
    where = written_record(state / "router.json", record)
    with pytest.raises(settingsfile.InputError) as caught:
        settingsfile.read_record(str(settings), "router", str(state))
    message = str(caught.value)
    line = next(n for n, text in enumerate(where.read_text().splitlines(), 1) if f'"{key}"' in text)
    column = where.read_text().splitlines()[line - 1].index(f'"{value}"') + 1
    assert message.startswith(f"{where}:{line}:{column}: {key} {value!r} ") and words in message
    assert "fix: write a real UTC time like 2026-11-30T19:55:01Z there, or delete the record" in message


def test_an_install_record_with_real_times_reads_back(tmp_path):
    settings = tmp_path / "settings.json"
    record = {"settings": str(settings), "installed_at": "2028-02-29T23:59:59Z", "uninstalled_at": None}
    written_record(tmp_path / "state" / "router.json", record)
    assert settingsfile.read_record(str(settings), "router", str(tmp_path / "state")) == record


def test_an_init_record_with_an_impossible_time_is_refused(tmp_path):
    project = tmp_path / "project"
    where = written_record(pathlib.Path(setuprecord.record_path(str(project))),
                           {"project": str(project), "written_at": "2026-12-01T25:00:00Z", "files": [], "dirs": [],
                            "scopes": []})
    with pytest.raises(settingsfile.InputError) as caught:
        setuprecord.read(str(project))
    assert str(caught.value).startswith(f"{where}:3:17: written_at '2026-12-01T25:00:00Z' is not a real time")
    assert "uninstall --all then undoes only the hooks" in str(caught.value)

