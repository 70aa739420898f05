"""The per-session journal hooks share, and how Stop cuts it into read bursts."""

from __future__ import annotations

import pytest

from capture.hook_call import clean_value
from capture.hooks import _bursts
from capture.journal import Journal, SessionState

pytestmark = pytest.mark.unit


def test_claim_takes_the_journal_and_later_appends_start_a_new_one(tmp_path):
    journal = Journal(tmp_path, "claude", "../../etc/passwd")
    assert journal.dir.parent == tmp_path and len(journal.key) == 24  # host ids never become paths
    journal.save_state(SessionState("claude", "p", memory_session_id="s", prompt_number=2))
    journal.append({"p": 1, "n": 1})
    journal.append({"t": 5, "n": 1, "r": 1})
    claimed = journal.claim()
    journal.append({"t": 6, "n": 1, "r": 1})  # a hook running during Stop
    assert Journal.read(claimed) == [{"p": 1, "n": 1}, {"t": 5, "n": 1, "r": 1}]
    Journal.release(claimed)
    assert Journal.read(journal.claim()) == [{"t": 6, "n": 1, "r": 1}]
    assert journal.load_state().prompt_number == 2


def test_an_unreleased_claim_is_processed_again_and_torn_lines_are_skipped(tmp_path):
    journal = Journal(tmp_path, "claude", "s")
    journal.append({"t": 1, "n": 1, "r": 1})
    first = journal.claim()
    (journal.dir / "journal.jsonl").write_text('{"t": 2, "n": 1, "r": 1}\n{"t": 3, "n"')
    again = journal.claim()
    assert first[0] in again and [e["t"] for e in Journal.read(again)] == [1, 2]
    Journal.release(again)
    journal.forget()
    assert not journal.dir.exists()


def test_bursts_are_runs_of_reads_within_one_prompt():
    entries = [{"p": 1, "n": 1}, {"t": 1, "n": 1, "r": 1}, {"t": 2, "n": 1, "r": 1}, {"t": 3, "n": 1, "o": [9]},
               {"t": 4, "n": 1, "r": 1}, {"p": 2, "n": 2}, {"t": 5, "n": 2, "r": 1}, {"t": 6, "n": 3, "r": 1}]
    assert [[e["t"] for e in b] for b in _bursts(entries)] == [[1, 2], [4], [5], [6]]
    assert _bursts([]) == []


def test_tool_values_are_cleaned_one_string_at_a_time():
    value = {"command": "echo <private>x</private>hi", "env": ["API_KEY=abcdefghijklmnop"], "n": 3, "ok": True}
    assert clean_value(value) == {"command": "echo hi", "env": ["API_KEY=[REDACTED]"], "n": 3, "ok": True}


def test_tool_values_keep_their_indentation_and_final_newline():
    value = {"old_string": "    return a - b\n", "content": "def add(a, b):\n    return a + b\n"}
    assert clean_value(value) == value
    assert clean_value("  x = 1  <private>pw</private>\n") == "  x = 1\n"


def test_a_failure_is_taken_once_and_survives_concurrent_writers(tmp_path):
    journal = Journal(tmp_path, "claude", "s1")
    journal.remember_failure("cmd:pytest -q", {"row": 1})
    journal.remember_failure("runner:pytest", {"row": 1})
    assert journal.take_failure("cmd:pytest -q") == {"row": 1}
    assert journal.take_failure("cmd:pytest -q") is None
    assert journal.take_failure("runner:pytest") == {"row": 1}
