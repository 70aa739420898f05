"""Spec 003's two output formats, with its `claude-mem://` citation URIs.

index: numbered `[type] title`, then `Date:` and `Source:` lines (about 10x fewer tokens);
full: the same head, then the record's narrative, facts, concepts and files (observations),
request/investigated/learned/completed/next steps (session summaries) or the prompt text.
Record contents are data: the full format opens with mnemo's evidence notice.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.inert import inert
from mnemo.v1 import common_pb2
from mnemo.vocab import EVIDENCE_NOTICE

SCHEME = "claude-mem://"
_KIND_PATH = {common_pb2.DOC_KIND_OBSERVATION: "observation", common_pb2.DOC_KIND_SUMMARY: "session",
              common_pb2.DOC_KIND_PROMPT: "user-prompt"}
_KIND_LABEL = {common_pb2.DOC_KIND_SUMMARY: "session", common_pb2.DOC_KIND_PROMPT: "prompt"}
PROMPT_INDEX_CHARS = 120


def citation(ref: common_pb2.Ref) -> str:
    return f"{SCHEME}{_KIND_PATH.get(ref.kind, 'observation')}/{ref.id}"


def shown_date(created_at: str) -> str:
    """`2025-10-21 14:23:45` from an ISO timestamp (as spec 003 shows dates)."""
    return created_at.replace("T", " ")[:19]


def _head(number: int, row: common_pb2.IndexRow) -> list[str]:
    label = row.type or _KIND_LABEL.get(row.ref.kind, "observation")
    title = _one_line(row.title)
    if row.ref.kind == common_pb2.DOC_KIND_PROMPT and len(title) > PROMPT_INDEX_CHARS:
        title = title[:PROMPT_INDEX_CHARS - 3] + "..."
    return [f"{number}. [{label}] {title}", f"   Date: {shown_date(row.created_at)}",
            f"   Source: {citation(row.ref)}"]


def index_text(rows: Sequence[common_pb2.IndexRow], offset: int, total: int, what: str) -> str:
    if not rows:
        return f"No {what} found."
    blocks = ["\n".join(_head(offset + i + 1, row)) for i, row in enumerate(rows)]
    footer = (f"Showing {offset + 1}-{offset + len(rows)} of {total}. "
              "Use format \"full\" only for the items you need.")
    return "\n\n".join(blocks) + "\n\n" + footer


def _one_line(text: str) -> str:
    """A record's value on one line, inert (mnemo.inert): it cannot start a line of the reply
    nor reorder what a reader sees (bidi overrides)."""
    return " ".join(inert(text).split())


def _lines(label: str, values: Sequence[str]) -> list[str]:
    return [f"   {label}: {', '.join(_one_line(v) for v in values)}"] if values else []


def _observation_body(obs: common_pb2.Observation) -> list[str]:
    body = [f"   {_one_line(obs.subtitle)}"] if obs.subtitle else []
    if obs.narrative:
        body.append(f"   Narrative: {_one_line(obs.narrative)}")
    body += [f"   - {_one_line(fact)}" for fact in obs.facts]
    return (body + _lines("Concepts", obs.concepts) + _lines("Files read", obs.files_read)
            + _lines("Files modified", obs.files_modified))


def _summary_body(summary: common_pb2.Summary) -> list[str]:
    parts = (("Request", summary.request), ("Investigated", summary.investigated), ("Learned", summary.learned),
             ("Completed", summary.completed), ("Next steps", summary.next_steps), ("Notes", summary.notes))
    body = [f"   {label}: {_one_line(text)}" for label, text in parts if text]
    return body + _lines("Files edited", summary.files_edited)


def record_body(record: common_pb2.Record) -> list[str]:
    kind = record.WhichOneof("record")
    if kind == "observation":
        return _observation_body(record.observation)
    if kind == "summary":
        return _summary_body(record.summary)
    if kind == "prompt":
        return [f"   Prompt: {_one_line(record.prompt.prompt_text)}"]
    return []


def full_text(rows: Sequence[common_pb2.IndexRow], records: Sequence[common_pb2.Record], offset: int,
              total: int, what: str) -> str:
    if not rows:
        return f"No {what} found."
    blocks = ["\n".join(_head(offset + i + 1, row) + record_body(record))
              for i, (row, record) in enumerate(zip(rows, records, strict=True))]
    return f"{EVIDENCE_NOTICE}\n\n" + "\n\n".join(blocks) + f"\n\nShowing {offset + 1}-{offset + len(rows)} of {total}."
