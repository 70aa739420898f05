"""mnemo.query: our own parser; FTS5 expressions are built by code from quoted tokens."""

from __future__ import annotations

import pytest

from mnemo.query import MAX_QUERY_CHARS, MAX_TERMS, has_cjk, like_pattern, parse, to_fts5

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
    parsed = parse('foo-bar NEAR(a b) "x" OR y* NOT z col:val')
    assert to_fts5(parsed) == '"foo" OR "bar" OR "NEAR" OR "b" OR "x" OR "y" OR "z" OR "col" OR "val"'


def test_operator_mode_recognises_phrases_prefixes_or_and_not():
    parsed = parse('"login flow" OR auth* -legacy NOT old', operators=True)
    assert to_fts5(parsed) == '("login flow" OR "auth" *) NOT ("legacy" OR "old")'


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
    assert parsed.cjk == ("用户登录失败", "ログイン")
    assert to_fts5(parsed) == '"error"'
    assert has_cjk("abc 登录") and not has_cjk("plain", None)


def test_terms_keep_their_case_for_the_tokenizer_and_repeat_once():
    parsed = parse("Login LOGIN login Ꭰx")
    assert to_fts5(parsed) == '"Login" OR "Ꭰx"'
    assert parsed.tokens == ("login", "login", "login", "ꭰx")


def test_like_pattern_escapes_wildcards():
    assert like_pattern("50%_a\\b") == "%50\\%\\_a\\\\b%"
