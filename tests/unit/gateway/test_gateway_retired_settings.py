"""mcp_fast_start is retired (issue 36: the gateway always answers its handshake itself): left in
config.toml or the environment it is ignored with a warning naming it, and given as a flag it is
refused, naming why."""

from __future__ import annotations

import pytest

from mnemo.config import load_settings
from mnemo.errors import InvalidArgument

pytestmark = pytest.mark.unit


def test_a_retired_setting_in_config_toml_or_the_environment_is_ignored_with_a_warning(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('mcp_fast_start = false\nmcp_profile = "legacy"\n')
    settings = load_settings({"home": str(home)}, environ={"MNEMO_MCP_FAST_START": "ture"})
    assert settings.mcp_profile == "legacy" and "mcp_fast_start" not in settings.extra
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == 2 and all("mcp_fast_start" in line and "retired and ignored" in line for line in warnings)
    assert "config.toml" in warnings[0] and "MNEMO_MCP_FAST_START" in warnings[1]


def test_a_retired_setting_given_as_a_flag_is_refused_with_the_reason(tmp_path):
    with pytest.raises(InvalidArgument) as refused:
        load_settings({"home": str(tmp_path / "home"), "mcp_fast_start": "false"}, environ={})
    assert refused.value.field == "mcp_fast_start" and "retired" in str(refused.value)
