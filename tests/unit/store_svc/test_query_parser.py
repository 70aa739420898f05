"""mnemo.query: our own parser; FTS5 expressions are built by code from quoted tokens."""

from __future__ import annotations

import pytest

from mnemo.query import MAX_QUERY_CHARS, MAX_TERMS, Run, has_cjk, like_pattern, parse, to_fts5

pytestmark = pytest.mark.unit


def test_a_question_becomes_a_ranked_or_of_content_words():
    parsed = parse("How did we fix the login redirect bug?")
    assert to_fts5(parsed) == '"fix" OR "login" OR "redirect" OR "bug"'
    assert parsed.tokens == ("how", "did", "we", "fix", "the", "login", "redirect", "bug")


def test_only_stop_words_are_kept_so_the_caller_can_decide():
    parsed = parse("what is it")
    assert parsed.content_words == ()
    assert to_fts5(parsed) == '"what" OR "is" OR "it"'


def test_punctuation_splits_words_and_operators_are_plain_words_without_operator_mode():
    # Without operators nothing the user types is syntax: NEAR, quotes and `col:` are words.
    # A capitalised OR / NOT is a word to find too (it was dropped as a stop-word), and a
    # trailing '*' is the prefix match the user meant (it was dropped, so `y*` found only "y").
    parsed = parse('foo-bar NEAR(a b) "x" OR y* NOT z col:val')
    assert to_fts5(parsed) == ('"foo" OR "bar" OR "NEAR" OR "b" OR "x" OR "OR" OR "y" * OR "NOT" OR "z" '
                               'OR "col" OR "val"')


@pytest.mark.parametrize(("text", "expected"), [
    ("Baz*", '"Baz" *'),
    ("(Baz*), qux", '"Baz" * OR "qux"'),
    ("foo*bar", '"foo" OR "bar"'),  # a star inside a word is punctuation, not a prefix
    ("foo-ba*", '"foo" OR "ba" *'),
    ("* ** *?", None),
    ("NOT", '"NOT"'),
    ("OR gate", '"OR" OR "gate"'),
    ("AND gate with NOT NULL", '"AND" OR "gate" OR "NOT" OR "NULL"'),
    ("or gate and not null", '"gate" OR "null"'),  # lowercase: ordinary stop-words
])
def test_literal_operators_in_plain_text_are_matched_as_the_user_meant(text, expected):
    assert to_fts5(parse(text)) == expected


def test_operator_mode_recognises_phrases_prefixes_or_and_not():
    parsed = parse('"login flow" OR auth* -legacy NOT old', operators=True)
    assert to_fts5(parsed) == '("login flow" OR "auth" *) NOT ("legacy" OR "old")'


def test_operator_mode_reads_and_as_a_separator_and_a_quoted_operator_word_as_text():
    assert to_fts5(parse('"error" AND "handling"', operators=True)) == '"error" OR "handling"'
    assert to_fts5(parse('gate "NOT"', operators=True)) == '"gate" OR "NOT"'
    assert to_fts5(parse("\"'exact phrase'\"", operators=True)) == '"exact phrase"'


@pytest.mark.parametrize(("text", "expected"), [
    ('title:"authentication"', '{title} : "authentication"'),
    ("title:auth", '{title} : "auth"'),
    ("TITLE:auth*", '{title} : "auth" *'),
    ('title:"login flow" redirect', '{title} : "login flow" OR "redirect"'),
    ("redirect -title:legacy", '("redirect") NOT ({title} : "legacy")'),
    ("redirect NOT title:legacy", '("redirect") NOT ({title} : "legacy")'),
    ('narrative:"a b" facts:c', '{narrative} : "a b" OR {facts} : "c"'),
    # Not a known column: the name is a word like any other, never FTS5 column syntax.
    ('col:val rank:"x y" {title}:z', '"col" OR "val" OR "rank" OR "x y" OR "title" OR "z"'),
    ("title:", '"title"'),
    ('title:"}:{ " OR title:x', '{title} : "x"'),
])
def test_operator_mode_builds_column_filters_in_code(text, expected):
    assert to_fts5(parse(text, operators=True)) == expected


def test_a_column_filter_uses_each_tables_own_column_and_drops_terms_a_table_cannot_hold():
    parsed = parse("title:login -narrative:old flow", operators=True)
    assert to_fts5(parsed, {"title": "request"}) == '{request} : "login" OR "flow"'
    assert to_fts5(parse("narrative:login", operators=True), {"title": "request"}) is None
    assert parsed.restricting_operators == ("NOT", "narrative:", "title:")
    assert parse("title:登录", operators=True).cjk == (Run("登录", "title"),)
    assert parse("title:login", operators=False).terms[0].column == ""  # plain text: `title` is a word


def test_operator_mode_with_unbalanced_quote_and_lone_operators_still_builds_a_safe_expression():
    assert to_fts5(parse('"unbalanced', operators=True)) == '"unbalanced"'
    assert to_fts5(parse("OR NOT - * \"\"", operators=True)) is None
    assert parse("-only", operators=True).is_empty and parse("-only", operators=True).has_exclusions


def test_control_characters_and_lone_surrogates_do_not_crash():
    parsed = parse("abc\x00def\ud800ghi\x1b[0m")
    assert to_fts5(parsed) == '"abc" OR "def" OR "ghi" OR "0m"'


def test_input_is_capped_and_terms_are_bounded():
    parsed = parse(" ".join(f"w{i}" for i in range(5000)))
    assert len(parsed.text) == MAX_QUERY_CHARS
    assert len(parsed.terms) == MAX_TERMS


def test_cjk_runs_are_kept_apart_for_the_substring_path():
    parsed = parse("用户登录失败 error ログイン")
    assert parsed.cjk == (Run("用户登录失败"), Run("ログイン"))
    assert to_fts5(parsed) == '"error"'
    assert has_cjk("abc 登录") and not has_cjk("plain", None)


def test_terms_keep_their_case_for_the_tokenizer_and_repeat_once():
    parsed = parse("Login LOGIN login Ꭰx")
    assert to_fts5(parsed) == '"Login" OR "Ꭰx"'
    assert parsed.tokens == ("login", "login", "login", "ꭰx")


def test_like_pattern_escapes_wildcards():
    assert like_pattern("50%_a\\b") == "%50\\%\\_a\\\\b%"


@pytest.mark.parametrize(("text", "operators", "groups", "alternatives"), [
    ("hooks implementation", False, [["hooks", "implementation"]], ()),
    ("bazel OR oauth", False, [["bazel"], ["oauth"]], ("bazel", "oauth")),  # OR between words, in plain text too
    ("OR gate", False, [["OR", "gate"]], ()),  # a leading OR is a word
    ('"login flow" OR auth* -legacy', True, [["login flow"], ["auth"]], ("login flow", "auth")),
    ("login OR the", False, [["login"]], ()),  # an alternative of stop-words only is none
    ("title:cache hit OR sessions.py", True, [["cache", "hit"], ["sessions", "py", "sessions py"]],
     ("cache hit", "sessions.py")),  # an identifier's evidence needs it whole
])
def test_or_separates_the_alternatives_evidence_is_judged_on(text, operators, groups, alternatives):
    parsed = parse(text, operators=operators)
    assert [[" ".join(t.words) for t in group] for group in parsed.groups] == groups
    assert all(term in parsed.terms for group in parsed.groups for term in group)
    assert parsed.alternatives == alternatives  # what the vector leg embeds, one by one


@pytest.mark.parametrize(("text", "prefix"), [
    ("SecureCookie", True), ("getHTTPResponse", True),
    ("Cookie", False), ("cookies", False), ("URLs", False),  # not camelCase, or shorter than 8
    ("zq0000A\u0660", False),  # not a name as code writes it: both backends split it their own way
])
def test_a_long_camel_case_name_is_a_prefix_term(text, prefix):
    assert [t.prefix for t in parse(text).terms] == [prefix]
