"""mem_search and get_tool_uses: `params.py` checks the requests, `engine.py` runs the
searches over cursors kept in store_svc, `replies.py` arranges the reply texts (records
themselves are rendered by search_svc.render)."""

from search_svc.memsearch.engine import MemSearchEngine

__all__ = ["MemSearchEngine"]
