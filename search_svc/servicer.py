"""Thin gRPC adapter: each RPC hands its request to one core object and returns its reply.

Errors are MnemoError subclasses raised by the cores; the server interceptor maps them
to status codes (mnemo.grpc_server), so no RPC here catches anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import grpc

from mnemo.v1 import search_pb2, search_pb2_grpc
from search_svc.corpus import Corpora
from search_svc.memsearch import MemSearchEngine
from search_svc.retrieval import Retrieval
from search_svc.writes import Writes


@dataclass
class Cores:
    retrieval: Retrieval
    memsearch: MemSearchEngine
    writes: Writes
    corpora: Corpora

    def capabilities(self) -> list[str]:
        return sorted({*self.retrieval.capabilities(), *self.memsearch.capabilities(),
                       *self.writes.capabilities(), *self.corpora.capabilities()})


class SearchServicer(search_pb2_grpc.SearchServiceServicer):
    def __init__(self, cores: Cores):
        self.c = cores

    def GetCapabilities(self, request, context):
        return search_pb2.GetCapabilitiesResponse(capabilities=self.c.capabilities())

    def Search(self, request, context):
        return self.c.retrieval.search(request)

    def Timeline(self, request, context):
        return self.c.retrieval.timeline(request)

    def GetObservations(self, request, context):
        return self.c.retrieval.get_observations(request)

    def MemSearch(self, request, context):
        return self.c.memsearch.mem_search(request)

    def GetToolUses(self, request, context):
        return self.c.memsearch.get_tool_uses(request)

    def SaveMemory(self, request, context):
        return self.c.writes.save_memory(request)

    def WriteWorkState(self, request, context):
        return self.c.writes.write_work_state(request)

    def ReadWorkState(self, request, context):
        return self.c.writes.read_work_state(request)

    def SessionStartContext(self, request, context):
        return self.c.writes.session_start_context(request)

    def BuildCorpus(self, request, context):
        return self.c.corpora.build(request)

    def ListCorpora(self, request, context):
        return self.c.corpora.list(request)

    def RebuildCorpus(self, request, context):
        return self.c.corpora.rebuild(request)

    def PrimeCorpus(self, request, context) -> Iterator[search_pb2.PrimeEvent]:
        yield from self.c.corpora.prime(request, is_cancelled=_cancel_probe(context))

    def ReprimeCorpus(self, request, context) -> Iterator[search_pb2.PrimeEvent]:
        yield from self.c.corpora.reprime(request, is_cancelled=_cancel_probe(context))

    def QueryCorpus(self, request, context):
        return self.c.corpora.query(request)


def _cancel_probe(context: grpc.ServicerContext):
    """A no-argument callable that turns True once the client cancelled or went away."""
    return lambda: not context.is_active()


def register(server: grpc.Server, cores: Cores) -> list[str]:
    search_pb2_grpc.add_SearchServiceServicer_to_server(SearchServicer(cores), server)
    return [search_pb2.DESCRIPTOR.services_by_name["SearchService"].full_name]
