"""Fixtures of the search_svc service tests."""

from __future__ import annotations

import pytest

from tests.service.search_svc.corpus_support import ReceivedBatches, count_received_batches


@pytest.fixture
def received(monkeypatch: pytest.MonkeyPatch) -> ReceivedBatches:
    """The embedding batches vector_svc receives during the test, per corpus."""
    return count_received_batches(monkeypatch)
