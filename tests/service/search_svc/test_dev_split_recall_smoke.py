"""A small LoCoMo run through the public API: the retrieval protocol of bench/locomo/run.py on
the first sessions of one conversation. Skips where ../shared/data/locomo is absent."""

from __future__ import annotations

import pytest

from bench.locomo import run as bench
from tests.conftest import LOCOMO_DIR

pytestmark = [pytest.mark.service, pytest.mark.chroma, pytest.mark.slow]

SAMPLE, SESSIONS = 1, 3  # the data file's second conversation, its first three sessions


@pytest.mark.skipif(not (LOCOMO_DIR / "locomo-dev.json").is_file(), reason="LoCoMo data absent")
def test_hybrid_search_finds_evidence_for_locomo_questions(settings):
    dev = bench.load_dev(LOCOMO_DIR)
    corrections, _ = bench.audit_corrections(dev, LOCOMO_DIR)
    conv = dev[SAMPLE]
    stack = bench.Stack(settings.embedder, settings=settings)
    try:
        results, questions, _ = bench.run(stack, [conv], corrections, max_sessions=SESSIONS)
    finally:
        stack.close()
    assert len(questions) >= 10
    lexical, hybrid = results["lexical"]["1-4"], results["hybrid"]["1-4"]
    assert hybrid.recall(5) >= 0.4
    assert hybrid.recall(10) >= lexical.recall(10) - 0.1
