"""Error texts a model can act on (issue 33): the fix is a sentence of its own, a rejected value
shows its offending characters, fields are named as the caller passed them, a timed-out write
says whether it may have happened and whether a retry is safe, a missing file is said to be
missing."""

from __future__ import annotations

import pytest

from gateway.codenav.confine import confine
from gateway.errors import error_text
from gateway.legacy.tools import LEGACY_TOOLS
from gateway.redact import preview
from gateway.tools import BY_NAME
from mnemo.errors import DeadlineExceeded, InvalidArgument, MnemoError, NotFound, Unavailable

pytestmark = pytest.mark.unit


def test_the_next_step_is_a_sentence_of_its_own():
    text = error_text(InvalidArgument("limit", "21 is greater than the maximum of 20"))
    assert "maximum of 20. Fix the argument" in text
    assert error_text(NotFound("no such corpus.")).startswith("NOT_FOUND: no such corpus. Check")  # no ".."


def test_a_preview_shows_the_offending_characters():
    assert preview("2\n") == "'2\\n'" and preview("toolu_2\t") == "'toolu_2\\t'"
    assert preview("a\u202eb") == "'a\\u202eb'"
    assert "secret" not in preview("<private>secret</private>x")


@pytest.mark.parametrize(("tool", "field", "shown"), [
    ("search", "date_start", "dateStart"),
    ("search", "order_by", "orderBy"),
    ("build_corpus", "date_end", "dateEnd"),
    ("search_observations", "date_start", "dateRange.start"),
])
def test_a_service_field_is_named_as_the_caller_passed_it(tool, field, shown):
    spec = {**BY_NAME, **{t.name: t for t in LEGACY_TOOLS}}[tool]
    err = spec.public_error(InvalidArgument(field, "must not be after date_end"))
    assert isinstance(err, InvalidArgument) and err.field == shown
    assert "date_end" not in err.rule and "date_" not in error_text(err, spec), error_text(err, spec)


@pytest.mark.parametrize("err", [DeadlineExceeded("Deadline Exceeded"), Unavailable("Socket closed")])
def test_a_write_whose_outcome_is_unknown_says_so_and_whether_to_retry(err: MnemoError):
    saved = error_text(err, BY_NAME["save_memory"])
    assert "may have happened" in saved and "Retrying is safe" in saved and "narrow it" not in saved
    state = error_text(err, BY_NAME["work_state_write"])
    assert "may have happened" in state and "expected_version" in state
    read = error_text(err, BY_NAME["mem_search"])
    assert "Nothing was changed" in read and "retrying is safe" in read
    for spec in BY_NAME.values():  # every write says what a retry does
        assert spec.read_only or spec.retry_note, spec.name


def test_a_refused_connection_or_a_services_own_answer_keeps_its_step():
    refused = Unavailable("failed to connect to all addresses; connection refused")
    assert "may have happened" not in error_text(refused, BY_NAME["save_memory"])
    answered = Unavailable("vector_svc is not reachable")  # the service said so: the job did not run
    assert "may have happened" not in error_text(answered, BY_NAME["prime_corpus"])


def test_a_missing_file_is_said_to_be_missing(tmp_path):
    with pytest.raises(NotFound) as missing:
        confine(tmp_path, "src/nope.py", "file_path")
    text = error_text(missing.value, BY_NAME["smart_outline"])
    assert "does not exist" in text and "search first" not in text and "Check the path" in text
