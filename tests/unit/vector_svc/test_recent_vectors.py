"""RecentVectors: a text repeated across pages is embedded once, the rows stay in order, the LRU is bounded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from vector_svc.embedders import HashEmbedder
from vector_svc.recent import RecentVectors

pytestmark = pytest.mark.unit


class Counting:
    def __init__(self) -> None:
        self.embedder = HashEmbedder()
        self.asked: list[str] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.asked += texts
        return self.embedder.embed(list(texts))


def test_repeats_across_pages_are_embedded_once_and_rows_equal_the_embedders():
    recent, embed = RecentVectors(size=8), Counting()
    first = recent.embed(["a title", "a fact", "a title"], embed, 384)
    second = recent.embed(["a fact", "new narrative", "a title"], embed, 384)
    assert embed.asked == ["a title", "a fact", "new narrative"]
    direct = HashEmbedder().embed(["a title", "a fact", "new narrative"])
    assert np.array_equal(first, direct[[0, 1, 0]])
    assert np.array_equal(second, direct[[1, 2, 0]])
    assert second.dtype == np.float32 and recent.reused == 2


def test_the_oldest_texts_go_past_the_size_and_clear_empties_it():
    recent, embed = RecentVectors(size=2), Counting()
    recent.embed(["one", "two", "three"], embed, 384)
    assert len(recent) == 2
    recent.embed(["one"], embed, 384)  # "one" was the oldest: gone, embedded again
    assert embed.asked == ["one", "two", "three", "one"]
    recent.clear()
    assert len(recent) == 0
    assert recent.embed([], embed, 384).shape == (0, 384)
