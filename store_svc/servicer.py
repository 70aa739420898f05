"""gRPC adapter of the store: one line per RPC. Errors are mapped by mnemo.grpc_server."""

from __future__ import annotations

from collections.abc import Iterable

import grpc

from mnemo.v1 import common_pb2, store_pb2, store_pb2_grpc
from store_svc import access, curation, lease, tokens, validate
from store_svc.core import Store
from store_svc.wire import lenient_parser

SERVICE_NAME = "mnemo.v1.StoreService"


class StoreServicer(store_pb2_grpc.StoreServiceServicer):
    def __init__(self, store: Store):
        self.store = store

    def UpsertSession(self, request, context):
        return self.store.upsert_session(request)

    def CompleteSession(self, request, context):
        return self.store.complete_session(request)

    def RecordPrompt(self, request, context):
        return self.store.record_prompt(request)

    def AddObservations(self, request, context):
        return self.store.add_observations(request)

    def AddSummaries(self, request, context):
        return self.store.add_summaries(request)

    def RecordToolUse(self, request, context):
        return self.store.record_tool_use(request)

    def GetRecords(self, request, context):
        return curation.get_records_rpc(self.store, request)

    def Hydrate(self, request, context):
        return self.store.hydrate(request)

    def GetToolUses(self, request, context):
        return self.store.get_tool_uses(request)

    def ListRecent(self, request, context):
        return self.store.list_recent(request)

    def Search(self, request, context):
        return self.store.search(request)

    def Timeline(self, request, context):
        return self.store.timeline(request)

    def DeleteRecords(self, request, context):
        return self.store.delete_records(request)

    def ReadChanges(self, request, context):
        return self.store.read_changes(request)

    def Stats(self, request, context):
        return self.store.stats(request)

    def SaveCursor(self, request, context):
        return self.store.save_cursor(request)

    def LoadCursor(self, request, context):
        return self.store.load_cursor(request)

    def PurgeCursors(self, request, context):
        return self.store.purge_cursors(request)

    def WriteWorkState(self, request, context):
        return self.store.write_work_state(request)

    def ReadWorkState(self, request, context):
        return self.store.read_work_state(request)

    def PutCorpus(self, request, context):
        return self.store.put_corpus(request)

    def GetCorpus(self, request, context):
        return self.store.get_corpus(request)

    def ListCorpora(self, request, context):
        return self.store.list_corpora(request)

    def UpdateCorpus(self, request, context):
        return self.store.update_corpus(request)

    def Export(self, request, context):
        yield from self.store.export(request)

    def Import(self, request, context):
        return self.store.import_items(request)

    def Forget(self, request, context):
        return curation.forget_rpc(self.store, request)

    def EditObservation(self, request, context):
        return curation.edit_rpc(self.store, request)

    def Activity(self, request, context):
        return curation.activity_rpc(self.store, request)

    def MarkWrong(self, request, context):
        return curation.mark_wrong_rpc(self.store, request)

    def AcquireLease(self, request, context):
        return lease.acquire(self.store, request)

    def WhoAmI(self, request, context):
        return tokens.who_am_i()

    def AddToken(self, request, context):
        return tokens.add_token(self.store, request)

    def ListTokens(self, request, context):
        return tokens.list_tokens(self.store, request)

    def RevokeToken(self, request, context):
        return tokens.revoke_token(self.store, request)


def _bounded(handler):
    """`handler` behind the bounds every request has whatever its RPC (validate.epochs)."""
    def checked(request, context):
        validate.epochs(request)
        return handler(request, context)

    return checked


def _message_class(descriptor):
    return getattr(store_pb2, descriptor.name, None) or getattr(common_pb2, descriptor.name)


def register(server: grpc.Server, store: Store) -> Iterable[str]:
    """Add the servicer with lenient request parsing (bad UTF-8 becomes U+FFFD, never an error)."""
    servicer = StoreServicer(store)
    handlers = {}
    for method in store_pb2.DESCRIPTOR.services_by_name["StoreService"].methods:
        make = grpc.unary_stream_rpc_method_handler if method.server_streaming else grpc.unary_unary_rpc_method_handler
        handlers[method.name] = make(
            _bounded(access.guard(method.name, getattr(servicer, method.name), store,
                                  streaming=method.server_streaming)),
            request_deserializer=lenient_parser(_message_class(method.input_type)),
            response_serializer=_message_class(method.output_type).SerializeToString,
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    return (SERVICE_NAME,)
