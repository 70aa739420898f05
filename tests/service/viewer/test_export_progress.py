"""`mnemo export` draws a progress bar on a terminal's stderr, and only there: the JSONL it
writes is the same either way."""

from __future__ import annotations

import argparse
import io

import pytest

from capture import transfer
from mnemo.v1 import common_pb2, store_pb2


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("on_terminal", [True, False])
def test_export_shows_progress_only_on_a_terminal(stack, store_stub, tmp_path, monkeypatch, on_terminal):
    store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=[
        common_pb2.Observation(memory_session_id="s1", project="alpha", type="discovery", title=f"record {i}")
        for i in range(250)]))
    err = Terminal() if on_terminal else io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    target = tmp_path / "out.jsonl"

    assert transfer.run_export(stack, argparse.Namespace(path=str(target), project=None)) == 0

    lines = target.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 250
    shown = err.getvalue()
    if on_terminal:
        assert "\rexporting [" in shown and f"] {len(lines)}/{len(lines)}\n" in shown
    else:
        assert "exporting [" not in shown
    assert f"export: {len(lines)} records" in shown
