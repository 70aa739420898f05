"""Ids of get_tool_uses and mem_search are whole (issue 33): a trailing newline, carriage return
or tab makes no id, and the refusal shows the offending character instead of hiding it."""

from __future__ import annotations

import pytest

from mnemo.errors import InvalidArgument
from mnemo.v1 import search_pb2
from search_svc.memsearch.params import validate_mem_search, validate_tool_uses
from search_svc.render import shown

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("raw", ["2\n", "toolu_2\r\n", "toolu_2\t", "\t2", "toolu_\u202e2"])
def test_a_tool_use_id_with_whitespace_or_controls_is_refused_and_shown(raw):
    with pytest.raises(InvalidArgument) as refused:
        validate_tool_uses(search_pb2.GetToolUsesToolRequest(ids=[raw]))
    assert refused.value.field == "ids"
    assert refused.value.rule.startswith(repr(raw)), refused.value.rule  # \n, \t, \u202e visible


def test_spaces_around_a_tool_use_id_are_forgiven():
    query = validate_tool_uses(search_pb2.GetToolUsesToolRequest(ids=[" 2 ", "toolu_2 "]))
    assert list(query.ids) == [2] and list(query.tool_use_ids) == ["toolu_2"]


def test_a_selected_id_refusal_shows_its_newline():
    with pytest.raises(InvalidArgument) as refused:
        validate_mem_search(search_pb2.MemSearchRequest(continuation="ms_" + "a" * 24, selected_ids=["#12\n"]))
    assert refused.value.rule.startswith("'#12\\n'")


def test_shown_is_a_short_private_free_literal():
    assert shown("a\u202eb") == "'a\\u202eb'"
    assert shown("x" * 50, 10) == repr("x" * 10) + "..."
    assert "secret" not in shown("<private>secret</private>ok")
