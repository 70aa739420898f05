"""The deterministic session summary written at Stop.

It covers what happened since the previous Stop (claude-mem also writes one summary per
Stop): the prompts of that stretch, its tool uses and the observations compiled from
them, plus the last assistant message from the transcript. Same inputs, same summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from capture.drafts import unique
from capture.observer import ToolEvent, command_kind, command_label, shell_verdict
from mnemo.privacy import clean
from mnemo.v1 import common_pb2

FIELD_MAX = 1200


@dataclass(frozen=True)
class ObservationView:
    """What the summary needs of a stored observation."""

    type: str
    title: str
    facts: Sequence[str] = ()
    files_read: Sequence[str] = ()
    files_modified: Sequence[str] = ()


SUMMARY_TEXTS = ("request", "investigated", "learned", "completed", "next_steps", "notes")


def is_empty(summary: common_pb2.Summary) -> bool:
    """Nothing worth storing: notes alone (counts of tool uses) do not make a summary."""
    return not any((summary.request, summary.investigated, summary.learned, summary.completed,
                    summary.next_steps))


def summarize(
    prompts: Sequence[str],
    tool_events: Sequence[ToolEvent],
    observations: Sequence[ObservationView],
    last_assistant_message: str = "",
) -> common_pb2.Summary:
    """The texts and files of the summary; the caller adds whose it is (session, project, ids)."""
    files_read = unique(f for o in observations for f in o.files_read)
    files_edited = unique(f for o in observations for f in o.files_modified)
    runs = [_Run.of(e) for e in tool_events if e.tool_name == "Bash"]
    summary = common_pb2.Summary(
        request=_cap(" / ".join(p.strip() for p in prompts if p.strip())),
        investigated=_investigated(files_read, observations),
        learned=_learned(runs, observations, last_assistant_message),
        completed=_completed(files_edited, runs),
        next_steps=_next_steps(runs, last_assistant_message),
        notes=_notes(tool_events, observations),
        files_read=files_read,
        files_edited=files_edited,
    )
    return _cleaned(summary)


@dataclass(frozen=True)
class _Run:
    command: str
    kind: str
    failed: bool
    passed: bool
    detail: str

    @staticmethod
    def of(event: ToolEvent) -> _Run:
        inputs = event.tool_input if isinstance(event.tool_input, dict) else {}
        command = str(inputs.get("command", "")).strip()
        verdict = shell_verdict(event)
        names = ", ".join(verdict.failing[:5])
        detail = "; ".join(d for d in (verdict.counts, names or verdict.error_line) if d)
        return _Run(command_label(command, 120), command_kind(command), verdict.failed, verdict.succeeded, detail)


def _investigated(files_read: list[str], observations: Sequence[ObservationView]) -> str:
    parts = []
    if files_read:
        parts.append(
            "Read " + ", ".join(files_read[:15]) + (f" and {len(files_read) - 15} more" if len(files_read) > 15 else "")
        )
    searches = unique(
        fact
        for o in observations
        for fact in o.facts
        if fact.startswith(("Searched for", "Listed files matching", "Fetched", "Web search"))
    )
    parts.extend(searches[:8])
    return "; ".join(parts) + ("." if parts else "")


def _learned(runs: list[_Run], observations: Sequence[ObservationView], last_message: str) -> str:
    parts = []
    for run in runs:
        if run.failed:
            parts.append(f"`{run.command}` failed" + (f": {run.detail}" if run.detail else ""))
    fixed = _fixed_runs(runs)
    parts.extend(f"`{command}` failed at first and passed after the changes" for command in fixed)
    decisions = [o.title for o in observations if o.type == "decision"]
    parts.extend(decisions[:3])
    if last_message:
        # What the model said is a claim, not something a tool showed: labelled as such.
        parts.append(f"The assistant said (unverified): {_first_sentences(last_message)}")
    return "\n".join(unique(parts))


def _completed(files_edited: list[str], runs: list[_Run]) -> str:
    parts = []
    if files_edited:
        parts.append("Modified " + ", ".join(files_edited[:15]))
    last_tests = _last_of_kind(runs, "test")
    if last_tests and last_tests.passed:
        parts.append(f"Tests pass: `{last_tests.command}`" + (f" ({last_tests.detail})" if last_tests.detail else ""))
    commits = [r.command for r in runs if re.match(r"git (commit|push|merge)", r.command) and not r.failed]
    parts.extend(f"Ran `{c}`" for c in commits[:3])
    return "; ".join(parts) + ("." if parts else "")


def _next_steps(runs: list[_Run], last_message: str) -> str:
    parts = []
    last_by_command: dict[str, _Run] = {}
    for run in runs:
        last_by_command[run.command] = run
    for run in last_by_command.values():
        if run.failed and run.kind in ("test", "build"):
            parts.append(f"Fix the failing `{run.command}`" + (f" ({run.detail})" if run.detail else ""))
    sentences = [s for line in last_message.splitlines() for s in re.split(r"(?<=[.!?])\s+", line)]
    for line in sentences:
        if re.search(r"\b(next step|todo|remaining|still need|follow[- ]up|left to do)\b", line, re.I):
            parts.append(line.strip(" -*"))
    return "\n".join(unique(parts)[:5])


def _notes(tool_events: Sequence[ToolEvent], observations: Sequence[ObservationView]) -> str:
    if not tool_events:
        return ""
    counts = Counter(e.tool_name for e in tool_events)
    listed = ", ".join(f"{n} {name}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{len(tool_events)} tool uses ({listed}); {len(observations)} observations."


def _fixed_runs(runs: list[_Run]) -> list[str]:
    """Commands that failed and later passed in the same stretch."""
    failed_before: set[str] = set()
    fixed: list[str] = []
    for run in runs:
        if run.failed:
            failed_before.add(run.command)
        elif run.passed and run.command in failed_before and run.command not in fixed:
            fixed.append(run.command)
    return fixed


def _last_of_kind(runs: list[_Run], kind: str) -> _Run | None:
    matching = [r for r in runs if r.kind == kind]
    return matching[-1] if matching else None


def _first_sentences(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    sentences = re.split(r"(?<=[.!?])\s+", flat)
    out = ""
    for sentence in sentences:
        if len(out) + len(sentence) > limit:
            break
        out = f"{out} {sentence}".strip()
    return out or flat[:limit]


def _cap(text: str, limit: int = FIELD_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cleaned(summary: common_pb2.Summary) -> common_pb2.Summary:
    for name in SUMMARY_TEXTS:
        setattr(summary, name, _cap(clean(getattr(summary, name))))
    return summary
