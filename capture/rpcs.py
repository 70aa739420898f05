"""The RPCs hooks make, each named once with its request and reply types.

A hook's call must work on two transports, the lean HTTP/2 client (mnemo.h2c, no grpc
import) and grpc proper, which both carry serialized bytes (capture.client): they need the
method's path and reply class. An `Rpc` holds exactly that, derived from the generated
descriptors (protobuf only, no grpc), so mypy reads one typed object:
`clients.call(rpcs.ADD_OBSERVATIONS, request)` returns an `AddObservationsReply`. The RPCs
the agent waits on skip protobuf altogether: see capture.wire.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from google.protobuf.message import Message

from mnemo.v1 import common_pb2, search_pb2, store_pb2

RequestT = TypeVar("RequestT", bound=Message)
ReplyT = TypeVar("ReplyT", bound=Message)


class Rpc(Generic[RequestT, ReplyT]):
    """The one unary RPC of the stack that takes `request` and answers `reply`."""

    def __init__(self, request: type[RequestT], reply: type[ReplyT]):
        self.reply = reply
        method = _method_between(request, reply)
        self.service = method.containing_service.name.removesuffix("Service").lower()  # "store", "search"
        self.path = f"/{method.containing_service.full_name}/{method.name}"

    def __repr__(self) -> str:
        return f"Rpc({self.path})"


def _method_between(request: type[Message], reply: type[Message]) -> Any:
    """The method descriptor taking `request` and answering `reply`; there must be one."""
    found = [
        method
        for service in request.DESCRIPTOR.file.services_by_name.values()
        for method in service.methods
        if method.input_type is request.DESCRIPTOR and method.output_type is reply.DESCRIPTOR
    ]
    if len(found) != 1:
        raise LookupError(f"{len(found)} RPCs take {request.__name__} and answer {reply.__name__}")
    return found[0]


UPSERT_SESSION = Rpc(store_pb2.UpsertSessionRequest, common_pb2.Session)
COMPLETE_SESSION = Rpc(store_pb2.CompleteSessionRequest, common_pb2.Session)
RECORD_PROMPT = Rpc(store_pb2.RecordPromptRequest, store_pb2.RecordPromptResponse)
RECORD_TOOL_USE = Rpc(store_pb2.RecordToolUseRequest, common_pb2.ToolUse)
ADD_OBSERVATIONS = Rpc(store_pb2.AddObservationsRequest, store_pb2.AddObservationsResponse)
ADD_SUMMARIES = Rpc(store_pb2.AddSummariesRequest, store_pb2.AddSummariesResponse)
GET_TOOL_USES = Rpc(store_pb2.GetToolUsesRequest, store_pb2.GetToolUsesResponse)
LIST_RECENT = Rpc(store_pb2.ListRecentRequest, store_pb2.ListRecentResponse)
GET_RECORDS = Rpc(store_pb2.GetRecordsRequest, store_pb2.GetRecordsResponse)
SESSION_START_CONTEXT = Rpc(search_pb2.SessionStartContextRequest, search_pb2.SessionStartContextReply)
