"""The embedding model is let go after a while unused and loaded again by the next embedding."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from mnemo.errors import InvalidArgument
from tests.fakes.clock import Clock
from vector_svc.embedders import MiniLMInt8Embedder, make_embedder
from vector_svc.memory import IdleModel

pytestmark = pytest.mark.unit


def _holder(release_after_s: float, clock: Clock) -> tuple[IdleModel[dict], list[dict]]:
    built: list[dict] = []

    def load() -> dict:
        built.append({"weights": len(built)})
        return built[-1]

    return IdleModel(load, release_after_s, clock), built


def test_the_model_is_loaded_at_once_released_when_idle_and_loaded_again_on_use():
    clock = Clock()
    holder, built = _holder(60.0, clock)
    assert holder.loaded and len(built) == 1
    clock.now += 59.0
    assert not holder.release_if_idle() and holder.loaded  # not idle long enough
    clock.now += 1.0
    assert holder.release_if_idle() and not holder.loaded
    with holder.use() as model:
        assert model is built[1]  # a fresh load
    assert holder.loads == 2


def test_a_model_in_use_is_never_released_and_use_restarts_the_idle_time():
    clock = Clock()
    holder, _ = _holder(60.0, clock)
    with holder.use():
        clock.now += 600.0
        assert not holder.release_if_idle()
    clock.now += 30.0  # idle time counts from the end of the last use
    assert not holder.release_if_idle()
    clock.now += 30.0
    assert holder.release_if_idle()


def test_zero_keeps_the_model_for_good():
    clock = Clock()
    holder, _ = _holder(0.0, clock)
    clock.now += 1e9
    assert not holder.release_if_idle() and holder.loaded


def _watchers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "model-idle-watch"}


def test_the_watcher_releases_the_model_on_its_own_and_ends():
    before = _watchers()
    holder, built = _holder(0.05, time.monotonic)  # type: ignore[arg-type]
    [watcher] = _watchers() - before
    deadline = time.monotonic() + 10.0
    while holder.loaded and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not holder.loaded
    watcher.join(timeout=10.0)
    assert not watcher.is_alive()
    with holder.use():
        pass
    assert len(built) == 2


def test_concurrent_first_users_share_one_load():
    clock = Clock()
    holder, built = _holder(60.0, clock)
    clock.now += 60.0
    assert holder.release_if_idle()
    got: list[dict] = []

    def user() -> None:
        with holder.use() as model:
            got.append(model)

    threads = [threading.Thread(target=user) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 2 and all(m is built[1] for m in got)


def test_the_real_model_embeds_the_same_after_a_release():
    embedder = MiniLMInt8Embedder(release_after_s=3600.0)
    before = embedder.embed(["database lock error"])
    embedder.model_memory._last_used -= 3600.0  # as if an hour had passed unused
    assert embedder.model_memory.release_if_idle() and not embedder.model_memory.loaded
    after = embedder.embed(["database lock error"])
    assert embedder.model_memory.loaded and embedder.model_memory.loads == 2
    assert np.allclose(before, after, atol=1e-6)


def test_a_negative_idle_time_is_refused_naming_the_setting():
    with pytest.raises(InvalidArgument) as err:
        make_embedder("hash", release_after_s=-1.0)
    assert "vector_idle_release_s" in str(err.value)
