"""Spawned mnemo processes run with few malloc arenas (mnemo/processes.py, MALLOC_ARENAS), unless
the user chose a number."""

from __future__ import annotations

import pytest

from mnemo.processes import MALLOC_ARENAS, settings_env

pytestmark = pytest.mark.unit


def test_spawned_processes_get_two_malloc_arenas(settings, monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert settings_env(settings)["MALLOC_ARENA_MAX"] == MALLOC_ARENAS == "2"


def test_a_users_own_arena_count_is_kept(settings, monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert settings_env(settings)["MALLOC_ARENA_MAX"] == "8"
