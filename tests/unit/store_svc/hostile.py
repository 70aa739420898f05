"""Generated hostile query strings shared by the in-process and gRPC injection suites."""

from __future__ import annotations

import itertools

_FRAGMENTS = [
    '"', '""', "'", "*", ":", "^", "(", ")", "()", "{", "}", "[", "]", "-", "+", "NEAR", "NEAR(", "NEAR/3",
    "OR", "AND", "NOT", "or", "not", "and", "title:", "narrative:", "{title narrative}:", "rank", "bm25",
    "MATCH", "%", "_", "\\", "\\%", "%_%", "--", "/*", "*/", ";", "' OR '1'='1", "'; DROP TABLE observations; --",
    "UNION SELECT", "\x00", "\x01", "\x1b[31m", "\t", "\n", "\r\n", "\u200b", "\ufeff", "\u202e", "🔥", "é",
    "ß", "İ", "登录", "用户登录失败", "ログイン", "한국어", "ไทย", "∗", "＂", "（", "％",
]
_WORDS = ["login", "redirect", "cache", "x", "a"]


def hostile_queries() -> list[str]:
    """At least 300 strings: single fragments, fragment pairs around words, and extremes."""
    out: list[str] = list(_FRAGMENTS)
    for left, right in itertools.product(_FRAGMENTS[:24], _FRAGMENTS[20:40]):
        out.append(f"{left}login{right}")
    for fragment, word in itertools.product(_FRAGMENTS, _WORDS[:2]):
        out.append(f"{word} {fragment} {word}")
    out += [
        '"unbalanced login', 'login"', '"a" "b', "NEAR(login redirect, 2)", "login AND OR NOT redirect",
        "-", "- -login", "NOT", "OR OR OR", "* login *", "log*", "*gin", '"" OR ""', "title:login", "^login",
        "x" * 10_000, "login " * 2_000, "登" * 10_000, "\"" * 10_000, "(" * 5_000 + ")" * 5_000,
        "".join(chr(c) for c in range(1, 32)), "\ud800", "abc\udfffdef", "\ud83d\ude00",
        "SELECT * FROM observations WHERE 1=1", "login' --", '"; DELETE FROM sdk_sessions; "',
    ]
    return list(dict.fromkeys(out))
