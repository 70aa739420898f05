"""PLACEHOLDER (owned by the mem_search helper).

class MemSearchEngine:
    def __init__(self, backend, retrieval, settings, clock=now_ms): ...
    def capabilities(self) -> list[str]          # ["mem_search", "tool_uses"]
    def mem_search(self, req: search_pb2.MemSearchRequest) -> search_pb2.MemSearchReply
    def get_tool_uses(self, req: search_pb2.GetToolUsesToolRequest) -> search_pb2.GetToolUsesReply
"""

from mnemo.errors import FailedPrecondition


class MemSearchEngine:
    def __init__(self, backend, retrieval, settings, clock=None):
        self.backend = backend

    def capabilities(self) -> list[str]:
        return []

    def __getattr__(self, name):
        raise FailedPrecondition(f"memsearch.{name} is not built yet")
