"""Strict configuration: a typo in a boolean, a choice or a number is refused, naming the
setting and what it accepts, from every layer (environment, config.toml, flags), instead of
silently meaning the default."""

from __future__ import annotations

import dataclasses

import pytest

from mnemo.config import CHOICES, POSITIVE, Settings, load_settings
from mnemo.errors import InvalidArgument

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("variable", "value", "named"), [
    ("MNEMO_USER_TOKENS", "ture", "true or false"),
    ("MNEMO_INSECURE_NO_AUTH", "yes please", "true or false"),
    ("MNEMO_STORE_BACKEND", "postgress", "sqlite, postgres"),
    ("MNEMO_LOG_LEVEL", "verbose", "debug, info, warning, error"),
    ("MNEMO_VECTOR", "maybe", "on, off"),
    ("MNEMO_MCP_PROFILE", "everything", "default, legacy, all"),
    ("MNEMO_RPC_TIMEOUT_S", "nan", "greater than 0"),
    ("MNEMO_RPC_TIMEOUT_S", "0", "greater than 0"),
    ("MNEMO_STORE_POOL_SIZE", "-3", "greater than 0"),
    ("MNEMO_TOKEN_CACHE_S", "-1", "0 or more"),
    ("MNEMO_EMBED_DELAY_MS", "inf", "cannot read"),
    ("MNEMO_CURSOR_TTL_S", "30 minutes", "cannot read"),
])
def test_a_bad_value_in_the_environment_names_the_setting_and_what_it_takes(home, variable, value, named):
    with pytest.raises(InvalidArgument) as refused:
        load_settings({"home": str(home)}, environ={variable: value})
    setting = variable.removeprefix("MNEMO_").lower()
    assert refused.value.field == setting
    assert named in refused.value.rule and repr(value) in refused.value.rule


def test_config_toml_and_flags_are_held_to_the_same_rules(home):
    (home / "config.toml").write_text('store_backend = "postgress"\n', encoding="utf-8")
    with pytest.raises(InvalidArgument, match="store_backend: must be one of sqlite, postgres"):
        load_settings({"home": str(home)}, environ={})
    (home / "config.toml").write_text("user_tokens = 1.5\n", encoding="utf-8")
    with pytest.raises(InvalidArgument, match="user_tokens"):
        load_settings({"home": str(home)}, environ={})
    (home / "config.toml").unlink()
    with pytest.raises(InvalidArgument, match="log_level"):
        load_settings({"home": str(home), "log_level": "loud"}, environ={})


@pytest.mark.parametrize(("value", "meant"), [("true", True), ("FALSE", False), ("1", True), ("0", False),
                                              ("yes", True), ("off", False), (" On ", True)])
def test_the_usual_spellings_of_a_boolean_still_work(home, value, meant):
    assert load_settings({"home": str(home)}, environ={"MNEMO_USER_TOKENS": value}).user_tokens is meant


def test_choices_are_case_insensitive_and_zero_stays_a_valid_off(home):
    settings = load_settings({"home": str(home)}, environ={"MNEMO_LOG_LEVEL": "INFO", "MNEMO_TOKEN_CACHE_S": "0",
                                                           "MNEMO_VECTOR_LEASE_TTL_MS": "0"})
    assert (settings.log_level, settings.token_cache_s, settings.vector_lease_ttl_ms) == ("info", 0.0, 0)


def test_every_default_passes_its_own_rules():
    fields = {f.name: f.default for f in dataclasses.fields(Settings)}
    for name, choices in CHOICES.items():
        assert fields[name] in choices, name
    for name in POSITIVE:
        assert fields[name] > 0, name
