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

from capture.drafts import relative_path, unique
from capture.fixes import directory_and_command, failure_keys, is_change
from capture.observer import ToolEvent, command_kind, command_label, shell_verdict
from capture.outcome import UNKNOWN
from mnemo.privacy import clean
from mnemo.v1 import common_pb2
from mnemo.vocab import SUMMARY_FIELDS

FIELD_MAX = 1200
NEXT_STEPS_MAX = 8
NEXT_STEPS_CHARS = 4000  # room for every still-failing command: about 30 of 120 characters


@dataclass(frozen=True)
class ObservationView:
    """What the summary needs of a stored observation."""

    type: str
    title: str
    facts: Sequence[str] = ()
    files_read: Sequence[str] = ()
    files_modified: Sequence[str] = ()


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
    runs = _runs(tool_events)
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
    """As titles show it, with the directory it ran in when that is not the session's."""
    key: tuple[str, str]
    """(directory, command): what makes two runs "the same command"."""
    kind: str
    failed: bool
    passed: bool
    detail: str
    changes_before: int
    """How many changes (edits, installs) the stretch saw before this run."""
    unknown: bool = False
    """Nothing told how it ended (a pipe hid the status, the output said nothing)."""

    @staticmethod
    def of(event: ToolEvent, changes_before: int) -> _Run:
        inputs = event.tool_input if isinstance(event.tool_input, dict) else {}
        command = str(inputs.get("command", "")).strip()
        verdict = shell_verdict(event)
        names = ", ".join(verdict.failing[:5])
        detail = "; ".join(unique(d for d in (verdict.counts, names or verdict.error_line) if d))
        [key] = failure_keys(event) or [command]
        directory, _ = directory_and_command(event.cwd, command)
        where = relative_path(directory, event.cwd) if directory != event.cwd else ""
        label = f"`{command_label(command, 120)}`" + (f" in {where}" if where else "")
        failed = verdict.failed and not verdict.note  # a grep without a match is nothing to fix
        return _Run(label, (directory, key), command_kind(command), failed, verdict.succeeded, detail,
                    changes_before, verdict.outcome == UNKNOWN)


def _runs(tool_events: Sequence[ToolEvent]) -> list[_Run]:
    """The stretch's shell runs, each knowing how many changes came before it."""
    runs, changes = [], 0
    for event in tool_events:
        if event.tool_name == "Bash":
            run = _Run.of(event, changes)
            runs.append(run)
            changes += run.passed and is_change(event)
        elif not event.failed_call and is_change(event):
            changes += 1
    return runs


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
            parts.append(f"{run.command} failed" + (f": {run.detail}" if run.detail else ""))
    fixed = _fixed_runs(runs)
    parts.extend(f"{command} failed at first and passed after the changes" for command in fixed)
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
    # Each test command's LAST run in its directory: one passing suite says nothing of another.
    passing = [r for r in _last_runs(runs) if r.kind == "test" and r.passed]
    parts.extend(f"Tests pass: {r.command}" + (f" ({r.detail})" if r.detail else "") for r in passing[-3:])
    commits = [r.command for r in runs if re.match(r"`git (commit|push|merge)", r.command) and r.passed]
    parts.extend(f"Ran {c}" for c in commits[:3])
    return "; ".join(parts) + ("." if parts else "")


def _next_steps(runs: list[_Run], last_message: str) -> str:
    failing, unsure = [], []
    failed_once = {run.key for run in runs if run.failed}
    for run in _last_runs(runs):  # every command still failing at the end of the stretch
        if run.failed and run.kind != "inspect":
            failing.append(run)
        elif run.unknown and run.key in failed_once:
            # its last run said nothing of how it ended (a pipe hid the status): it may still fail
            unsure.append(run.command)
    parts = _still_failing(failing)
    parts.extend(f"Check whether {command} passes now: it failed before, and its last run does not say"
                 for command in unsure)
    sentences = [s for line in last_message.splitlines() for s in re.split(r"(?<=[.!?])\s+", line)]
    said = [line.strip(" -*") for line in sentences
            if re.search(r"\b(next step|todo|remaining|still need|follow[- ]up|left to do)\b", line, re.I)]
    # what the runs left to do, all of it; the assistant's own words in the lines left
    return "\n".join(unique(parts + said[:max(0, NEXT_STEPS_MAX - len(parts))]))


def _still_failing(failing: list[_Run]) -> list[str]:
    """One line per still-failing command with its detail; when they would not all fit in the
    field, the last ones without details on one line: every one is named, whatever the count."""
    detailed = len(failing) if len(failing) <= NEXT_STEPS_MAX else NEXT_STEPS_MAX - 1
    while True:
        parts = [f"Fix the failing {run.command}" + (f" ({_cap(run.detail, 160)})" if run.detail else "")
                 for run in failing[:detailed]]
        if detailed < len(failing):
            parts.append("Also still failing: " + ", ".join(run.command for run in failing[detailed:]))
        if detailed == 0 or len("\n".join(parts)) <= NEXT_STEPS_CHARS - 400:  # room for what else is to do
            return parts
        detailed -= 1


def _notes(tool_events: Sequence[ToolEvent], observations: Sequence[ObservationView]) -> str:
    if not tool_events:
        return ""
    counts = Counter(e.tool_name for e in tool_events)
    listed = ", ".join(f"{n} {name}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{len(tool_events)} tool uses ({listed}); {len(observations)} observations."


def _fixed_runs(runs: list[_Run]) -> list[str]:
    """Commands that failed, then passed in the same directory with a change in between
    (as capture.fixes decides a "Fixed" record)."""
    failed_at: dict[tuple[str, str], int] = {}  # key -> changes seen when it last failed
    fixed: list[str] = []
    for run in runs:
        if run.failed:
            failed_at[run.key] = run.changes_before
        elif run.passed and run.key in failed_at and failed_at.pop(run.key) < run.changes_before \
                and run.command not in fixed:
            fixed.append(run.command)
    return fixed


def _last_runs(runs: list[_Run]) -> list[_Run]:
    """The last run of each command (per directory), in the order of those last runs."""
    last = {run.key: (i, run) for i, run in enumerate(runs)}
    return [run for _, run in sorted(last.values(), key=lambda pair: pair[0])]


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
    for name in SUMMARY_FIELDS:
        limit = NEXT_STEPS_CHARS if name == "next_steps" else FIELD_MAX
        setattr(summary, name, _cap(clean(getattr(summary, name)), limit))
    return summary
