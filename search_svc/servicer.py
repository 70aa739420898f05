"""Thin gRPC adapter: each RPC hands its request to one core object and returns its reply.

Errors are MnemoError subclasses raised by the cores; the server interceptor maps them
to status codes (mnemo.grpc_server), so no RPC here catches anything. That holds for the
priming streams too: a failed job raises, and the stream ends with the error's status.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc

from mnemo.v1 import search_pb2, search_pb2_grpc, store_pb2
from search_svc.corpus import Corpora
from search_svc.curation import Curation
from search_svc.details import Details
from search_svc.memsearch import MemSearchEngine
from search_svc.observations import Observations
from search_svc.retrieval import Retrieval
from search_svc.writes import Writes


@dataclass
class Cores:
    retrieval: Retrieval
    details: Details
    memsearch: MemSearchEngine
    writes: Writes
    corpora: Corpora
    curation: Curation
    observations: Observations

    def capabilities(self) -> list[str]:
        return sorted({*self.retrieval.capabilities(), *self.memsearch.capabilities(),
                       *self.writes.capabilities(), *self.corpora.capabilities(),
                       *self.observations.capabilities()})


Context = grpc.ServicerContext


class SearchServicer(search_pb2_grpc.SearchServiceServicer):
    def __init__(self, cores: Cores):
        self.c = cores

    def GetCapabilities(self, request: search_pb2.GetCapabilitiesRequest,
                        context: Context) -> search_pb2.GetCapabilitiesResponse:
        return search_pb2.GetCapabilitiesResponse(capabilities=self.c.capabilities())

    def Search(self, request: search_pb2.SearchRequest, context: Context) -> search_pb2.SearchReply:
        return self.c.retrieval.search(request)

    def Timeline(self, request: search_pb2.TimelineRequest, context: Context) -> search_pb2.TimelineReply:
        return self.c.details.timeline(request)

    def GetObservations(self, request: search_pb2.GetObservationsRequest,
                        context: Context) -> search_pb2.GetObservationsReply:
        return self.c.details.get_observations(request)

    def MemSearch(self, request: search_pb2.MemSearchRequest, context: Context) -> search_pb2.MemSearchReply:
        return self.c.memsearch.mem_search(request)

    def GetToolUses(self, request: search_pb2.GetToolUsesToolRequest,
                    context: Context) -> search_pb2.GetToolUsesReply:
        return self.c.memsearch.get_tool_uses(request)

    def SaveMemory(self, request: search_pb2.SaveMemoryRequest, context: Context) -> search_pb2.SaveMemoryReply:
        return self.c.writes.save_memory(request)

    def WriteWorkState(self, request: search_pb2.WorkStateWriteRequest,
                       context: Context) -> search_pb2.WorkStateReply:
        return self.c.writes.write_work_state(request)

    def ReadWorkState(self, request: search_pb2.WorkStateReadRequest,
                      context: Context) -> search_pb2.WorkStateReply:
        return self.c.writes.read_work_state(request)

    def SessionStartContext(self, request: search_pb2.SessionStartContextRequest,
                            context: Context) -> search_pb2.SessionStartContextReply:
        return self.c.writes.session_start_context(request)

    def BuildCorpus(self, request: search_pb2.BuildCorpusRequest, context: Context) -> search_pb2.CorpusReply:
        return self.c.corpora.build(request)

    def ListCorpora(self, request: search_pb2.ListCorporaToolRequest,
                    context: Context) -> search_pb2.ListCorporaReply:
        return self.c.corpora.list_corpora()

    def RebuildCorpus(self, request: search_pb2.CorpusNameRequest, context: Context) -> search_pb2.CorpusReply:
        return self.c.corpora.rebuild(request)

    def PrimeCorpus(self, request: search_pb2.CorpusNameRequest,
                    context: Context) -> Iterator[search_pb2.PrimeEvent]:
        yield from self.c.corpora.prime(request, is_cancelled=_cancel_probe(context))

    def ReprimeCorpus(self, request: search_pb2.CorpusNameRequest,
                      context: Context) -> Iterator[search_pb2.PrimeEvent]:
        yield from self.c.corpora.reprime(request, is_cancelled=_cancel_probe(context))

    def QueryCorpus(self, request: search_pb2.QueryCorpusToolRequest,
                    context: Context) -> search_pb2.QueryCorpusReply:
        return self.c.corpora.query(request)

    def Forget(self, request: search_pb2.ForgetToolRequest, context: Context) -> search_pb2.ForgetReply:
        return self.c.curation.forget(request)

    def EditObservation(self, request: store_pb2.EditObservationRequest,
                        context: Context) -> search_pb2.RecordDetailReply:
        return self.c.curation.edit(request)

    def GetRecordDetail(self, request: search_pb2.RecordDetailRequest,
                        context: Context) -> search_pb2.RecordDetailReply:
        return self.c.curation.record_detail(request)

    def Overview(self, request: search_pb2.OverviewRequest, context: Context) -> search_pb2.OverviewReply:
        return self.c.curation.overview(request)

    def MarkWrong(self, request: search_pb2.MarkWrongToolRequest, context: Context) -> search_pb2.MarkWrongReply:
        return self.c.curation.mark_wrong(request)

    # -- the server runtime's observation_* tools (search_svc/observations.py) --
    def ObservationAdd(self, request: search_pb2.ObservationAddRequest,
                       context: Context) -> search_pb2.ObservationAddReply:
        return self.c.observations.add(request)

    def ObservationRecordEvent(self, request: search_pb2.ObservationEventRequest,
                               context: Context) -> search_pb2.ObservationEventReply:
        return self.c.observations.record_event(request)

    def ObservationSearch(self, request: search_pb2.ObservationSearchRequest,
                          context: Context) -> search_pb2.ObservationSearchReply:
        return self.c.observations.search(request)

    def ObservationContext(self, request: search_pb2.ObservationSearchRequest,
                           context: Context) -> search_pb2.ObservationContextReply:
        return self.c.observations.context(request)

    def ObservationGenerationStatus(self, request: search_pb2.ObservationJobRequest,
                                    context: Context) -> search_pb2.ObservationJobReply:
        return self.c.observations.job_status(request)


def _cancel_probe(context: Context) -> Callable[[], bool]:
    """A no-argument callable that turns True once the client cancelled or went away."""
    return lambda: not context.is_active()


def register(server: grpc.Server, cores: Cores) -> list[str]:
    search_pb2_grpc.add_SearchServiceServicer_to_server(SearchServicer(cores), server)
    return [search_pb2.DESCRIPTOR.services_by_name["SearchService"].full_name]
