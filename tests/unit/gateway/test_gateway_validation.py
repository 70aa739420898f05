"""Argument validation in the gateway: each bound +-1, the pattern, unknown keys, byte limits."""

from __future__ import annotations

import pytest

from gateway.tools import BY_NAME
from gateway.validation import validate_arguments
from mnemo.errors import InvalidArgument

pytestmark = pytest.mark.unit

TOKEN = "ms_" + "a" * 24


def check(tool: str, args: dict) -> None:
    validate_arguments(tool, args, BY_NAME[tool].byte_limits)


def refused(tool: str, args: dict) -> str:
    with pytest.raises(InvalidArgument) as info:
        check(tool, args)
    return str(info.value)


@pytest.mark.parametrize("field,low,high", [("limit", 1, 20), ("maxDetails", 1, 5), ("depthBefore", 0, 3),
                                            ("depthAfter", 0, 3)])
def test_mem_search_integer_bounds(field, low, high):
    check("mem_search", {"query": "q", field: low})
    check("mem_search", {"query": "q", field: high})
    assert refused("mem_search", {"query": "q", field: high + 1}) == (
        f"{field}: {high + 1} is greater than the maximum of {high}")
    assert refused("mem_search", {"query": "q", field: low - 1}) == (
        f"{field}: {low - 1} is less than the minimum of {low}")


def test_mem_search_query_length_in_characters_and_bytes():
    check("mem_search", {"query": "x" * 500})
    assert refused("mem_search", {"query": "x" * 501}).startswith("query: ")
    check("mem_search", {"query": "é" * 500})  # 1,000 bytes
    assert refused("mem_search", {"query": "字" * 342}) == "query: is 1026 UTF-8 bytes; at most 1024 allowed"
    check("mem_search", {"query": "q", "project": "p" * 256})
    assert "project" in refused("mem_search", {"query": "q", "project": "é" * 129})


def test_mem_search_continuation_pattern_and_length():
    check("mem_search", {"continuation": TOKEN})
    assert refused("mem_search", {"continuation": TOKEN + "a"}).startswith("continuation: ")
    assert refused("mem_search", {"continuation": TOKEN[:-1]}).startswith("continuation: ")
    assert "does not match" in refused("mem_search", {"continuation": "ms_" + "a" * 23 + "!"})


def test_mem_search_refuses_unknown_keys_and_bad_types():
    assert refused("mem_search", {"query": "q", "bogus": 1}).startswith("bogus: is not an argument of mem_search")
    assert refused("mem_search", {"mode": "fast"}).startswith("mode: 'fast' is not one of")
    check("mem_search", {"continuation": TOKEN, "selectedIds": ["#12", 13, "S3"]})
    assert refused("mem_search", {"continuation": TOKEN, "selectedIds": [1.5]}).startswith("selectedIds[0]: ")


def test_required_and_nested_errors_name_the_field():
    assert refused("save_memory", {}) == "text: is required"
    assert refused("get_observations", {"ids": []}).startswith("ids: [] should be non-empty")
    assert refused("get_observations", {"ids": list(range(1, 52))}).startswith("ids: ")
    assert refused("get_observations", {"ids": [1, "x"]}).startswith("ids[1]: 'x' is not of type 'integer'")
    assert refused("search", {"limit": 101}) == "limit: 101 is greater than the maximum of 100"
    assert refused("build_corpus", {"name": "../etc"}).startswith("name: '../etc' does not match")
    assert refused("build_corpus", {"name": "ok", "limit": 10001}).startswith("limit: ")


def test_several_errors_are_reported_together():
    message = refused("search", {"limit": 0, "offset": -1})
    assert "limit: 0 is less than the minimum of 1" in message and "offset: -1" in message
