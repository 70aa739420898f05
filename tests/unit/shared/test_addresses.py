"""mnemo.addresses: one address stays as it is; a list of replicas becomes one balanced target."""

from __future__ import annotations

import json

import pytest

from mnemo import addresses
from mnemo.errors import InvalidArgument

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("value", ["unix:/tmp/x/store.sock", "127.0.0.1:7000", "dns:///mnemo.internal:7000"])
def test_one_address_is_passed_to_grpc_unchanged(value):
    target = addresses.parse(value, "store_addr")
    assert (target.target, target.replicated, target.options) == (value, False, ())


def test_a_list_of_ips_becomes_one_round_robin_target_with_retries():
    target = addresses.parse(" 127.0.0.1:7001, 127.0.0.2:7002 ", "search_addr")
    assert target.target == "ipv4:127.0.0.1:7001,127.0.0.2:7002" and target.replicated
    config = json.loads(dict(target.options)["grpc.service_config"])
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    policy = config["methodConfig"][0]["retryPolicy"]
    assert policy["retryableStatusCodes"] == ["UNAVAILABLE"]
    retried = {(n["service"], n["method"]) for n in config["methodConfig"][0]["name"]}
    assert ("mnemo.v1.StoreService", "AddObservations") in retried  # deduped by content hash
    assert ("mnemo.v1.StoreService", "WriteWorkState") not in retried  # every write is a new version


def test_ipv6_replicas_and_host_names():
    assert addresses.parse("[::1]:7001,[::1]:7002").target == "ipv6:[::1]:7001,[::1]:7002"
    named = addresses.parse("localhost:7001,127.0.0.1:7002", "store_addr")
    assert named.target.startswith("ipv4:127.0.0.1:7001") and named.tls_name == "localhost"
    assert dict(named.options)["grpc.ssl_target_name_override"] == "localhost"


@pytest.mark.parametrize(("value", "says"), [
    ("", "empty address"),
    ("127.0.0.1:7001,", "empty address"),
    ("127.0.0.1:7001,unix:/tmp/s.sock", "HOST:PORT entries only"),
    ("127.0.0.1:7001,127.0.0.1", "is not HOST:PORT"),
    ("127.0.0.1:7001,127.0.0.1:70000", "is not HOST:PORT"),
    ("127.0.0.1:7001,[::1]:7002", "mixes IPv4 and IPv6"),
    ("127.0.0.1:7001,no-such-host.invalid:7002", "cannot resolve host"),
])
def test_a_bad_list_is_refused_naming_the_setting(value, says):
    with pytest.raises(InvalidArgument) as caught:
        addresses.parse(value, "store_addr")
    assert caught.value.field == "store_addr" and says in caught.value.rule


def test_every_retried_method_exists_in_the_protos():
    from mnemo.v1 import search_pb2, store_pb2, vector_pb2

    services = {**store_pb2.DESCRIPTOR.services_by_name, **search_pb2.DESCRIPTOR.services_by_name,
                **vector_pb2.DESCRIPTOR.services_by_name}
    for full_name, methods in addresses.IDEMPOTENT_METHODS.items():
        service = services[full_name.removeprefix("mnemo.v1.")]
        assert set(methods) <= set(service.methods_by_name), full_name


def test_settings_refuse_a_bad_replica_list_naming_the_setting(home):
    from mnemo.config import load_settings

    good = load_settings({"home": str(home)}, environ={"MNEMO_SEARCH_ADDR": "10.0.0.1:7201,10.0.0.2:7201"})
    assert good.address("search") == "10.0.0.1:7201,10.0.0.2:7201"
    with pytest.raises(InvalidArgument) as caught:
        load_settings({"home": str(home)}, environ={"MNEMO_STORE_ADDR": "10.0.0.1:7101,unix:/tmp/s.sock"})
    assert caught.value.field == "store_addr"


def test_a_server_url_may_list_the_servers_search_replicas():
    from mnemo.remote import check_server_url

    assert check_server_url("mnemo1.internal:7201,mnemo2.internal:7201") == "mnemo1.internal:7201,mnemo2.internal:7201"
    for bad in ("mnemo1.internal:7201,unix:/tmp/s.sock", "mnemo1.internal:7201,https://x:1", "a:1,b"):
        with pytest.raises(InvalidArgument) as caught:
            check_server_url(bad)
        assert caught.value.field == "server_url"
