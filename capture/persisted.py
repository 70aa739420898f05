"""The whole output Claude Code kept aside, read back for the observer.

Claude Code cuts a successful Bash output past 30,000 characters to its head and keeps the
whole in the file named by `persistedOutputPath` (under the session's folder beside its
transcript, in `tool-results/`). A test run's summary line and failing names are at the
end, so the hook adds the file's tail to the response (`persistedOutputTail`), privacy-
cleaned and capped. Only a regular file in a `tool-results` folder is read (under the
transcript's folder when the payload names one): the path is host input.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PERSISTED_PATH = "persistedOutputPath"
PERSISTED_TAIL = "persistedOutputTail"
TAIL_MAX_CHARS = 20_000  # the end of the output: summaries, failing names, the last error
_READ_MAX_BYTES = TAIL_MAX_CHARS * 4  # utf-8: at most 4 bytes a character


def with_persisted_output(response: Any, transcript_dir: Path | str | None = None) -> Any:
    """`response` with the persisted output's tail added when the host persisted it."""
    if not isinstance(response, dict) or not isinstance(response.get(PERSISTED_PATH), str):
        return response
    tail = _tail(Path(response[PERSISTED_PATH]), transcript_dir)
    if not tail:
        return response
    from mnemo.privacy import clean

    return {**response, PERSISTED_TAIL: clean(after_private_end(tail))[-TAIL_MAX_CHARS:]}


def after_private_end(text: str) -> str:
    """A piece of text that may start inside a private region whose opening tag was cut away
    (a file's tail, what follows a host's "[K characters truncated]"): what follows the last
    closing tag that no opening tag in the piece matches. Cleaning alone would keep the private
    text before such a tag, dropping only the tag."""
    if "</" not in text:
        return text
    depth, start = 0, 0
    for tag in _private_tags(text):
        if not tag.group(1):
            depth += 1
        elif depth:
            depth -= 1
        else:
            start = tag.end()  # the end of a region opened before the piece began
    return text[start:]


def before_private_start(text: str) -> str:
    """A piece of text that may end inside a private region whose closing tag was cut away: what
    comes before the opening tag of the region still open at its end."""
    depth, end = 0, len(text)
    for tag in _private_tags(text):
        if not tag.group(1):
            end = tag.start() if depth == 0 else end
            depth += 1
        elif depth:
            depth -= 1
    return text[:end] if depth else text


def _private_tags(text: str) -> Iterator[re.Match[str]]:
    from mnemo.privacy import PRIVATE_TAGS

    return re.finditer(r"<(/?)(?:" + "|".join(map(re.escape, PRIVATE_TAGS)) + r")\b[^>]*>", text, re.IGNORECASE)


def error_cut_safely(error: str) -> str:
    """A failure's `error` cut by the host in the middle: each side cleaned of a private region
    the cut split (the head ends before one it opened, the tail starts after one it closes), so
    no private text survives on either side and the output's end is still read."""
    cut = _HOST_CUT.search(error)
    if not cut:
        return error
    return before_private_start(error[:cut.start()]) + cut.group(0) + after_private_end(error[cut.end():])


def _tail(path: Path, transcript_dir: Path | str | None) -> str:
    try:
        resolved = path.resolve(strict=True)
        if resolved.parent.name != "tool-results" or not resolved.is_file():
            return ""
        if transcript_dir and not resolved.is_relative_to(Path(transcript_dir).resolve()):
            return ""
        with open(resolved, "rb") as stream:
            size = stream.seek(0, os.SEEK_END)
            stream.seek(max(0, size - _READ_MAX_BYTES))
            data = stream.read(_READ_MAX_BYTES)
    except (OSError, ValueError):
        return ""
    text = data.decode("utf-8", "replace")
    return text[text.find("\n") + 1:] if size > _READ_MAX_BYTES else text  # from a whole line


# --------------------------------------------------------------------------------------
# what a failure's `error` kept

# Claude Code's PostToolUseFailure `error` is "Exit code N\n" and the output's first 30,000
# characters; past 10,000 characters, only their first and last 5,000 around this marker.
# No file keeps the rest (measured with the real CLI: no persistedOutputPath, no tool-results
# file for a failure).
_HOST_CUT = re.compile(r"\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n")
HOST_OUTPUT_MAX = 30_000
HOST_ERROR_KEEP = 10_000


def host_cut(error: str) -> str:
    """What the host left out of a failure's `error` (the whole text, "Exit code N" line
    included), in a sentence; "" when it left nothing out."""
    cut = _HOST_CUT.search(error)
    if not cut:
        return ""
    prefix = re.match(r"\s*Exit code:? \d+\r?\n", error)
    before_cut = int(cut.group(1)) + HOST_ERROR_KEEP - (prefix.end() if prefix else 0)
    if before_cut >= HOST_OUTPUT_MAX:
        return ("The host kept only the first 5,000 and the last 5,000 of the output's first 30,000 characters: "
                "its end (a summary, the failing names) did not arrive")
    return f"The host left out {int(cut.group(1)):,} characters in the middle of the output"


# --------------------------------------------------------------------------------------
# what the store keeps

_CUT_MARK = "\n[... {n} characters cut ...]\n"


def fit_response(response: Any, cap_bytes: int) -> Any:
    """`response` small enough that its JSON stays whole under the store's cap
    (tool_uses_cap_bytes cuts the bytes, which would leave JSON nobody can read back at Stop):
    the longest text is halved until it fits, keeping its head and, three times longer, its
    tail, where summaries and failing names are."""
    if not isinstance(response, dict) or cap_bytes <= 0:
        return response
    budget = int(cap_bytes * 0.9)  # the store's own cleaning may lengthen a little
    fitted = dict(response)
    for _ in range(64):
        excess = _size(fitted) - budget
        longest = max((k for k, v in fitted.items() if isinstance(v, str)), key=lambda k: len(fitted[k]), default="")
        if excess <= 0 or not longest or len(fitted[longest]) < 64:
            return fitted
        text = fitted[longest]
        fitted[longest] = _head_and_tail(text, max(len(text) // 2, len(text) - excess))
    return fitted


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))


def _head_and_tail(text: str, keep: int) -> str:
    head = keep // 4
    tail = keep - head
    return text[:head] + _CUT_MARK.format(n=len(text) - keep) + (text[-tail:] if tail else "")
