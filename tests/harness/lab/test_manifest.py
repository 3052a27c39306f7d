"""harness.lab.manifest: which directories hold session runs, and a damaged run.json refused."""

import pytest

from harness.lab import manifest
from router.errors import InputError


def test_session_dirs_and_manifest_errors(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "run.json").write_text('{"memory": "slim"}')
    (tmp_path / "b").mkdir()
    assert manifest.session_dirs(tmp_path) == [str(tmp_path / "a")]
    assert manifest.session_dirs(tmp_path / "a") == [tmp_path / "a"]
    with pytest.raises(InputError):
        manifest.session_dirs(tmp_path / "b")
    (tmp_path / "b" / "run.json").write_text("{bad")
    with pytest.raises(InputError) as err:
        manifest.load_manifest(tmp_path / "b")
    assert "not valid JSON" in str(err.value)
