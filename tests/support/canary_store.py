"""A small cluster store and a suite writer for the canary tests (files only in tmp dirs)."""

import textwrap
import types

import pytest

STORE = """\
# Memory clusters

## Layer 0 - Cluster Router

- layer1_project_memory_router · 3 · tags: behaviour, caching, hot, hybrid, lost · label: memory router saga and the env gotchas it caught
- layer1_04 · 2 · tags: decisions, ledger, dashboard · label: how to read the decision ledger
- layer1_db · 2 · tags: database, postgres · label: databases

## Layer 1 - Member Lines

### layer1_project_memory_router
- env_bash_tool_env_var_caching - env; setx vars never reach the Bash tool: even a full OS reboot didn't fix it; verify in a user-opened terminal
- env_cloudflare_workers_build_secret_vs_text - env; PUBLIC_ build vars set as Secret are undefined at build time: set type Text (Plaintext)
- project_hot_strip - project; the hot strip keeps ten gotchas always loaded

### layer1_04
- feedback_never_read_decisions_raw - feedback; never read DECISIONS.md top to bottom: query the ledger by id/date instead
- project_dashboard_layout - project; the dashboard shows decisions by week

### layer1_db
- reference_postgres_vacuum - reference; run vacuum analyze after bulk loads
- feedback_migrations_reviewed - feedback; database migrations need a second reviewer
"""

SETX_PROMPT = "I ran setx for an env var but the Bash tool still can't see it, even after a reboot"
LEDGER_PROMPT = "what did we decide about the decisions ledger dashboard?"
NEUTRAL_PROMPT = "refactor this loop"


@pytest.fixture
def prompts():
    """Prompts with a known route on STORE: setx -> layer1_project_memory_router (score 7, 3 lines),
    ledger -> layer1_04 (score 9), neutral -> nothing, haiku -> layer1_db at exactly the floor (3)."""
    return types.SimpleNamespace(setx=SETX_PROMPT, ledger=LEDGER_PROMPT, neutral=NEUTRAL_PROMPT,
                                 haiku="write a haiku about databases")


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "clusters.md"
    path.write_text(STORE, encoding="utf-8")
    return path


@pytest.fixture
def write_suite(tmp_path, store):
    """Write a suite (dedented YAML) next to the store. A top-level 'clusters:' line naming the store
    is appended (at the end, so the body's line numbers stay as written) unless ``clusters=False``."""

    def write(body, name="canary_suite.yaml", clusters=True):
        text = textwrap.dedent(body).lstrip("\n")
        if clusters:
            text = text.rstrip("\n") + f"\nclusters: {store.name}\n"
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
