"""Every slim test runs with a router that runs (``slim render`` refuses without one): the prompt
hook in the user settings, which the test's HOME holds. A test of the refusal takes it away with
``no_router``."""

import os

import pytest

from harness.install.hooks import install_router
from harness.project import user_settings_path
from router.config import bundled_cluster_file


@pytest.fixture(autouse=True)
def user_router(tmp_path_factory, monkeypatch):
    # the project slim render looks in is the current directory: one with no settings of its own
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    install_router(str(tmp_path_factory.mktemp("anywhere")), scope="user", clusters=bundled_cluster_file())
    return user_settings_path()


@pytest.fixture
def no_router(user_router):
    os.unlink(user_router)
