"""How a rejected value is quoted in an error text or a log line: a short prefix, privacy-filtered.

A caller's value can be megabytes long and can carry `<private>` regions or secrets; an
error or a log line must echo neither. The prefix is cut from a cleaned window a few times
longer than what is shown, so a secret or a private region that starts before the cut is
still recognised and removed whole.
"""

from __future__ import annotations

import reprlib
from typing import Any

from mnemo.privacy import clean

PREVIEW_CHARS = 60
_WINDOW_FACTOR = 8  # the cleaned window is this many times the shown prefix
_ELLIPSIS = "..."

_REPR = reprlib.Repr()
_REPR.maxstring = PREVIEW_CHARS * _WINDOW_FACTOR
_REPR.maxother = PREVIEW_CHARS * _WINDOW_FACTOR
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 8
_REPR.maxlevel = 3


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """`value` as a short Python literal: privacy-filtered, at most `limit` characters (+ "...")."""
    if isinstance(value, str):
        window = value[: limit * _WINDOW_FACTOR]
        cleaned = clean(window)  # which also trims whitespace: kept only when it removed more than that,
        shown = repr(window if cleaned == window.strip() else cleaned)  # so "2\n" shows its \n
        cut = len(window) < len(value)
    else:
        shown = clean(_REPR.repr(value))
        cut = False
    if len(shown) > limit or cut:
        return shown[:limit] + _ELLIPSIS
    return shown


def shorten(text: str, limit: int) -> str:
    """Free text (a message, a method name) cut to `limit` characters, privacy-filtered."""
    cleaned = clean(text[: limit * _WINDOW_FACTOR])
    if len(cleaned) > limit or len(text) > limit * _WINDOW_FACTOR:
        return cleaned[:limit] + _ELLIPSIS
    return cleaned
