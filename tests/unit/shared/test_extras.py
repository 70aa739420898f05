"""Optional features as extras: a missing extra is one line naming what to install."""

from __future__ import annotations

import sys

import pytest

from mnemo import extras, llm
from mnemo.cli_errors import one_line
from mnemo.config import with_overrides
from mnemo.errors import FailedPrecondition
from store_svc.core import Store

pytestmark = pytest.mark.unit


def test_a_missing_module_names_the_extra_that_installs_it():
    with pytest.raises(FailedPrecondition) as raised:
        extras.require("mnemo_no_such_module.sub", "server", "the thing")
    assert str(raised.value) == "the thing needs the 'server' extra: pip install 'mnemo[server]'"


def test_a_module_that_is_there_but_misses_something_else_raises_as_it_is(tmp_path, monkeypatch):
    (tmp_path / "half_installed.py").write_text("import mnemo_not_installed_either\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="mnemo_not_installed_either"):
        extras.require("half_installed", "server", "the thing")


def test_the_postgres_backend_without_the_server_extra_says_which_extra(settings, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    postgres = with_overrides(settings, store_backend="postgres", store_dsn="postgresql:///nowhere")
    with pytest.raises(FailedPrecondition) as raised:
        Store.from_settings(postgres)
    assert one_line(raised.value, postgres) == (
        "FAILED_PRECONDITION: the PostgreSQL store backend (store_backend = postgres) needs the 'server' "
        "extra: pip install 'mnemo[server]'"
    )


def test_the_llm_without_the_llm_extra_says_which_extra(settings, monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)
    configured = with_overrides(settings, anthropic_api_key="sk-test")
    with pytest.raises(FailedPrecondition, match=r"needs the 'llm' extra: pip install 'mnemo\[llm\]'"):
        llm.complete(configured, "system", "user")


def test_the_dev_extra_installs_every_optional_feature():
    """`make venv` installs '.[dev]': the tests must find every extra's packages there (fp32 is
    installed by the Makefile on its own, without its torch)."""
    import tomllib

    from tests.conftest import REPO_ROOT

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    own = [entry for entry in optional["dev"] if entry.startswith("mnemo[")]
    installed = {name.strip() for entry in own for name in entry[len("mnemo[") : -1].split(",")}
    assert set(optional) - {"dev", "fp32"} <= installed


def test_code_navigation_without_the_code_extra_says_which_extra(monkeypatch):
    import gateway.codenav

    monkeypatch.setitem(sys.modules, "tree_sitter", None)
    with pytest.raises(
        FailedPrecondition, match=r"code navigation .* needs the 'code' extra: pip install 'mnemo\[code\]'"
    ):
        _ = gateway.codenav.run_smart_outline
