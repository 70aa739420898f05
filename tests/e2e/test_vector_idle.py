"""vector_svc idles out and comes back: with the real supervisor, a vector_svc left unused for
`vector_idle_exit_s` exits and rests (not counted as a crash, not restarted); the next search
is answered lexically, says the semantic side warms up, and wakes it; searches are hybrid again
once it is back; `mnemo status` shows it idle, not down."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from bench.replay import run_hook
from mnemo import supervisor, wake
from mnemo.config import with_overrides
from mnemo.grpc_client import connect
from mnemo.stack import ensure_stack, read_pid, run_down, service_healthy
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, store_pb2_grpc
from search_svc.retrieval import SEMANTIC_WARMING
from tests.conftest import REPO_ROOT, processes_of, subprocess_env, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

IDLE_S = 1.0


@pytest.fixture
def resting_home(settings):
    idle = with_overrides(settings, vector_idle_exit_s=IDLE_S, log_level="info")  # the supervisor's log says why
    yield idle
    run_down(idle, None)
    for pid, argv in processes_of(idle.home):
        if b"serve" in argv or b"supervise" in argv:
            os.kill(pid, signal.SIGKILL)


def status(settings) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mnemo.cli", "status"], cwd=str(REPO_ROOT), capture_output=True,
                          text=True, timeout=60, env=subprocess_env(settings, MNEMO_VECTOR_IDLE_EXIT_S=str(IDLE_S)))


def test_vector_svc_rests_when_unused_and_the_next_search_wakes_it(resting_home):
    settings = resting_home
    assert ensure_stack(settings, 120)  # vector_svc may already rest when it returns: IDLE_S is short
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    search = connect(settings, "search", search_pb2_grpc.SearchServiceStub)
    try:
        store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id="s1", project="p", type="bugfix", title="Fixed the flaky websocket reconnect",
            narrative="the reconnect loop now backs off")]))

        # Unused, and nothing left to follow once the record is embedded: it rests.
        wait_for(lambda: wake.resting(settings.run_dir) == {"vector"}, 60, "vector_svc to rest")
        assert not service_healthy(settings, "vector") and read_pid(settings, "vector") is None
        shown = status(settings)
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert [line.split()[1] for line in shown.stdout.splitlines() if line.startswith("vector")] == ["idle"]

        # The search in between is lexical, says why, and asks for vector_svc.
        reply = search.stub.Search(search_pb2.SearchRequest(query="websocket reconnect", limit=5))
        assert (reply.strategy, reply.notice) == ("lexical", SEMANTIC_WARMING)
        assert [row.title for row in reply.rows] == ["Fixed the flaky websocket reconnect"]
        assert SEMANTIC_WARMING in reply.text

        # It comes back (a new process) and searches are hybrid again; it may rest again between
        # two polls (IDLE_S is short), and the next search wakes it again.
        def hybrid():
            answer = search.stub.Search(search_pb2.SearchRequest(query="websocket reconnect", limit=5))
            return answer if answer.strategy == "hybrid" else None

        again = wait_for(hybrid, 90, "a hybrid search after the wake")
        assert [row.title for row in again.rows] == ["Fixed the flaky websocket reconnect"]
    finally:
        store.close()
        search.close()
    assert supervisor.restarts(settings)["vector"] == 0  # a rest is not a crash
    log = supervisor_log(settings)
    assert "service_resting" in log and "service_woken" in log and "service_exited" not in log


def test_a_gateway_or_hook_starting_the_stack_wakes_a_resting_vector_svc(resting_home):
    settings = resting_home
    assert ensure_stack(settings, 120)
    wait_for(lambda: wake.resting(settings.run_dir) == {"vector"}, 60, "vector_svc to rest")
    # ensure_stack (what gateways and hooks call) asks for it and does not wait: the stack is usable.
    assert ensure_stack(settings, 120)
    wait_for(lambda: "service_woken" in supervisor_log(settings), 60, "vector_svc woken")


def test_a_corpus_query_wakes_a_resting_vector_svc_and_waits_for_it(resting_home):
    """The corpus tools have no lexical answer to give meanwhile: they wake it and wait."""
    settings = resting_home
    assert ensure_stack(settings, 120)
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    search = connect(settings, "search", search_pb2_grpc.SearchServiceStub)
    try:
        store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
            memory_session_id="s1", project="alpha", type="discovery", title=f"Websocket note {i}",
            narrative=f"the websocket reconnect loop, case {i}") for i in range(6)]))
        kb = search_pb2.BuildCorpusRequest(name="kb", filter=store_pb2.CorpusFilter(project="alpha"))
        search.stub.BuildCorpus(kb)
        wait_for(lambda: wake.resting(settings.run_dir) == {"vector"}, 60, "vector_svc to rest")
        events = list(search.stub.PrimeCorpus(search_pb2.CorpusNameRequest(name="kb"), timeout=120))
        assert events[-1].phase == "done", events[-1]
        wait_for(lambda: wake.resting(settings.run_dir) == {"vector"}, 60, "vector_svc to rest again")
        reply = search.stub.QueryCorpus(search_pb2.QueryCorpusToolRequest(name="kb", question="websocket reconnect",
                                                                          limit=4), timeout=120)
    finally:
        store.close()
        search.close()
    assert reply.passages


def supervisor_log(settings) -> str:
    return (settings.logs_dir / "supervisor.log").read_text()


def test_a_session_start_wakes_a_resting_vector_svc_before_the_first_search(resting_home):
    """The SessionStart hook warms it ahead of use, so the session's first search is hybrid."""
    settings = resting_home
    assert ensure_stack(settings, 120)
    wait_for(lambda: wake.resting(settings.run_dir) == {"vector"}, 60, "vector_svc to rest")
    started = run_hook("SessionStart", {"session_id": "s-warm", "cwd": str(settings.home), "source": "startup"},
                       subprocess_env(settings, MNEMO_VECTOR_IDLE_EXIT_S=str(IDLE_S)))
    assert started.returncode == 0, started.stderr
    wait_for(lambda: "service_woken" in supervisor_log(settings), 60, "vector_svc woken by the session start")
