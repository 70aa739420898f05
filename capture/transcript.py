"""The host's session transcript (Claude Code writes one JSON object per line).

Only the tail is read: the Stop hook needs the last assistant message, and transcripts
of long sessions grow to many megabytes.
"""

from __future__ import annotations

import json
import os
from typing import Any

TAIL_BYTES = 512 * 1024


def last_assistant_message(path: str | None, tail_bytes: int = TAIL_BYTES) -> str:
    """The text of the last assistant message in a JSONL transcript ("" when none)."""
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - tail_bytes))
            chunk = fh.read()
    except OSError:
        return ""
    lines = chunk.decode("utf-8", errors="replace").splitlines()
    if len(chunk) >= tail_bytes and lines:
        lines = lines[1:]  # the first line of a tail is probably cut
    for line in reversed(lines):
        text = _assistant_text(line)
        if text:
            return text
    return ""


def _assistant_text(line: str) -> str:
    try:
        entry = json.loads(line)
    except ValueError:
        return ""
    if not isinstance(entry, dict):
        return ""
    message = entry.get("message")
    if not isinstance(message, dict):
        message = entry
    role = message.get("role") or entry.get("type")
    if role != "assistant":
        return ""
    return _text_of(message.get("content")).strip()


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block.get("text", "") for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return ""
