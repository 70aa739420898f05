"""Every id and pattern check matches the whole string: a trailing newline is no id.

Python's `$` also matches before a final newline, and `str.strip()` removes one: either let
"#10\\n" pass as record 10. The gateway's schemas and the service's own checks both refuse it.
"""

from __future__ import annotations

import pytest

from gateway.validation import validate_arguments
from mnemo.errors import InvalidArgument
from search_svc.details import parse_anchor
from search_svc.memsearch.params import parse_record_id

pytestmark = pytest.mark.unit

TOKEN = "ms_" + "A" * 24


@pytest.mark.parametrize("raw", ["#10\n", "10\n", "S3\n", "#10\r\n", "\n#10", "#10\t"])
def test_a_record_id_with_a_newline_or_tab_is_refused(raw):
    with pytest.raises(InvalidArgument) as refused:
        parse_record_id(raw)
    assert refused.value.field == "selectedIds"


@pytest.mark.parametrize("raw", ["#12\n", "S12\n"])
def test_a_timeline_anchor_with_a_newline_is_no_record(raw):
    with pytest.raises(InvalidArgument) as refused:
        parse_anchor(raw)
    assert refused.value.field == "anchor"


def test_bare_digits_with_a_newline_read_as_a_time_never_as_a_record():
    assert parse_anchor("12\r\n") == 12  # epoch milliseconds, as any digit string that is no id


def test_spaces_around_an_id_are_still_forgiven():
    assert parse_record_id(" #10 ")[0] == "#10"


@pytest.mark.parametrize(("tool", "args", "field"), [
    ("prime_corpus", {"name": "notes\n"}, "name"),
    ("mem_search", {"continuation": "ms_" + "A" * 23 + "\n"}, "continuation"),
])
def test_schema_patterns_end_at_the_true_end_of_the_string(tool, args, field):
    with pytest.raises(InvalidArgument) as refused:
        validate_arguments(tool, args, {})
    assert refused.value.field == field and "does not match" in refused.value.rule
    assert validate_arguments(tool, {field: args[field].rstrip("\n") + ("A" if field == "continuation" else "")},
                              {})
