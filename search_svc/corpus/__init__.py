"""Knowledge corpora, the feature behind build/list/rebuild/prime/reprime/query_corpus.

- `core.py`: Corpora, the core the servicer calls (build, list, rebuild, prime, query);
- `job.py`: one priming job (load, embed in adaptive batches, digest; cancel and failure);
- `validation.py`: the tools' bounds and the filter to store;
- `passages.py`: observations cut into passages, and a snapshot's statistics;
- `rendering.py`: corpus summaries, the grounded-answer prompt and the answers;
- `records.py`: the store/vector calls both the core and a job make.
No module here imports grpc.
"""

from search_svc.corpus.core import Corpora
from search_svc.corpus.passages import observation_passages

__all__ = ["Corpora", "observation_passages"]
