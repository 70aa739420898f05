"""How truthful is the rule observer on REAL tool output?

The runs are tests/fixtures/observer/real_runs.json: real tools really run in throwaway
projects by tests/fixtures/observer/generate.py (pytest, unittest, ruff, mypy, pip,
node --test, npm, jest, vitest, mocha, tsc, eslint, cargo build/test/run/clippy, gcc,
make, javac/java, git in many states, docker without a daemon, curl, sh scripts), each
with its truth: the exit status of the command itself (the first command of a pipe).

Each run is delivered four ways (tests/fixtures/observer/deliveries.py): the payload the
real Claude Code CLI sends (PostToolUse / PostToolUseFailure, truncation and
persistedOutputPath as measured), "Exit code N\\n..." text, Codex's exec text as documented
("Exit code: N\\nWall time: ...") and as the real Codex 0.171 shows it ("Process exited with
code N", recorded by codex_shapes.py). A fifth row, "codex hook", is what Codex 0.171's
PostToolUse hook gets: the output alone, no exit code, so only the output can tell; it is
held to no false claim but not to the accuracy target. Per delivery: outcome accuracy,
success claims for failed runs, failure claims for passing runs, unknowns. Per session (the
runs and edits in their real order, Claude Code payloads): "Fixed" records against the
truth (the same command in the same directory passes after failing, with an edit or an
install in between), next to the pre-issue-34 rule (a failure remembered by command head or
test runner, no change needed) as the baseline; and "Tests pass" in the session summary for
a command whose last run failed.

    .venv/bin/python -m bench.observer
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench.harness import print_load_average
from capture.drafts import ToolEvent
from capture.observer import observe
from capture.observer_shell import shell_verdict
from tests.fixtures.observer.deliveries import (
    DELIVERIES,
    HOOK_DELIVERY,
    RUN_SETS,
    all_runs,
    load_sessions,
    tool_event,
    true_fixes,
    where_and_what,
)

TARGET_ACCURACY = 0.99


def stated(event: ToolEvent) -> tuple[str, bool]:
    """(the outcome the observer's record states, whether a record of unknown outcome stays
    neutral: its title says the outcome is unknown and it is no bugfix)."""
    [draft] = observe(event)
    found = re.search(r"^Outcome: (\w+)$", "\n".join(draft.facts), re.MULTILINE)
    outcome = found.group(1) if found else "unknown"
    neutral = draft.type != "bugfix" and draft.title.endswith(("(outcome unknown)", "(interrupted)"))
    return outcome, outcome != "unknown" or neutral


def score_delivery(delivery: str, persist_dir: Path, run_set: str) -> tuple[Counter[str], list[dict[str, Any]]]:
    """Counts of right, false and unknown outcomes over a run set; the runs left unknown."""
    counts: Counter[str] = Counter()
    unknown = []
    for n, run in enumerate(all_runs(run_set)):
        said, neutral = stated(tool_event(run, delivery, persist_dir, n))
        counts["runs"] += 1
        counts["right"] += said == run["truth"]
        counts["false success"] += said == "succeeded" and run["truth"] == "failed"
        counts["false failure"] += said == "failed" and run["truth"] == "succeeded"
        counts["unknown"] += said == "unknown"
        counts["claiming unknown"] += not neutral
        if said == "unknown":
            unknown.append(run)
    return counts, unknown


# --------------------------------------------------------------------------------------
# sessions: fixes and summaries


def claimed_fixes(steps: list[dict[str, Any]], persist_dir: Path, tracker: Any) -> set[int]:
    store = tracker()
    claimed = set()
    for i, step in enumerate(steps):
        if step["kind"] == "edit":
            event = ToolEvent("Edit", {"file_path": step["file"], "old_string": step["old"],
                                       "new_string": step["new"]}, {"filePath": step["file"]}, "")
        else:
            event = tool_event(step, "claude", persist_dir, i)
        if store.after(event):
            claimed.add(i)
    return claimed


class CurrentRule:
    """capture.fixes as the hooks run it, over an in-memory store."""

    def __init__(self) -> None:
        from capture.fixes import MemoryFailures

        self.store = MemoryFailures()

    def after(self, event: ToolEvent) -> bool:
        from capture.fixes import track

        verdict = shell_verdict(event) if event.tool_name == "Bash" else None
        return track(self.store, event, verdict, {"row": 0}) is not None


class BaselineRule:
    """Before issue 34: a failure remembered under its command head and its test runner;
    any later success sharing a key is its fix."""

    _RUNNER = re.compile(r"\b(pytest|python3?\s+-m\s+(?:pytest|unittest)|npm\s+(?:run\s+)?test|jest|vitest|mocha|"
                         r"cargo\s+test|make\s+(?:test|check))\b")

    def __init__(self) -> None:
        self.failed: set[str] = set()

    def after(self, event: ToolEvent) -> bool:
        if event.tool_name != "Bash":
            return False
        command = re.sub(r"^cd\s+\S+\s*&&\s*", "", str(event.tool_input["command"]).strip())
        head = " ".join(re.split(r"\s+(?:\||2>&1|>|&&|;)\s*", command, maxsplit=1)[0].split())
        runner = self._RUNNER.search(command)
        keys = {f"cmd:{head}"} | ({f"runner:{' '.join(runner.group(1).split())}"} if runner else set())
        verdict = shell_verdict(event)
        if verdict.failed:
            self.failed |= keys
            return False
        if verdict.succeeded and keys & self.failed:
            self.failed -= keys
            return True
        return False


def false_tests_pass(session: dict[str, Any], persist_dir: Path) -> int:
    """How many "Tests pass: `X` [in D]" claims of the session's summary name a command whose
    last run in that directory really failed."""
    from capture.observer_shell import command_label
    from capture.summary import summarize

    runs = [s for s in session["steps"] if s["kind"] == "run"]
    events = [tool_event(r, "claude", persist_dir, i) for i, r in enumerate(runs)]
    last: dict[tuple[str, str], str] = {}
    for run in runs:
        directory, _ = where_and_what(run)
        where = directory[len(run["cwd"]) + 1:] if directory != run["cwd"] else ""
        last[(command_label(run["command"], 120), where)] = run["truth"]
    claims = re.findall(r"Tests pass: `([^`]+)`(?: in (\S+))?", summarize([], events, []).completed)
    return sum(1 for label, where in claims if last.get((label, where)) == "failed")


def missing_next_steps(session: dict[str, Any], persist_dir: Path) -> Counter[str]:
    """The commands whose last run in their directory really failed (a problem to fix: no
    benign exit such as grep's no match, no inspection) that the summary's next steps leave
    out, counted by the outcome the observer stated for that run."""
    from capture.observer_shell import command_kind, command_label
    from capture.summary import summarize

    runs = [s for s in session["steps"] if s["kind"] == "run"]
    events = [tool_event(r, "claude", persist_dir, i) for i, r in enumerate(runs)]
    last: dict[tuple[str, str], tuple[str, bool, str]] = {}  # (directory, command) -> (label, to fix, said)
    for run, event in zip(runs, events, strict=True):
        directory, _ = where_and_what(run)
        where = directory[len(run["cwd"]) + 1:] if directory != run["cwd"] else ""
        verdict = shell_verdict(event)
        to_fix = run["truth"] == "failed" and not verdict.note and command_kind(run["command"]) != "inspect"
        label = f"`{command_label(run['command'], 120)}`" + (f" in {where}" if where else "")
        last[where_and_what(run)] = (label, to_fix, verdict.outcome)
    steps = summarize([], events, []).next_steps
    return Counter(said for label, to_fix, said in last.values() if to_fix and label not in steps)


def main() -> int:
    met = True
    totals: dict[str, Counter[str]] = {d: Counter() for d in (*DELIVERIES, HOOK_DELIVERY)}
    sessions: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for run_set in RUN_SETS:
            met &= report(run_set, Path(tmp), totals, sessions)
    print(f"\nall sets: {totals[DELIVERIES[0]]['runs']} real runs")
    print_table(totals)
    print(f"'Fixed': {sessions['claims']} claims, {sessions['false']} false, {sessions['missed']} of "
          f"{sessions['true']} true fixes missed; 'Tests pass' for a command whose last run failed: "
          f"{sessions['wrong pass']}; still-failing commands left out of next steps: {sessions['left out']} "
          f"(and {sessions['left out unknown']} whose last outcome is unknown)")
    print_load_average()
    print(f"targets (accuracy >= {TARGET_ACCURACY} per delivery, no false claim, no false fix): "
          f"{'met' if met else 'NOT met'}")
    return 0 if met else 1


def print_table(rows: dict[str, Counter[str]]) -> None:
    """Per delivery: right/all (the issue's accuracy), right/stated (how often what is stated is
    true), false claims, unknowns, and unknown records that claim something all the same."""
    print(f"{'delivery':<16}{'accuracy':>9}{'stated right':>14}{'false success':>15}{'false failure':>15}"
          f"{'unknown':>9}{'unknown claiming':>18}")
    for delivery, c in rows.items():
        said = c["runs"] - c["unknown"]
        print(f"{delivery:<16}{c['right'] / c['runs']:>9.3f}{c['right'] / max(said, 1):>14.3f}"
              f"{c['false success']:>15}{c['false failure']:>15}{c['unknown']:>9}{c['claiming unknown']:>18}")


def report(run_set: str, persist: Path, totals: dict[str, Counter[str]], overall: Counter[str]) -> bool:
    """Print one run set's tables, adding its counts to totals; whether it meets the targets."""
    runs = list(all_runs(run_set))
    truth = Counter(r["truth"] for r in runs)
    print(f"\n{run_set}: real runs: {len(runs)} ({truth['failed']} failed, {truth['succeeded']} succeeded, "
          f"{sum(r['piped'] for r in runs)} piped)")
    rows, unknown = {}, {}
    for delivery in (*DELIVERIES, HOOK_DELIVERY):
        rows[delivery], unknown[delivery] = score_delivery(delivery, persist, run_set)
        totals[delivery].update(rows[delivery])
    print_table(rows)
    ok = all((d == HOOK_DELIVERY or c["right"] / c["runs"] >= TARGET_ACCURACY) and not (
        c["false success"] or c["false failure"] or c["claiming unknown"]) for d, c in rows.items())
    for run in unknown[DELIVERIES[0]]:  # what the output said, so a reader can judge each unknown
        last = next((line for line in reversed(run["output"].splitlines()) if line.strip()), "(no output)")
        print(f"  unknown, truly {run['truth']:<9}  {run['command'][:70]:<72} last line: {last.strip()[:60]!r}")
    sessions = load_sessions(run_set)
    true = {s["name"]: true_fixes(s["steps"]) for s in sessions}
    print(f"\nsessions: {len(sessions)}, true fixes: {sum(len(t) for t in true.values())}")
    print(f"{'rule':<10}{'Fixed claims':>13}{'false':>7}{'missed':>8}")
    for name, rule in (("observer", CurrentRule), ("baseline", BaselineRule)):
        claims = {s["name"]: claimed_fixes(s["steps"], persist, rule) for s in sessions}
        false = sum(len(claims[n] - true[n]) for n in true)
        missed = sum(len(true[n] - claims[n]) for n in true)
        print(f"{name:<10}{sum(len(c) for c in claims.values()):>13}{false:>7}{missed:>8}")
        ok &= name != "observer" or false == 0
        if name == "observer":
            overall.update({"claims": sum(len(c) for c in claims.values()), "false": false, "missed": missed,
                            "true": sum(len(t) for t in true.values())})
    wrong_pass = sum(false_tests_pass(s, persist) for s in sessions)
    print(f"summaries saying 'Tests pass' for a command whose last run failed: {wrong_pass}")
    left_out = sum((missing_next_steps(s, persist) for s in sessions), Counter())
    overall.update({"wrong pass": wrong_pass, "left out": left_out["failed"], "left out unknown": left_out["unknown"]})
    print(f"commands still failing at the end that the summary's next steps leave out: {left_out['failed']} "
          f"(and {left_out['unknown']} whose last run's outcome is unknown)")
    return ok and wrong_pass == 0 and left_out["failed"] == 0


if __name__ == "__main__":
    raise SystemExit(main())
