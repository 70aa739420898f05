"""PLACEHOLDER (owned by the retrieval helper): hybrid search, timelines, details.

Required interface (others depend on it):

class Retrieval:
    def __init__(self, backend: Backend, settings: Settings): ...
    def capabilities(self) -> list[str]            # e.g. ["search", "vector"] ("vector" only when vector_svc answers)
    def search(self, req: search_pb2.SearchRequest) -> search_pb2.SearchReply
    def timeline(self, req: search_pb2.TimelineRequest) -> search_pb2.TimelineReply
    def get_observations(self, req: search_pb2.GetObservationsRequest) -> search_pb2.GetObservationsReply
    # Used by memsearch.py and corpus.py:
    def hybrid(self, query: str, filters: common_pb2.Filters, *, limit: int, offset: int = 0,
               order: int = common_pb2.ORDER_RELEVANCE, operators: bool = False) -> HybridResult
        # HybridResult: rows: list[common_pb2.IndexRow] (fused, deduped per record, every filter honoured),
        #               counts: search_pb2.SearchCounts (true totals), strategy: str, notice: str
    def context_rows(self, ref: common_pb2.Ref, before: int, after: int, project: str) -> list[common_pb2.IndexRow]
        # timeline neighbours of a record, the record itself excluded
"""

from __future__ import annotations

from mnemo.errors import FailedPrecondition


class Retrieval:
    def __init__(self, backend, settings):
        self.backend, self.settings = backend, settings

    def capabilities(self) -> list[str]:
        return []

    def __getattr__(self, name):
        raise FailedPrecondition(f"retrieval.{name} is not built yet")
