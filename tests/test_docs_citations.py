"""The docs say the point itself: no "spec §N" (the spec does not ship with the repository) and no
path outside it (``../shared/...``), issue 29 item 9. docs/enrich.md no longer says its config
keys are yet to come (router/enrichconfig.py has them)."""

import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
CITATION = re.compile(r"spec §|spec's §|\.\./shared/|claude-code-formats\.md")
# Lines that quote what a command prints or what the config's help says: they change with that code.
QUOTED_OUTPUT = {
    ("README.md", "spec (spec §10's scorer, the reference)"),        # router.config DOCS["provider"], the config table
    ("docs/behavioural.md", "(deterministic routing check, spec §10)"),  # memory-router checklist's output
    ("docs/behavioural.md", "(spec §6: a fact reached by repo grep"),
    ("docs/behavioural.md", "Subagents inherit the parent's context (spec §10)"),
}
# Being rewritten by other items of issue 29 (the plugin and tokens pages): out of this guard until then.
ELSEWHERE = {"docs/plugin.md", "docs/slim-and-tokens.md"}


def cited_lines():
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        name = str(path.relative_to(REPO))
        if name in ELSEWHERE:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CITATION.search(line) and not any(name == f and quoted in line for f, quoted in QUOTED_OUTPUT):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    return found


def test_no_doc_cites_a_document_that_does_not_ship():
    assert cited_lines() == []


def test_the_guard_finds_a_planted_citation(tmp_path, monkeypatch):
    planted = tmp_path / "docs"
    planted.mkdir()
    (tmp_path / "README.md").write_text("as spec §10 fixed it\n", encoding="utf-8")
    (planted / "x.md").write_text("see `../shared/spec/observed.md`\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert [line.split(":")[0] for line in cited_lines()] == ["README.md", "docs/x.md"]


def test_enrich_docs_say_the_config_keys_exist():
    text = (REPO / "docs" / "enrich.md").read_text(encoding="utf-8")
    assert "until they land" not in text and "router/enrichconfig.py" in text
