"""Giving memory back to the operating system: freed heap, and a model nobody is using.

glibc keeps memory a process freed for its own reuse: after an indexing batch (ONNX activations
of up to 16 x 256 tokens, Chroma's write buffers) or the first query (Chroma loading its HNSW
segment), vector_svc would otherwise hold its peak for good. `malloc_trim(0)` returns the free
pages; measured under 1 ms on a 300 MiB process, so it runs after every indexing batch and, at
most every TRIM_EVERY_S, after a query. A no-op where libc has no malloc_trim (musl, macOS).

The local stack stays up between agent sessions, and the embedding model is about 100 MiB of
it: `IdleModel` lets the model go after a while without use and loads it again on the next
embedding (about 0.3 s, paid by the first query after the pause).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from mnemo.heap import trim_heap
from mnemo.logs import get_logger

log = get_logger(__name__)
Model = TypeVar("Model")

TRIM_EVERY_S = 5.0


class HeapTrimmer:
    """Calls malloc_trim now, or at most every `every_s` seconds (`maybe`)."""

    def __init__(self, every_s: float = TRIM_EVERY_S, clock: Callable[[], float] = time.monotonic):
        self.every_s, self._clock = every_s, clock
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.trims = 0  # for tests

    def now(self) -> None:
        with self._lock:
            self._last = self._clock()
            self.trims += 1
        trim_heap()

    def maybe(self) -> None:
        with self._lock:
            due = self._clock() - self._last >= self.every_s
        if due:
            self.now()


class IdleModel(Generic[Model]):
    """A model loaded now, released after `release_after_s` seconds in which nobody used it,
    and loaded again by the next `use()`. 0 keeps it for good.

    A watcher thread runs only while the model is loaded; a model in use is never released.
    """

    def __init__(self, load: Callable[[], Model], release_after_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic):
        self._load, self.release_after_s, self._clock = load, release_after_s, clock
        self._cond = threading.Condition()
        self._model: Model | None = None
        self._users = 0
        self._last_used = clock()
        self.loads = 0  # each load starts its own watcher, which ends when loads moves on
        with self._cond:
            self._ensure_loaded()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @contextmanager
    def use(self) -> Iterator[Model]:
        with self._cond:
            model = self._ensure_loaded()  # concurrent first users wait for one load
            self._users += 1
        try:
            yield model
        finally:
            with self._cond:
                self._users -= 1
                self._last_used = self._clock()

    def release_if_idle(self) -> bool:
        """Let the model go when it is loaded, unused, and idle long enough; True when it was."""
        with self._cond:
            idle = self._clock() - self._last_used
            if self._model is None or self._users or not self.release_after_s or idle < self.release_after_s:
                return False
            self._model = None
            self._cond.notify_all()
        HeapTrimmer().now()  # the model's memory is free now; hand it back
        log.info("model_released", idle_s=round(idle, 1), loads=self.loads)
        return True

    def _ensure_loaded(self) -> Model:
        if self._model is None:
            self._model = self._load()
            self.loads += 1
            self._last_used = self._clock()
            if self.release_after_s > 0:
                threading.Thread(target=self._watch, args=(self.loads,), daemon=True,
                                 name="model-idle-watch").start()
        return self._model

    def _watch(self, load: int) -> None:
        """Check a few times per idle period until this load of the model is released."""
        every = max(0.02, min(30.0, self.release_after_s / 4))
        while True:
            with self._cond:
                if self._model is None or self.loads != load:
                    return
                self._cond.wait(every)
            self.release_if_idle()
