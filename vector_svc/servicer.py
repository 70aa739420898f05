"""VectorService over gRPC: converts requests, calls the core, converts replies. Nothing else."""

from __future__ import annotations

from mnemo.errors import Unavailable
from mnemo.rpc_context import INDEX_MODEL_KEY, INDEX_WATERMARK_KEY
from mnemo.v1 import vector_pb2, vector_pb2_grpc
from vector_svc.corpus import Corpora
from vector_svc.follower import Follower, SyncResult
from vector_svc.idle import Activity
from vector_svc.index import VectorIndex


def _sync_reply(result: SyncResult) -> vector_pb2.VectorSyncResponse:
    return vector_pb2.VectorSyncResponse(
        applied=result.applied, watermark=result.watermark, documents=result.documents
    )


class VectorServicer(vector_pb2_grpc.VectorServiceServicer):
    """Calls that need the index are use (vector_svc.idle); Status and Count, asked in the
    background by search_svc and gateways, are not."""

    def __init__(self, index: VectorIndex, follower: Follower, corpora: Corpora, activity: Activity | None = None):
        self.index = index
        self.follower = follower
        self.corpora = corpora
        self.activity = activity or Activity()

    def Query(self, request, context):
        with self.activity.using():
            try:  # read before the query: whatever the watermark covers, the query searched
                watermark: int | None = self.index.watermark()
            except Unavailable:
                watermark = None  # the query fails the same way below
            hits = self.index.query(request.text, request.filters, request.limit)
        # What a search would otherwise ask Status for (search_svc.retrieval): one round trip less.
        if watermark is not None and context is not None:
            context.set_trailing_metadata(((INDEX_WATERMARK_KEY, str(watermark)),
                                           (INDEX_MODEL_KEY, self.index.embedder.model)))
        return vector_pb2.VectorQueryResponse(hits=hits)

    def Count(self, request, context):
        return vector_pb2.VectorCountResponse(count=self.index.count())

    def Status(self, request, context):
        return self.follower.status()

    def Sync(self, request, context):
        with self.activity.using():
            return _sync_reply(self.follower.sync(request.max_changes))

    def Rebuild(self, request, context):
        with self.activity.using():
            return _sync_reply(self.follower.rebuild())

    def UpsertCorpusDocuments(self, request, context):
        with self.activity.using():
            count = self.corpora.upsert(request.corpus, request.documents, request.reset, request.generation,
                                       request.project)
        return vector_pb2.UpsertCorpusDocumentsResponse(documents=count)

    def QueryCorpus(self, request, context):
        with self.activity.using():
            passages = self.corpora.query(request.corpus, request.text, request.limit, request.project)
        return vector_pb2.QueryCorpusResponse(passages=passages)

    def DropCorpus(self, request, context):
        with self.activity.using():
            return vector_pb2.DropCorpusResponse(dropped=self.corpora.drop(request.corpus, request.project))
