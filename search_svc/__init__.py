"""search_svc: stateless query handling and the backend of every MCP tool.

Layout, by feature:
- `backend.py`: typed clients of store_svc and vector_svc;
- `retrieval.py` (hybrid search, `search`) and `fusion.py` (rank fusion), with
  `requests.py` (the legacy search tools' bounds and filters);
- `details.py`: `timeline`, `get_observations` and mem_search's timeline context, on top of
  Retrieval;
- `memsearch/`: mem_search and get_tool_uses (`params`, `engine`, `replies`) and
  `cursor.py` (its cursors, kept in store_svc);
- `writes.py`: save_memory, work state, start-of-session context;
- `corpus/`: knowledge corpora (`validation`, `rendering`, `passages`, `job`, `core`) and
  `digest.py`;
- `render.py`: the one renderer of records, for every output;
- `servicer.py` (thin gRPC adapter) and `main.py` (composition root).
Only servicer.py, main.py and backend.py import grpc (a test checks it); query syntax is
parsed by mnemo.query alone, and shared constants come from mnemo.vocab.
"""
