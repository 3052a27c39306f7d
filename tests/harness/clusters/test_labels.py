"""The labels file's parsing: every schema problem named by its line (how labels shape a build is
tested in test_builder.py)."""

import pytest

from harness.clusters import labels as labelsfile
from router.errors import InputError


@pytest.mark.parametrize("text, line, message", [
    ("nonsense: 1\n", 1, "unknown key 'nonsense'"),
    ("clusters:\n  layer1_a:\n    colour: red\n", 3, "unknown key 'colour' in cluster layer1_a"),
    ("clusters:\n  bad id!:\n    label: x\n", 2, "invalid cluster id"),
    ("clusters:\n  layer1_a:\n    label: x\n  layer1_a:\n    label: y\n", 4, "listed twice"),
    ("clusters:\n  layer1_a: [x]\n", 2, "must map to label/tags/aliases/pin"),
    ("clusters:\n  layer1_a:\n    label: [x]\n", 3, "must be text"),
    ("clusters:\n  layer1_a:\n    tags: {a: b}\n", 3, "must be a list"),
    ("clusters:\n  layer1_a:\n    tags: [the, 'a, b']\n", 3, "no routable word"),
    ("clusters:\n  layer1_a:\n    pin:\n      - [nested]\n", 4, "plain word"),
    ("clusters:\n  layer1_a:\n    tags: [fine, 'a \u00b7 b']\n", 3, "field separator"),
    ("clusters: [a, b]\n", 1, "must map cluster ids"),
    ("- just a list\n", 1, "mapping with a 'clusters:' key"),
    ("clusters:\n  layer1_a:\n    label: x\n   bad: indent\n", 4, "invalid YAML"),
])
def test_labels_schema_errors_name_the_line(text, line, message):
    with pytest.raises(InputError) as err:
        labelsfile.parse_labels_text(text, "labels.yaml")
    assert err.value.line == line, str(err.value)
    assert message in str(err.value)
    assert str(err.value).startswith(f"labels.yaml:{line}")
    assert err.value.exit_code == 2


def test_labels_errors_are_all_reported():
    with pytest.raises(labelsfile.LabelsError) as err:
        labelsfile.parse_labels_text("clusters:\n  layer1_a:\n    colour: red\n  layer1_b:\n    size: 3\n", "l.yaml")
    assert [p[0] for p in err.value.problems] == [3, 5]
    assert "and 1 more" in str(err.value)


def test_label_tags_split_on_commas_in_lists_and_strings():
    labels = labelsfile.parse_labels_text("clusters:\n  layer1_a:\n    tags: ['docker, compose', wsl]\n"
                                       "    aliases: 'container, image'\n")
    (entry,) = labels.clusters
    assert entry.tags == ("docker", "compose", "wsl") and entry.aliases == ("container", "image")


def test_empty_labels_file_is_no_labels():
    assert labelsfile.parse_labels_text("", "l.yaml").clusters == ()
    assert labelsfile.parse_labels_text("clusters:\n", "l.yaml").clusters == ()
    (entry,) = labelsfile.parse_labels_text("clusters:\n  layer1_a:\n    pin:\n    tags:\n", "l.yaml").clusters
    assert entry.pins == () and entry.tags == ()
