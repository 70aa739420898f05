"""Vectors of texts embedded lately, so a text repeated across pages of the change feed is embedded once.

A catch-up (an import, a rebuild) embeds page after page of records, and records repeat texts:
a title or a fact shared by many observations, a summary field every session fills alike
("patched and tested"). embed_all already embeds a text once per page; this keeps the vectors of
the last `size` distinct texts across pages. Embedding is about 90% of a catch-up's CPU
(docs/performance.md), so each repeat saved is a text's forward pass (about 7 ms of CPU).

The vectors are the embedder's own for the same text, as a repeat within a page already gets.
Memory: `size` x 1.5 KiB (384 float32), and the follower clears it once it has caught up, so a
steady stack holds none of it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

RECENT_TEXTS = 2048  # measured on bench/peer's 10k corpus: 24,901 -> 19,690 texts embedded


class RecentVectors:
    def __init__(self, size: int = RECENT_TEXTS):
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.reused = 0  # texts answered from here, for tests and benchmarks

    def embed(self, texts: Sequence[str], embed: Callable[[Sequence[str]], np.ndarray], dimension: int) -> np.ndarray:
        """Vectors for `texts` (rows in order); only the texts not seen lately go to `embed`."""
        if not texts:
            return np.zeros((0, dimension), dtype=np.float32)
        with self._lock:
            known = {text: self._vectors[text] for text in dict.fromkeys(texts) if text in self._vectors}
            for text in known:
                self._vectors.move_to_end(text)
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        fresh = embed(missing) if missing else np.zeros((0, dimension), dtype=np.float32)
        rows = dict(known)
        with self._lock:
            for text, vector in zip(missing, fresh, strict=True):
                rows[text] = self._vectors[text] = np.array(vector, dtype=np.float32)  # a copy, not a view
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
            self.reused += sum(1 for text in texts if text in known)
        return np.stack([rows[text] for text in texts]).astype(np.float32, copy=False)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()

    def __len__(self) -> int:
        return len(self._vectors)
