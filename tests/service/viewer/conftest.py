"""Fixtures of the viewer's service tests."""

from __future__ import annotations

import pytest

from viewer.client import MemoryClient


@pytest.fixture
def memory(stack):
    """The viewer's client of search_svc over the test stack."""
    client = MemoryClient(stack)
    yield client
    client.close()
