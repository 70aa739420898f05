"""PLACEHOLDER (owned by the corpus helper).

class Corpora:
    def __init__(self, backend, retrieval, settings): ...
    def capabilities(self) -> list[str]          # ["corpus"] (+ "llm" when an Anthropic key is configured)
    def build(self, req: search_pb2.BuildCorpusRequest) -> search_pb2.CorpusReply
    def list(self, req) -> search_pb2.ListCorporaReply
    def rebuild(self, req: search_pb2.CorpusNameRequest) -> search_pb2.CorpusReply
    def prime(self, req, is_cancelled: Callable[[], bool]) -> Iterator[search_pb2.PrimeEvent]
    def reprime(self, req, is_cancelled) -> Iterator[search_pb2.PrimeEvent]
    def query(self, req: search_pb2.QueryCorpusToolRequest) -> search_pb2.QueryCorpusReply
    def close(self) -> None
"""

from mnemo.errors import FailedPrecondition


class Corpora:
    def __init__(self, backend, retrieval, settings):
        self.backend = backend

    def capabilities(self) -> list[str]:
        return []

    def close(self) -> None:
        pass

    def __getattr__(self, name):
        raise FailedPrecondition(f"corpora.{name} is not built yet")
