"""What scripts and people read: --json with numbers and plain kind names, tool input and
output pretty-printed with real line breaks."""

from __future__ import annotations

import json

from mnemo.v1 import common_pb2, search_pb2, store_pb2
from viewer import present


def test_json_counts_are_numbers_and_kinds_plain_names():
    reply = search_pb2.MarkWrongReply(text="done")
    changed = reply.changed.add()
    changed.kind, changed.id = common_pb2.DOC_KIND_SUMMARY, 12
    assert present.as_dict(reply) == {"text": "done", "changed": [{"kind": "summary", "id": 12}]}
    assert present.as_dict(store_pb2.ForgetResponse(observations=3, tool_uses=2)) == {"observations": 3,
                                                                                      "tool_uses": 2}


def test_tool_io_is_pretty_json_with_real_line_breaks():
    raw = json.dumps({"command": "pytest -q", "stdout": "1 failed\n3 passed", "path": "C:\\new"})
    shown = present.readable(raw)
    assert shown.splitlines() == ['{', '  "command": "pytest -q",', '  "stdout": "1 failed', '3 passed",',
                                  '  "path": "C:\\\\new"', '}']


def test_tool_io_cut_at_the_cap_keeps_its_text_with_line_breaks():
    assert present.readable('{"stdout": "a\\nb') == '{"stdout": "a\nb'
    assert present.readable("plain text") == "plain text"
