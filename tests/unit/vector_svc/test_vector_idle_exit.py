"""vector_svc idles out only when unused for vector_idle_exit_s, nothing is left to follow, and a
supervisor can wake it; a call in progress is use throughout; 0 never idles out."""

from __future__ import annotations

import threading

import pytest

from mnemo.config import Settings
from mnemo.errors import InvalidArgument
from tests.fakes.clock import Clock
from vector_svc.idle import Activity, IdleExit
from vector_svc.main import idle_exit_s

pytestmark = pytest.mark.unit


def test_it_is_due_only_after_the_idle_time_and_when_it_may_rest():
    clock = Clock()
    activity = Activity(clock)
    may_rest = [True]
    idle = IdleExit(activity, lambda: may_rest[0], 600.0, lambda: None)
    clock.now += 599.0
    assert not idle.due()
    clock.now += 1.0
    assert idle.due()
    may_rest[0] = False  # a backlog to follow, or no supervisor to wake it
    assert not idle.due()
    may_rest[0] = True
    activity.touch()
    assert not idle.due()


def test_a_call_in_progress_is_use_until_it_ends():
    clock = Clock()
    activity = Activity(clock)
    idle = IdleExit(activity, lambda: True, 60.0, lambda: None)
    with activity.using():
        clock.now += 3600.0  # a rebuild that takes an hour
        assert not idle.due()
    assert not idle.due()  # and the idle time counts from its end
    clock.now += 60.0
    assert idle.due()


def test_zero_never_idles_out():
    clock = Clock()
    idle = IdleExit(Activity(clock), lambda: True, 0.0, lambda: None)
    clock.now += 1e9
    assert not idle.due()
    idle.start()
    assert idle._thread is None


def test_the_watcher_calls_on_idle_once():
    rested = threading.Event()
    calls: list[int] = []

    def on_idle() -> None:
        calls.append(1)
        rested.set()

    idle = IdleExit(Activity(), lambda: True, 0.05, on_idle)
    idle.start()
    assert rested.wait(30)
    assert idle._thread is not None
    idle._thread.join(30)
    assert calls == [1]


def test_replicas_on_a_chroma_server_never_rest_and_a_negative_time_is_refused():
    assert idle_exit_s(Settings(vector_idle_exit_s=30.0)) == 30.0
    assert idle_exit_s(Settings(vector_idle_exit_s=30.0, chroma_url="http://127.0.0.1:8000")) == 0.0
    with pytest.raises(InvalidArgument) as err:
        idle_exit_s(Settings(vector_idle_exit_s=-1.0))
    assert "vector_idle_exit_s" in str(err.value)
