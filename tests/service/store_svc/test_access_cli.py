"""`mnemo server token add|list|revoke` against a real store_svc, addressed like a remote
server (`--store-addr`, `--auth-token-file`)."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from mnemo import cli
from mnemo.config import Settings, with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import store_pb2, store_pb2_grpc
from tests.conftest import start_service

SERVICE_TOKEN = "service-secret-for-cli-tests"


@pytest.fixture
def server(settings: Settings):
    settings = with_overrides(settings, auth_token=SERVICE_TOKEN, user_tokens=True, token_cache_s=0.0)
    handle, on_stop = start_service("store", settings, "127.0.0.1:0")
    token_file = settings.home / "service.token"
    token_file.write_text(SERVICE_TOKEN + "\n")
    token_file.chmod(0o600)
    try:
        yield handle.address, token_file, settings.home
    finally:
        handle.stop(0.5)
        on_stop()


def mnemo(capsys: pytest.CaptureFixture[str], address: str, token_file: Path, home: Path, *args: str):
    code = cli.main(["server", "token", *args, "--store-addr", address, "--auth-token-file", str(token_file),
                     "--home", str(home / "client")])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_list_revoke_through_the_command(server, capsys: pytest.CaptureFixture[str]):
    address, token_file, home = server
    code, out, _ = mnemo(capsys, address, token_file, home, "add", "--user", "alice", "--project", "alpha",
                         "--project", "beta", "--json")
    assert code == 0
    added = json.loads(out)
    assert (added["user"], added["projects"], added["all_projects"]) == ("alice", ["alpha", "beta"], False)
    secret = added["secret"]
    channel = open_channel(address, auth_token=secret)
    who = store_pb2_grpc.StoreServiceStub(channel).WhoAmI(store_pb2.WhoAmIRequest())
    assert (who.user, list(who.projects)) == ("alice", ["alpha", "beta"])

    code, out, _ = mnemo(capsys, address, token_file, home, "add", "--user", "ops", "--all-projects")
    assert code == 0 and "all projects" in out and out.strip().splitlines()[-1].startswith("mnemo_")
    code, out, _ = mnemo(capsys, address, token_file, home, "list")
    assert code == 0 and "alice" in out and "alpha, beta" in out and secret not in out
    code, out, _ = mnemo(capsys, address, token_file, home, "revoke", str(added["id"]), "--json")
    assert code == 0 and json.loads(out)["revoked_at"]
    with pytest.raises(grpc.RpcError) as caught:  # token_cache_s=0: refused at once
        store_pb2_grpc.StoreServiceStub(channel).WhoAmI(store_pb2.WhoAmIRequest())
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    channel.close()
    code, out, _ = mnemo(capsys, address, token_file, home, "list", "--json")
    assert [t["user"] for t in json.loads(out)] == ["ops"]
    code, out, _ = mnemo(capsys, address, token_file, home, "list", "--all", "--json")
    assert [t["user"] for t in json.loads(out)] == ["alice", "ops"]


def test_a_user_token_cannot_administer_tokens(server, capsys: pytest.CaptureFixture[str]):
    address, token_file, home = server
    code, out, _ = mnemo(capsys, address, token_file, home, "add", "--user", "bob", "--project", "beta", "--json")
    user_file = home / "bob.token"
    user_file.write_text(json.loads(out)["secret"])
    user_file.chmod(0o600)
    code, _, err = mnemo(capsys, address, user_file, home, "add", "--user", "bob", "--all-projects")
    assert code == 2 and "PERMISSION_DENIED" in err and "service (admin) token" in err
    code, _, err = mnemo(capsys, address, token_file, home, "revoke", "99")
    assert code == 2 and "NOT_FOUND" in err
    code, _, err = mnemo(capsys, address, token_file, home, "add", "--user", "bad name", "--project", "p")
    assert code == 2 and "INVALID_ARGUMENT: user:" in err
