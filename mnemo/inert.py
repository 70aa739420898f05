"""Inert text: what a record or a file holds, made unable to change a reply's structure or to
hide from its reader. Line breaks and tabs become spaces, other control characters U+FFFD, and
invisible format characters (zero-width, bidi overrides such as U+202E, lone surrogates, private
use) are dropped. Shared by search_svc's renderer and the gateway's own texts (code navigation,
the legacy profile), so every reply a model reads is cleaned the same way.
"""

from __future__ import annotations

import unicodedata

# Characters that end a line in some reader: never passed through in one-line text.
LINE_BREAKS = frozenset({"\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"})


def clean_char(ch: str, keep_newline: bool = False) -> str:
    if ch == "\n" and keep_newline:
        return ch
    if ch in LINE_BREAKS or ch == "\t":
        return " "
    category = unicodedata.category(ch)
    if category == "Cc":
        return "\ufffd"
    if category in ("Cf", "Cs", "Co"):
        return ""
    return ch


def inert(text: str, keep_newline: bool = False) -> str:
    """`text` with every character cleaned (see the module); printable ASCII is returned as it is."""
    if text.isascii() and text.isprintable():
        return text  # nothing to change: skipping the per-character pass is most of a reply's render time
    return "".join(clean_char(ch, keep_newline) for ch in text)
