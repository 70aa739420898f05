"""Converters: reply messages -> structuredContent that validates against the declared outputSchema."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from gateway import convert
from gateway.errors import error_result, error_text, unexpected_result
from gateway.tools import BY_NAME
from mnemo.errors import DeadlineExceeded, InvalidArgument, NotFound
from mnemo.v1 import common_pb2, search_pb2

pytestmark = pytest.mark.unit

BIG = 1_764_000_000_123  # epoch ms beyond 2**31: must stay a JSON number


def row(kind=common_pb2.DOC_KIND_OBSERVATION, rid=12, display="#12"):
    return common_pb2.IndexRow(ref=common_pb2.Ref(kind=kind, id=rid), display_id=display, type="bugfix",
                               title="Fixed | pipes", created_at="2026-11-30T09:00:00Z", created_at_epoch=BIG,
                               token_estimate=120, score=0.5, project="p", file="a.py")


def obs(oid=12):
    return common_pb2.Observation(id=oid, type="bugfix", title="t", facts=["f1"], concepts=["gotcha"],
                                  files_read=["a.py"], files_modified=[], created_at_epoch=BIG,
                                  tool_use_ids=[3, 4])


def valid(tool: str, structured: dict) -> dict:
    Draft202012Validator(BY_NAME[tool].output_schema).validate(structured)
    return structured


def test_search_reply():
    reply = search_pb2.SearchReply(text="x", rows=[row(), row(common_pb2.DOC_KIND_SUMMARY, 3, "#S3")],
                                   counts=search_pb2.SearchCounts(total=7, observations=6, summaries=1),
                                   strategy="hybrid")
    data = valid("search", convert.search_reply(reply))
    assert data["total"] == 7 and data["counts"] == {"observations": 6, "summaries": 1, "prompts": 0}
    assert data["rows"][0]["createdAtEpoch"] == BIG and isinstance(data["rows"][0]["createdAtEpoch"], int)
    assert [r["kind"] for r in data["rows"]] == ["observation", "summary"]
    assert data["rows"][1]["id"] == "#S3" and data["rows"][1]["recordId"] == 3


def test_timeline_and_observations_replies():
    data = valid("timeline", convert.timeline_reply(search_pb2.TimelineReply(items=[row()], anchor_index=0,
                                                                             anchor="#12")))
    assert data == {"anchor": "#12", "anchorIndex": 0, "items": [convert.index_row(row())]}
    data = valid("get_observations", convert.observations_reply(search_pb2.GetObservationsReply(
        observations=[obs()])))
    assert data["observations"][0]["facts"] == ["f1"] and data["observations"][0]["toolUseIds"] == [3, 4]
    assert data["observations"][0]["filesModified"] == []


def test_mem_search_reply_with_details():
    detail = search_pb2.MemDetail(record=common_pb2.Record(observation=obs()), row=row(),
                                  context=[row(common_pb2.DOC_KIND_PROMPT, 7, "#P7")],
                                  tool_uses=[search_pb2.ToolUseRef(id=3, tool_use_id="toolu_1", tool_name="Bash")])
    reply = search_pb2.MemSearchReply(rows=[row()], total=1, continuation="ms_" + "a" * 24, details=[detail],
                                      has_more=False, strategy="lexical")
    data = valid("mem_search", convert.mem_search_reply(reply))
    assert data["details"][0]["id"] == "#12" and data["details"][0]["record"]["kind"] == "observation"
    assert data["details"][0]["toolUses"] == [{"id": 3, "toolUseId": "toolu_1", "toolName": "Bash"}]
    assert data["details"][0]["context"][0]["kind"] == "prompt"


def test_tool_uses_and_save_memory_replies():
    use = common_pb2.ToolUse(id=3, tool_name="Bash", tool_input='{"command": "ls"}', response_truncated=True,
                             response_size=1 << 40, observation_ids=[12])
    data = valid("get_tool_uses", convert.tool_uses_reply(search_pb2.GetToolUsesReply(tool_uses=[use])))
    assert data["toolUses"][0]["responseSize"] == 1 << 40 and data["toolUses"][0]["responseTruncated"] is True
    data = valid("save_memory", convert.save_memory_reply(search_pb2.SaveMemoryReply(id=BIG, created=True)))
    assert data == {"id": BIG, "created": True}


def test_error_results_name_code_message_and_next_step():
    assert error_text(InvalidArgument("limit", "21 is greater than the maximum of 20")) == (
        "INVALID_ARGUMENT: limit: 21 is greater than the maximum of 20. Fix the argument and call again.")
    result = error_result(NotFound("observation #9 does not exist"))
    assert result.is_error and result.text.startswith("NOT_FOUND: observation #9 does not exist. Check")
    assert error_text(DeadlineExceeded("deadline")).startswith("DEADLINE_EXCEEDED: deadline. The request took")


def test_unexpected_errors_hide_the_traceback():
    result = unexpected_result("search", ZeroDivisionError("division by zero"))
    text = result.text
    assert result.is_error and text.startswith("INTERNAL: unexpected failure (ref=")
    assert "ZeroDivisionError" not in text and "Traceback" not in text
