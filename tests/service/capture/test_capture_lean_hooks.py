"""The hooks the agent waits for, against the real stack: their whole work done without
loading protobuf or grpc (capture.wire over mnemo.h2c), and the result as stored."""

from __future__ import annotations

import json

import pytest

from capture.journal import Journal
from mnemo.v1 import common_pb2, store_pb2
from tests.conftest import add_observation
from tests.unit.capture.test_capture_hook_imports import modules_loaded_by_a_hook

pytestmark = pytest.mark.service

NOT_ON_THE_WAITED_FOR_PATH = ("google.protobuf", "grpc", "structlog", "mnemo.v1.store_pb2", "capture.rpcs",
                              "capture.observer", "mnemo.grpc_client")


def test_user_prompt_submit_records_the_prompt_without_protobuf(settings, stack, store_stub):
    payload = {"session_id": "lean-1", "cwd": "/tmp/leanproj", "prompt": "  keep  my\tspacing  "}
    out = modules_loaded_by_a_hook(settings.home, "UserPromptSubmit", payload, NOT_ON_THE_WAITED_FOR_PATH)
    assert out == "{} []\n"
    state = Journal(settings.home / "capture", "claude", "lean-1").load_state()
    assert state is not None and state.prompt_number == 1 and state.project == "leanproj"
    records = store_stub.GetRecords(store_pb2.GetRecordsRequest(
        refs=[common_pb2.Ref(kind=common_pb2.DOC_KIND_PROMPT, id=state.last_prompt_id)])).records
    assert [(r.prompt.prompt_text, r.prompt.project) for r in records] == [("keep  my\tspacing", "leanproj")]
    # Again (a double-fired hook): the store answers "duplicate", naming the same prompt.
    assert modules_loaded_by_a_hook(settings.home, "UserPromptSubmit", payload, ()) == "{} []\n"
    again = Journal(settings.home / "capture", "claude", "lean-1").load_state()
    assert again is not None and again.last_prompt_id == state.last_prompt_id


def test_session_start_injects_the_context_without_protobuf(settings, stack, store_stub):
    payload = {"session_id": "lean-2", "cwd": "/tmp/leanctx", "source": "startup"}
    assert modules_loaded_by_a_hook(settings.home, "SessionStart", payload, NOT_ON_THE_WAITED_FOR_PATH) \
        == "{} []\n"  # a new project: nothing to inject
    add_observation(store_stub, project="leanctx", title="Parser rewritten around a token stream")
    out = modules_loaded_by_a_hook(settings.home, "SessionStart", payload, NOT_ON_THE_WAITED_FOR_PATH)
    reply_text, _, loaded = out.rpartition(" ")
    assert loaded == "[]\n"
    context = json.loads(reply_text)["hookSpecificOutput"]["additionalContext"]
    assert "Parser rewritten around a token stream" in context
