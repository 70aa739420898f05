"""mnemo.config: flags > environment (MNEMO_*) > $MNEMO_HOME/config.toml > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemo.config import Settings, ensure_private_dirs, load_settings, with_overrides
from mnemo.errors import InvalidArgument

pytestmark = pytest.mark.unit


def _write_toml(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")


def test_defaults_apply_when_nothing_is_set(home):
    settings = load_settings({"home": str(home)}, environ={})
    assert settings.rpc_timeout_s == Settings.rpc_timeout_s and settings.embedder == Settings.embedder
    assert settings.database == home.resolve() / "mnemo.db"
    assert settings.listen_address("store") == f"unix:{home.resolve() / 'run' / 'store.sock'}"


def test_each_layer_overrides_the_one_below(home):
    _write_toml(home, 'embedder = "hash"\nrpc_timeout_s = 3.5\ncursor_ttl_s = 60\nlog_level = "debug"\n')
    env = {"MNEMO_HOME": str(home), "MNEMO_RPC_TIMEOUT_S": "7", "MNEMO_CURSOR_TTL_S": "90"}
    settings = load_settings({"cursor_ttl_s": "120"}, environ=env)
    assert settings.embedder == "hash"  # toml over default
    assert settings.rpc_timeout_s == 7.0  # env over toml
    assert settings.cursor_ttl_s == 120  # flag over env
    assert settings.log_level == "debug"


def test_home_comes_from_flag_then_environment(home, tmp_path):
    other = tmp_path / "other-home"
    assert load_settings({}, environ={"MNEMO_HOME": str(home)}).home == home.resolve()
    assert load_settings({"home": str(other)}, environ={"MNEMO_HOME": str(home)}).home == other.resolve()


def test_types_are_coerced_and_bad_values_name_the_field(home):
    settings = load_settings({"home": str(home)}, environ={"MNEMO_SKIP_TOOLS": "A, B,,C"})
    assert settings.skip_tools == ("A", "B", "C")
    with pytest.raises(InvalidArgument, match="^tool_uses_cap_bytes: cannot read"):
        load_settings({"home": str(home)}, environ={"MNEMO_TOOL_USES_CAP_BYTES": "lots"})
    with pytest.raises(InvalidArgument, match="^no_such_setting: unknown setting"):
        load_settings({"home": str(home), "no_such_setting": 1}, environ={})


def test_unknown_toml_keys_are_kept_aside_and_bad_toml_is_refused(home):
    _write_toml(home, 'mystery = 1\n')
    assert load_settings({"home": str(home)}, environ={}).extra == {"mystery": 1}
    _write_toml(home, 'broken = \n')
    with pytest.raises(InvalidArgument, match="invalid TOML"):
        load_settings({"home": str(home)}, environ={})


def test_private_dirs_and_overrides(home):
    settings = with_overrides(load_settings({"home": str(home)}, environ={}), store_listen="127.0.0.1:1")
    ensure_private_dirs(settings)
    assert (settings.run_dir.stat().st_mode & 0o777) == 0o700
    assert settings.address("store") == "127.0.0.1:1"
