"""The README cannot drift: its two commands are the ones .ci/run and a fresh machine run, its quick
start is short, and every count and figure in it is either checked here against what the code
and the bundled store say, or sits in a block marked with the command that produced it.

The marks are HTML comments (invisible on GitHub): ``<!-- canary-run: ... -->`` before the quoted
``canary run`` output, ``<!-- config-table: ... -->`` ... ``<!-- /config-table -->`` around the
configuration table, ``<!-- figures: COMMAND -->`` ... ``<!-- /figures -->`` around a table a
command in the README produced. Any other number in the README's prose fails
``test_every_figure_in_the_prose_is_checked`` until it is checked here."""

import json
import os
import pathlib
import re
import shutil

import pytest

from harness.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

MAIN_JOB = "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/memory-router canary run"
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q '.[test]' && .venv/bin/python -m pytest -q"


def readme():
    return README.read_text(encoding="utf-8")


def fenced_blocks(text):
    """``[(start offset, language, body)]`` of every fenced code block."""
    return [(m.start(), m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)]


def marked(text, name):
    """The text between ``<!-- name: ... -->`` and ``<!-- /name -->`` (or the next fenced block
    for a mark without an end), and the mark's own words."""
    match = re.search(rf"<!-- {name}: (.*?) -->\n", text)
    assert match, f"the README has no <!-- {name}: ... --> mark"
    end = text.find(f"<!-- /{name} -->", match.end())
    return match.group(1), text[match.end():end if end != -1 else None]


# --------------------------------------------------------------------------- the two commands


def test_the_two_commands_come_first_exactly_as_ci_runs_them():
    text = readme()
    blocks = [body.strip() for _start, lang, body in fenced_blocks(text) if lang == "bash"]
    assert blocks[:2] == [MAIN_JOB, TEST_COMMAND]
    first_section = text.find("\n## ")
    assert text.find(MAIN_JOB) < text.find(TEST_COMMAND) < first_section
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().splitlines()[-1] == TEST_COMMAND  # .ci/run runs the README command, nothing more
    assert "npm install" not in ci


@pytest.mark.parametrize("command, expected", [
    (MAIN_JOB, "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/memory-router canary run"),
    (TEST_COMMAND, "python3 -m venv .venv && .venv/bin/pip install -q '.[test]' && .venv/bin/python -m pytest -q"),
])
def test_the_commands_this_file_checks_are_the_ones_the_issue_fixed(command, expected):
    assert command == expected  # changing them here is changing what every user runs


def test_the_quick_start_is_at_most_15_lines_and_goes_through_init():
    text = readme()
    section = text[text.index("## Quick start"):]
    section = section[:section.index("\n## ", 3)]
    (block,) = [body for _start, lang, body in fenced_blocks(section) if lang == "bash"]
    lines = block.strip("\n").splitlines()
    assert len(lines) <= 15
    assert any(line.startswith("memory-router init") for line in lines)
    assert text.index("## Quick start") < text.index("## Commands")  # what it does, the commands, then this


def test_the_quick_start_commands_parse():
    """Every memory-router line of the quick start is a command line argparse accepts."""
    from harness.cli import build_parser

    text = readme()
    section = text[text.index("## Quick start"):]
    (block,) = [body for _start, lang, body in fenced_blocks(section[:section.index("\n## ", 3)]) if lang == "bash"]
    import shlex

    parser = build_parser()
    for line in block.splitlines():
        if not line.startswith("memory-router "):
            continue
        argv = shlex.split(line.split("  #")[0].split(" # ")[0])[1:]
        parser.parse_args(argv)


def test_the_quick_starts_install_works_today_from_the_repository():
    """issue 29: the first command was `pipx install memory-router`, a package no index has. It
    installs this checkout (tests/harness/test_installsource.py installs a clone the same way and
    checks what memory-router then says it came from); every install command the README quotes
    names the index only as the route once released."""
    import shlex

    text = readme()
    section = text[text.index("## Quick start"):]
    (block,) = [body for _start, lang, body in fenced_blocks(section[:section.index("\n## ", 3)]) if lang == "bash"]
    assert shlex.split(block.splitlines()[0].split("#")[0]) == ["pipx", "install", "."]
    quoted = [line for _start, lang, body in fenced_blocks(text) if lang == "bash" for line in body.splitlines()]
    for line in quoted:
        if re.search(r"(pipx|uv tool|pip) install '?memory-router(?![-\w])(?! @)", line):
            assert "once it is released" in line, line


# --------------------------------------------------------------------------- the canary count


def test_the_quoted_canary_run_output_is_what_canary_run_prints(capsys):
    """Run from anywhere (the test's own temp directory): a checkout and an installed copy print
    the same lines (harness.canary.tables.display_path)."""
    command, rest = marked(readme(), "canary-run")
    assert command == "memory-router canary run"
    quoted = fenced_blocks(rest)[0][2]
    assert main(["canary", "run"]) == 0
    assert capsys.readouterr().out == quoted
    assert main(["canary", "run", "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert (f"OK: {totals['total']} cases in 3 suite(s): {totals['pass']} passed, {totals['fail']} failed, "
            f"{totals['xfail']} xfail, {totals['xpass']} xpass") in quoted


# --------------------------------------------------------------------------- the configuration table


def _number(value):
    if isinstance(value, float):
        return f"{value:g}"
    return f"{value:,}"


def _default(value):
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return f"`{json.dumps(value)}`"
    return f"`{json.dumps(value)}`" if value == "" else f"`{value}`"


def config_rows():
    """``[(key, default, allowed, meaning)]`` as router/config.py defines the keys: the rows the
    README's table must hold, in this order. ``allowed`` is None where it is free text (a path, a
    name); for numbers it is the range the config accepts."""
    from router import config
    from router.enrichconfig import ENRICH_DEFAULTS, ENRICH_DOCS

    rows = []
    for key, value in config.DEFAULTS.items():
        if isinstance(value, bool):
            allowed = "true/false"
        elif key in config.CHOICES:
            allowed = "one of " + ", ".join(config.CHOICES[key])
        elif isinstance(value, (int, float)):
            low, high, _why = config.RANGES[key]
            allowed = f"≥ {_number(low)}" if high is None else f"{_number(low)} to {_number(high)}"
        else:
            allowed = None
        rows.append((key, _default(value), allowed, config.DOCS[key]))
    for key, value in config.LEARNING_DEFAULTS.items():
        rows.append((key, _default(value), "true/false" if isinstance(value, bool) else "≥ 1",
                     config.LEARNING_DOCS[key]))
    other_defaults = {"clusters": None, "memory_dir": None, "hot_strip": []}
    for key, meaning in config.OTHER_KEYS.items():
        rows.append((key, _default(other_defaults[key]), None, meaning))
    for key, value in ENRICH_DEFAULTS.items():
        rows.append((key, _default(value), None, ENRICH_DOCS[key]))
    for key, value in config.CITATION_DEFAULTS.items():
        rows.append((key, _default(value), None, config.CITATION_DOCS[key]))
    return rows


def markdown_cell(text):
    """``text`` as a table cell holds it: ``|`` escaped, ``<`` and ``>`` as entities (GitHub would
    drop ``<cluster file stem>`` as an unknown tag)."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def readme_config_rows():
    _source, table = marked(readme(), "config-table")
    rows = []
    for line in table.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append((cells[0].strip("`"), *cells[1:]))
    return rows


def test_the_configuration_table_holds_every_key_with_its_default_range_and_help_text():
    expected = config_rows()
    got = readme_config_rows()
    assert [row[0] for row in got] == [row[0] for row in expected]
    for (key, default, allowed, meaning), row in zip(expected, got):
        assert row[1] == default, key
        if allowed is not None:
            assert row[2] == allowed, key
        assert row[3] == markdown_cell(meaning), key


def test_the_configuration_table_knows_every_key_the_config_accepts(tmp_path):
    """A key the config accepts but the table lacks (learning and learned_cap were) fails here:
    the table's keys are exactly those the unknown-key error lists."""
    from router.configfile import load_config
    from router.errors import ConfigError

    bad = tmp_path / "memory-router.toml"
    bad.write_text("no_such_key = 1\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(bad))
    known = set(re.search(r"use one of: (.*)", str(err.value)).group(1).rstrip(")").split(", "))
    assert {row[0] for row in readme_config_rows()} == known


# --------------------------------------------------------------------------- the other figures


def example_store_figures():
    from canaries.memoryindex import line_count  # noqa: F401 - the same counts slim uses
    from router.store.clusterfile import load_cluster_file
    from router.config import bundled_cluster_file, bundled_example_dir, bundled_flat_index
    from router.configfile import parse_config_file

    index = load_cluster_file(bundled_cluster_file())
    hot = parse_config_file(os.path.join(bundled_example_dir(), "memory-router.toml"))["hot_strip"]
    return {"clusters": len(index.clusters), "members": len(index.members), "hot": len(hot),
            "flat_bytes": os.path.getsize(bundled_flat_index())}


def slim_render_figures(tmp_path, capsys):
    from router.config import bundled_example_dir, bundled_flat_index

    memory = tmp_path / "memory"
    memory.mkdir()
    shutil.copy(bundled_flat_index(), memory / "MEMORY.md")
    assert main(["slim", "render", "--memory-dir", str(memory), "--config",
                 os.path.join(bundled_example_dir(), "memory-router.toml"), "--dry-run", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    views = result["always_loaded"]
    return {"before": result["bytes_before"], "after": result["bytes_after"],
            "left": views["before"]["memory_lines"] - views["after"]["memory_lines"],
            "memories": views["before"]["memory_lines"], "router": views["after"]["cluster_lines"]}


def test_the_example_store_figures(tmp_path, capsys):
    store = example_store_figures()
    text = " ".join(readme().split())
    assert (f"{store['clusters']} clusters and {store['members']} members for a fictional developer, with a flat "
            f"`MEMORY.md` of {store['flat_bytes']:,} bytes and a {store['hot']}-slug hot strip") in text


def test_the_slim_render_figures(tmp_path, capsys):
    slim = slim_render_figures(tmp_path, capsys)
    _what, rest = marked(readme(), "slim-render")
    sentence = " ".join(rest.split("\n\n")[0].split())
    assert sentence == (f"On the bundled example store, `slim render` takes `MEMORY.md` from {slim['before']:,} to "
                        f"{slim['after']:,} bytes: {slim['left']} of its {slim['memories']} memory lines leave the "
                        f"always-loaded index and {slim['router']} cluster lines join it.")


def test_python_version_and_claude_code_version():
    import tomllib

    from harness.lab.client import TESTED_VERSION

    text = readme()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == ">=3.11" and "Requires Python 3.11 or newer" in text
    versions = set(re.findall(r"\b\d+\.\d+\.\d+\b", text))
    assert versions == {TESTED_VERSION}, versions  # the only client version named is the pinned one


def test_the_exit_codes_are_the_ones_the_commands_use():
    from canaries.verdict import EXIT_CODES
    from router.errors import InputError, RefusedError

    rows = dict(re.findall(r"^\| (\d) \| (.*) \|$", readme(), re.M))
    assert sorted(rows) == ["0", "1", "2", "3"]
    assert InputError("x").exit_code == 2 and RefusedError("x").exit_code == 1
    assert EXIT_CODES["INCONCLUSIVE"] == 3 and "INCONCLUSIVE" in rows["3"]
    assert EXIT_CODES["FAIL"] == 1 and EXIT_CODES["PASS"] == 0


def test_the_produced_figures_name_a_command_the_readme_gives():
    """A marked table's figures come from the command on its mark, which must be a real command
    line and be given in the README's own text."""
    import shlex

    from harness.cli import build_parser

    text = readme()
    marks = re.findall(r"<!-- figures: (.*?) -->", text)
    assert marks
    for mark in marks:
        command = mark.split(" (")[0]
        assert f"`{command}`" in text, command
        build_parser().parse_args(shlex.split(command)[1:])


def checked_numbers(tmp_path, capsys):
    """Every number the README may print in its prose, because a test above checks it."""
    store = example_store_figures()
    slim = slim_render_figures(tmp_path, capsys)
    numbers = {str(n) for n in (store["clusters"], store["members"], store["hot"])}
    numbers |= {f"{n:,}" for n in (store["flat_bytes"], slim["before"], slim["after"])}
    numbers |= {str(n) for n in (slim["left"], slim["memories"], slim["router"])}
    numbers |= {"0", "1", "2", "3"}        # the exit codes (test_the_exit_codes_are_the_ones_the_commands_use)
    numbers |= {"3.11"}                    # test_python_version_and_claude_code_version
    return numbers


# A number as prose writes it: 7, 18,583, 0.75, 2.65 (of "2.65x"), 2.1.328; not part of a word.
FIGURE = r"(?<![\w.])\d[\d,]*(?:\.\d+)*(?!\d)"


def prose(text):
    """The README without fenced blocks, inline code, links' targets, marked regions and
    section signs, where figures would not be prose."""
    text = re.sub(r"^```.*?^```$", " ", text, flags=re.S | re.M)
    text = re.sub(r"<!-- (figures|config-table): .*?<!-- /\1 -->", " ", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"§\s?\d+(\.\d+)?", " ", text)
    return text


def test_every_figure_in_the_prose_is_checked(tmp_path, capsys):
    from harness.lab.client import TESTED_VERSION

    allowed = checked_numbers(tmp_path, capsys) | {TESTED_VERSION}
    found = set(re.findall(FIGURE, prose(readme())))
    found = {n.rstrip(",.") for n in found}
    assert found <= allowed, f"figures no test checks: {sorted(found - allowed)}"


@pytest.mark.parametrize("planted", ["It routes 97 of 133 prompts.", "a 2.65x saving", "about 1,519 bytes"])
def test_a_planted_unchecked_figure_is_caught(tmp_path, capsys, planted):
    """The failing case of the figure guard."""
    from harness.lab.client import TESTED_VERSION

    allowed = checked_numbers(tmp_path, capsys) | {TESTED_VERSION}
    found = set(re.findall(FIGURE, prose(readme() + "\n" + planted + "\n")))
    assert not {n.rstrip(",.") for n in found} <= allowed


def test_every_link_to_a_file_points_at_one():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme()):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), target
