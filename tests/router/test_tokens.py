import pytest

from router.tokens import STOPWORDS, fold_plural, slug_words, tokenize


@pytest.mark.parametrize(
    "text, expected_in, expected_out",
    [
        ("NODE_EXTRA_CA_CERTS is ignored", {"node_extra_ca_certs", "node", "extra", "ca", "cert", "ignored"}, {"is"}),
        ("why does setx not work", {"setx", "work"}, {"why", "does", "not"}),
        ("my PUBLIC_ env var", {"public_", "public", "env", "var"}, {"my"}),
        ("Secrets and variables", {"secret", "variable"}, {"and", "secrets", "variables"}),
        ("policies", {"policy"}, {"policies"}),
        ("status process analysis", {"status", "process", "analysis"}, set()),
        ("on 2026-07-22 at 5 pm", {"pm"}, {"2026", "07", "22", "5"}),
        ("a b c x", set(), {"a", "b", "c", "x"}),
        ("Café déjà-vu", {"café", "déjà", "vu"}, set()),
        ("_ __ __init__", {"__init__", "init"}, {"_", "__"}),
        # an identifier's parts lose stopwords after folding too, as plain words do
        ("feedback_tells_user others asks", {"feedback_tells_user", "feedback", "user"}, {"tell", "other", "ask"}),
        ("x_others_y", {"x_others_y"}, {"other", "others"}),
    ],
)
def test_tokenize_rule(text, expected_in, expected_out):
    tokens = tokenize(text)
    assert expected_in <= tokens
    assert not (expected_out & tokens)


def test_tokenize_is_a_set_and_lowercase():
    assert tokenize("Bash BASH bash") == {"bash"}


@pytest.mark.parametrize("word, folded", [("vars", "var"), ("aws", "aws"), ("class", "class"), ("bus", "bus"),
                                          ("queries", "query"), ("env_vars", "env_vars"), ("is", "is")])
def test_fold_plural(word, folded):
    assert fold_plural(word) == folded


def test_slug_words_include_whole_slug_and_parts():
    assert slug_words("env_bash_tool_env_var_caching") == {
        "env_bash_tool_env_var_caching", "env", "bash", "tool", "var", "caching"}


def test_stopwords_are_shipped_and_lowercase():
    assert {"the", "why", "please"} <= STOPWORDS
    assert all(w == w.lower() and w.strip() == w for w in STOPWORDS)
    # content words the router depends on must never be stopwords
    assert not ({"setx", "bash", "env", "secret", "memory", "decide"} & STOPWORDS)
