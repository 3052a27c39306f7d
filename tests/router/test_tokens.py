import pytest

from router.tokens import STOPWORDS, _load_stopwords, fold_plural, slug_words, tokenize


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
        # an identifier whose core is two characters is kept whole
        ("db_ _ab", {"db_", "db", "_ab", "ab"}, set()),
        ("_7_ _d_ 42_", set(), {"_7_", "_d_", "42_", "7", "d", "42"}),  # a core under two characters or all digits is not
    ],
)
def test_tokenize_rule(text, expected_in, expected_out):
    tokens = tokenize(text)
    assert expected_in <= tokens
    assert not (expected_out & tokens)


def test_tokenize_is_a_set_and_lowercase():
    assert tokenize("Bash BASH bash") == {"bash"}


@pytest.mark.parametrize("word, folded", [("vars", "var"), ("aws", "aws"), ("class", "class"), ("bus", "bus"),
                                          ("queries", "query"), ("env_vars", "env_vars"), ("is", "is"),
                                          # "-ies" -> "-y" only past four letters: "ties" is a plain "-s"
                                          ("ties", "tie"), ("spies", "spy"), ("lies", "lie")])
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


def test_stopword_file_format(tmp_path):
    path = tmp_path / "stopwords.txt"
    path.write_text("# header comment\n\nalpha\nbeta  # a note # with a second hash\n   gamma   \n#\n  # indented\n"
                    "d\u00e9j\u00e0\n", encoding="utf-8")
    assert _load_stopwords(str(path)) == frozenset({"alpha", "beta", "gamma", "d\u00e9j\u00e0"})


def test_shipped_stopwords_are_the_default_file():
    assert _load_stopwords() == STOPWORDS
