"""mnemo.privacy: private regions removed case-insensitively and nesting-safely; secrets masked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemo.privacy import MASK, clean, is_entirely_private, mask_secrets, strip_private
from store_svc.writes import clean as store_clean

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hi <private>x</private> there", "hi  there"),
        ("a <PRIVATE>y</Private> b", "a  b"),
        ("<private>nested <private>z</private> tail</private> end", "end"),
        ("keep <private a='1'>attr</private>", "keep"),
        ("before <system-reminder>r</system-reminder> after", "before  after"),
        ("open <private>never closed", "open"),
        ("stray </private> tag", "stray  tag"),
        ("no tags at all", "no tags at all"),
        ("<privateer>is not a tag</privateer>", "<privateer>is not a tag</privateer>"),
    ],
)
def test_strip_private(text, expected):
    assert strip_private(text) == expected


def test_entirely_private():
    assert is_entirely_private("<private>all</private>") and is_entirely_private(" <PRIVATE>x</PRIVATE> ")
    assert not is_entirely_private("x <private>y</private>") and not is_entirely_private("")


@pytest.mark.parametrize(
    "secret",
    [
        "sk-ant-api03-abcdefghijklmnopqrstu", "ghp_" + "a" * 36, "github_pat_" + "b" * 30, "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abc", "AIza" + "c" * 35, "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKK",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_mask_secrets_known_shapes(secret):
    masked = mask_secrets(f"value {secret} end")
    assert secret not in masked and MASK in masked


def test_mask_secrets_bearer_and_assignments_in_any_case():
    assert mask_secrets("Authorization: Bearer abcdefghijklmnop") == f"Authorization: Bearer {MASK}"
    assert mask_secrets("API_KEY=supersecretvalue1") == f"API_KEY={MASK}"
    assert mask_secrets('db_Password: "hunter2hunter2"') == f'db_Password: "{MASK}"'
    assert mask_secrets("token=short") == "token=short"


def test_clean_strips_then_masks():
    assert clean("<private>sk-ant-xxxxxxxxxxxxxxxxxxxx</private> token=abcdefghijk") == f"token={MASK}"


@settings(deadline=None)
@given(st.text(max_size=200) | st.sampled_from(["sk-ant-abcdefghijklmnopqrstuv", "Bearer abcdefghijklmnopq",
                                                 "password = hunter2hunter2", "<private>x</private>y"]))
def test_the_store_fast_path_equals_clean(text):
    assert store_clean(text) == clean(text)
