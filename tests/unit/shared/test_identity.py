"""mnemo.identity (who is calling, what it may touch, who writes) and the token settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemo import identity
from mnemo.config import load_settings
from mnemo.errors import InvalidArgument, PermissionDenied
from mnemo.grpc_server import build_server
from mnemo.identity import Identity

ALICE = Identity("alice", frozenset({"alpha"}))




def test_no_identity_is_the_local_stack_with_full_access():
    assert identity.get() is None and identity.writer() == ""
    assert identity.may_access("anything") and identity.is_admin()
    identity.require_writable("project", "anything")
    identity.require_admin("ReadChanges")


def test_a_confined_user_writes_only_its_projects_and_is_no_admin():
    reset = identity.current.set(ALICE)
    try:
        assert identity.writer() == "alice" and identity.restricted_projects() == frozenset({"alpha"})
        identity.require_writable("project", "alpha")
        with pytest.raises(PermissionDenied, match=r"^observations\[0\]\.project: .*'alice'.*'beta'"):
            identity.require_writable("observations[0].project", "beta")
        with pytest.raises(PermissionDenied, match="name one of its projects"):
            identity.require_writable("filter.project", "")
        with pytest.raises(PermissionDenied, match="service \\(admin\\) token"):
            identity.require_admin("ReadChanges")
    finally:
        identity.current.reset(reset)


def test_an_import_keeps_recorded_writers_only_for_the_admin():
    for who, expected in ((None, "dave"), (identity.SERVICE, "dave"), (ALICE, "alice")):
        reset = identity.current.set(who)
        try:
            with identity.keeping_writer("dave"):
                assert identity.writer() == expected
            with identity.keeping_writer(""):  # nothing recorded: the caller writes
                assert identity.writer() == (who.user if who else "")
        finally:
            identity.current.reset(reset)


def test_the_token_cache_forgets_after_its_ttl():
    now = [100.0]
    cache = identity.TokenCache(5.0, clock=lambda: now[0])
    cache.put("digest", ALICE)
    now[0] = 104.9
    assert cache.get("digest") is ALICE
    now[0] = 105.0  # a revoked token stops working once its cached answer is this old
    assert cache.get("digest") is None


def test_auth_token_file_supplies_the_token_unless_one_is_given(tmp_path: Path):
    secret = tmp_path / "token"
    secret.write_text("mnemo_abc\nignored second line\n")
    secret.chmod(0o600)
    home = str(tmp_path / "home")
    assert load_settings({"home": home, "auth_token_file": str(secret)}, environ={}).auth_token == "mnemo_abc"
    given = load_settings({"home": home, "auth_token_file": str(secret), "auth_token": "explicit"}, environ={})
    assert given.auth_token == "explicit"
    env = load_settings({"home": home}, environ={"MNEMO_AUTH_TOKEN_FILE": str(secret), "MNEMO_USER_TOKENS": "true"})
    assert env.auth_token == "mnemo_abc" and env.user_tokens is True
    (tmp_path / "empty").write_text("\n")
    (tmp_path / "empty").chmod(0o600)
    (tmp_path / "shared").write_text("mnemo_abc\n")
    (tmp_path / "shared").chmod(0o640)
    for path, rule in ((tmp_path / "empty", "is empty"), (tmp_path / "missing", "cannot read"),
                       (tmp_path / "shared", "accessible by others \\(mode 0640\\)")):
        with pytest.raises(InvalidArgument, match=f"^auth_token_file: .*{rule}"):
            load_settings({"home": home, "auth_token_file": str(path)}, environ={})


def test_user_tokens_need_a_service_token(tmp_path: Path):
    with pytest.raises(InvalidArgument, match="^user_tokens: needs auth_token"):
        build_server(f"unix:{tmp_path}/s.sock", lambda server: [], resolve_token=lambda secret: ALICE)
