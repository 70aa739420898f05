"""store_svc.terms splits a record into words: an ASCII text takes a plain pattern, with the same
words as the Unicode one."""

from __future__ import annotations

import pytest

from store_svc import terms

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("text", ["Fixed the NPE in TokenRefresher_v2 (grpcio 1.67) on musl", "ok, thanks!",
                                  "Caf\u00e9 na\u00efve \u00fcber", "\u212aelvin sign lowers to ascii k",
                                  "x_y 12 ab3 3ab \t\nTAB", "\u65e5\u672c\u8a9e and words", ""])
def test_ascii_text_splits_as_the_unicode_pattern_does(text):
    """terms() takes a plain [a-z0-9] pattern when the lowercased text is ASCII: the same words as
    the Unicode one (letters and digits, no underscore)."""
    lowered = text[: terms.TERMS_CHARS].lower()
    unicode_words = set(terms._WORD.findall(lowered)) - terms.STOP_WORDS
    assert terms.terms(text) == {w for w in unicode_words if len(w) > 1 and not w.isdigit()}
