"""search_svc: stateless query handling and the backend of every MCP tool.

Layout: `backend.py` (typed clients of store_svc and vector_svc), `retrieval.py`
(hybrid search, timelines, details), `memsearch.py` (mem_search cursors and layer 4),
`writes.py` (save_memory, work state, start-of-session context), `corpus.py` (knowledge
corpora jobs), `render.py` (text renderings), `servicer.py` (thin gRPC adapter),
`main.py` (composition root). Only servicer.py and main.py import grpc.
"""
