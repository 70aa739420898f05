"""mnemo.remote: the server runtime's settings and its token file rules."""

from __future__ import annotations

import os

import pytest

from mnemo.config import load_settings
from mnemo.errors import InvalidArgument
from mnemo.processes import is_local
from mnemo.remote import check_server_url, read_token, server_settings

pytestmark = pytest.mark.unit


def _token(tmp_path, text="tok-123\n", mode=0o600):
    path = tmp_path / "token"
    path.write_text(text)
    os.chmod(path, mode)
    return path


def test_a_private_token_file_gives_the_token(tmp_path):
    assert read_token(_token(tmp_path)) == "tok-123"


@pytest.mark.parametrize(("text", "mode", "rule"), [
    ("tok", 0o644, "accessible by others (mode 0644)"),
    ("tok", 0o660, "accessible by others (mode 0660)"),
    ("tok", 0o602, "accessible by others (mode 0602)"),
    ("  \n", 0o600, "is empty"),
    ("two words", 0o600, "must hold one token"),
    ("a\nb", 0o600, "must hold one token"),
    ("x" * 5000, 0o600, "larger than 4096 bytes"),
])
def test_a_bad_token_file_is_refused_naming_the_setting(tmp_path, text, mode, rule):
    with pytest.raises(InvalidArgument) as err:
        read_token(_token(tmp_path, text, mode))
    assert err.value.field == "token_file" and rule in err.value.rule
    assert "tok" not in err.value.rule.replace("token", "")  # the token itself is never quoted


def test_a_missing_file_or_a_directory_is_refused(tmp_path):
    with pytest.raises(InvalidArgument, match="token_file: cannot read"):
        read_token(tmp_path / "absent")
    with pytest.raises(InvalidArgument, match="not a regular file"):
        read_token(tmp_path)


@pytest.mark.parametrize("url", ["https://h:1", "unix:/x.sock", "host", "host:0", "host:99999", ":443"])
def test_server_url_is_host_and_port(url):
    with pytest.raises(InvalidArgument, match="server_url: use HOST:PORT"):
        check_server_url(url)


def test_server_settings_point_every_client_at_the_server_and_nothing_is_local(tmp_path):
    token = _token(tmp_path)
    local = load_settings({"home": str(tmp_path)}, environ={})
    assert server_settings(local) is local
    remote = server_settings(load_settings({"home": str(tmp_path), "server_url": "10.0.0.5:7443",
                                            "token_file": str(token)}, environ={}))
    assert (remote.address("search"), remote.address("store"), remote.auth_token) == (
        "10.0.0.5:7443", "10.0.0.5:7443", "tok-123")
    assert not is_local(remote, "search") and not is_local(remote, "store")
