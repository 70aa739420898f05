"""store_svc.terms: which words of a record count for its specificity, and the mean idf."""

from __future__ import annotations

import json
import math

import pytest

from store_svc import terms

pytestmark = pytest.mark.unit


def test_words_are_lowercased_and_distinct():
    assert terms.terms("Fixed the NPE in TokenRefresher; the NPE is gone") == {"fixed", "gone", "npe", "tokenrefresher"}


@pytest.mark.parametrize(("text", "expected"), [
    ("a 2024 and 42 x", set()),  # stop-words, digit runs and one-character words do not count
    ("cache_key v2", {"cache", "key", "v2"}),  # underscores split words, as the full-text tokenizer does
    ("用户 登录", {"用户", "登录"}),
    ("", set()),
])
def test_what_counts_as_a_word(text, expected):
    assert terms.terms(text) == expected


def test_only_the_head_of_a_long_record_counts():
    text = "alpha " * (terms.TERMS_CHARS // 6 + 1) + "omega"
    assert "alpha" in terms.terms(text) and "omega" not in terms.terms(text)


def test_the_sqlite_function_returns_json():
    assert json.loads(terms.terms_json("Build broke, build")) == ["broke", "build"]
    assert terms.terms_json(None) == "[]"


def test_specificity_is_the_mean_idf_of_the_counted_words():
    docs = {"build": 50, "zebrafish": 1}
    words = {"both": {"build", "zebrafish"}, "one known": {"build", "never-counted"}, "none": {"never-counted"}}
    got = terms.specificities(words, docs, 100)
    assert got["both"] == pytest.approx((math.log(2) + math.log(100)) / 2)
    assert got["one known"] == pytest.approx(math.log(2))
    assert got["none"] == 0.0
    assert terms.specificities(words, docs, 0) == {"both": 0.0, "one known": 0.0, "none": 0.0}
