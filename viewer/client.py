"""What the viewer and the terminal commands ask search_svc, as typed calls.

One search path for both, the same hybrid engine `mem_search` uses (SearchService.Search
over retrieval.hybrid), so a query with the same project returns the same ids everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mnemo.config import Settings
from mnemo.errors import MnemoError
from mnemo.grpc_client import ServiceClient, check_health, connect
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2

SearchClient = ServiceClient[search_pb2_grpc.SearchServiceStub]
SERVICES = ("store", "vector", "search")


@dataclass(frozen=True)
class SearchQuery:
    """A search as a person asks it: text and the filters mem_search knows, all optional."""

    text: str = ""
    project: str = ""
    types: tuple[str, ...] = ()
    date_start: str = ""
    date_end: str = ""
    files: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    limit: int = 20
    offset: int = 0

    def request(self) -> search_pb2.SearchRequest:
        return search_pb2.SearchRequest(
            query=self.text, project=self.project, obs_types=list(self.types), date_start=self.date_start,
            date_end=self.date_end, files=list(self.files), categories=list(self.kinds), limit=self.limit,
            offset=self.offset, order_by="relevance" if self.text.strip() else "date_desc",
        )


@dataclass
class Health:
    """Which services answer, and the store's and vector index's state."""

    services: dict[str, bool] = field(default_factory=dict)
    overview: search_pb2.OverviewReply | None = None
    problem: str = ""


class MemoryClient:
    """The calls behind every page and command."""

    def __init__(self, settings: Settings, search: SearchClient | None = None):
        self.settings = settings
        self.search_client = search or connect(settings, "search", search_pb2_grpc.SearchServiceStub)

    @property
    def stub(self) -> search_pb2_grpc.SearchServiceStub:
        return self.search_client.stub

    def close(self) -> None:
        self.search_client.close()

    def search(self, query: SearchQuery) -> search_pb2.SearchReply:
        return self.stub.Search(query.request())

    def recent(self, project: str = "", limit: int = 50) -> list[common_pb2.IndexRow]:
        return list(self.search(SearchQuery(project=project, limit=limit)).rows)

    def detail(self, record_id: str) -> search_pb2.RecordDetailReply:
        return self.stub.GetRecordDetail(search_pb2.RecordDetailRequest(id=record_id))

    def overview(self, project: str = "", days: int = 30) -> search_pb2.OverviewReply:
        return self.stub.Overview(search_pb2.OverviewRequest(project=project, days=days))

    def forget(self, ids: list[str] | tuple[str, ...] = (), sessions: list[str] | tuple[str, ...] = (),
               project: str = "") -> search_pb2.ForgetReply:
        return self.stub.Forget(search_pb2.ForgetToolRequest(ids=list(ids), sessions=list(sessions),
                                                             project=project))

    def mark_wrong(self, ids: list[str] | tuple[str, ...], undo: bool = False,
                   reason: str = "") -> search_pb2.MarkWrongReply:
        return self.stub.MarkWrong(search_pb2.MarkWrongToolRequest(ids=list(ids), undo=undo, reason=reason))

    def edit(self, request: store_pb2.EditObservationRequest) -> search_pb2.RecordDetailReply:
        return self.stub.EditObservation(request)

    def health(self, project: str = "") -> Health:
        services = {name: check_health(self.settings.address(name), tls_ca=self.settings.tls_ca)
                    for name in SERVICES}
        health = Health(services=services)
        try:
            health.overview = self.overview(project)
        except MnemoError as err:
            health.problem = f"{err.code}: {err}"
        return health
