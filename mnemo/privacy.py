"""Privacy: remove tagged private content before anything is stored, and mask secrets.

Tags are removed case-insensitively and nesting-safely: `<private>a <private>b</private>
c</private>` disappears whole (the reference leaks " c</private>"). An unclosed opening
tag hides everything after it, since the user meant it to be private.
"""

from __future__ import annotations

import re

PRIVATE_TAGS = (
    "private",
    "claude-mem-context",
    "mnemo-context",
    "system_instruction",
    "system-instruction",
    "persisted-output",
    "system-reminder",
)

_TAG = re.compile(r"<(/?)(" + "|".join(re.escape(t) for t in PRIVATE_TAGS) + r")\b[^>]*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """Text with every private region removed (tags included), trimmed."""
    if not text or "<" not in text:
        return text.strip() if text else text
    out: list[str] = []
    depth = 0
    position = 0
    for match in _TAG.finditer(text):
        closing = match.group(1) == "/"
        if depth == 0 and not closing:
            out.append(text[position : match.start()])
            depth = 1
        elif depth > 0:
            depth += -1 if closing else 1
        elif closing:  # a stray closing tag outside any region: drop just the tag
            out.append(text[position : match.start()])
        position = match.end()
    if depth == 0:
        out.append(text[position:])
    return "".join(out).strip()


def is_entirely_private(text: str) -> bool:
    """True when nothing is left once private regions are removed."""
    return bool(text and text.strip()) and not strip_private(text)


# Secrets: well-known key shapes, bearer tokens, and key=value assignments with secret-ish names.
_SECRET_PATTERNS = [
    re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
]
_BEARER = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{12,}")
_ASSIGNMENT = re.compile(
    r"(?i)\b([A-Z0-9_]*(?:api[_-]?key|secret|token|passwd|password|private[_-]?key)[A-Z0-9_]*)"
    r"(\s*[:=]\s*[\"']?)([^\s\"'&]{8,})"
)

MASK = "[REDACTED]"


def mask_secrets(text: str) -> str:
    """Text with API keys, tokens and secret assignments replaced by [REDACTED]."""
    if not text:
        return text
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    return _ASSIGNMENT.sub(lambda m: m.group(1) + m.group(2) + MASK, text)


def clean(text: str) -> str:
    """What every stored text goes through: private regions out, secrets masked."""
    return mask_secrets(strip_private(text))
