"""PLACEHOLDER (owned by the mem_search helper).

class Writes:
    def __init__(self, backend, settings): ...
    def capabilities(self) -> list[str]          # ["write", "work_state", "context"]
    def save_memory(self, req: search_pb2.SaveMemoryRequest) -> search_pb2.SaveMemoryReply
    def write_work_state(self, req: search_pb2.WorkStateWriteRequest) -> search_pb2.WorkStateReply
    def read_work_state(self, req: search_pb2.WorkStateReadRequest) -> search_pb2.WorkStateReply
    def session_start_context(self, req: search_pb2.SessionStartContextRequest) -> search_pb2.SessionStartContextReply
"""

from mnemo.errors import FailedPrecondition


class Writes:
    def __init__(self, backend, settings):
        self.backend = backend

    def capabilities(self) -> list[str]:
        return []

    def __getattr__(self, name):
        raise FailedPrecondition(f"writes.{name} is not built yet")
