"""Argument validation in the gateway: each bound +-1, the pattern, unknown keys, byte limits."""

from __future__ import annotations

import pytest

from gateway.tools import BY_NAME
from gateway.validation import validate_arguments
from mnemo.errors import InvalidArgument
from tests.service.gateway.mcp_support import minimal_arguments

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
    # Spec 000 types the items ["string", "number"]: 4.0 is id 4, forwarded as "4".
    args = validate_arguments("mem_search", {"continuation": TOKEN, "selectedIds": [4.0, "#5"]}, {})
    assert args["selectedIds"] == [4, "#5"]


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


def integer_arguments() -> list[tuple[str, str, bool]]:
    """(tool, argument, is an array of integers) for every argument whose schema admits an integer."""
    found = []
    for spec in BY_NAME.values():
        for name, schema in spec.input_schema.get("properties", {}).items():
            item = schema.get("items", {}) if schema.get("type") == "array" else schema
            types = item.get("type")
            if "integer" in (types if isinstance(types, list) else [types]):
                found.append((spec.name, name, schema.get("type") == "array"))
    return found


INTEGER_ARGUMENTS = integer_arguments()


def test_every_integer_argument_is_found():
    assert len(INTEGER_ARGUMENTS) >= 13
    assert ("timeline", "anchor", False) in INTEGER_ARGUMENTS
    assert ("get_observations", "ids", True) in INTEGER_ARGUMENTS


def _lowest(tool: str, name: str, is_array: bool) -> int:
    schema = BY_NAME[tool].input_schema["properties"][name]
    return (schema["items"] if is_array else schema).get("minimum", 0)


@pytest.mark.parametrize("tool,name,is_array", INTEGER_ARGUMENTS)
def test_a_whole_float_becomes_an_int_and_past_int64_is_refused_naming_the_field(tool, name, is_array):
    low = _lowest(tool, name, is_array)
    sent = [float(low)] if is_array else float(low)
    converted = validate_arguments(tool, {**minimal_arguments(tool), name: sent}, {})[name]
    assert converted == ([low] if is_array else low)
    assert all(type(v) is int for v in (converted if is_array else [converted]))
    for beyond in (2**63, 2**64, -(2**63) - 1, 1e300):
        message = refused(tool, {**minimal_arguments(tool), name: [beyond] if is_array else beyond})
        assert message.startswith(f"{name}[0]: " if is_array else f"{name}: "), message
        assert len(message) < 300
    assert refused(tool, {**minimal_arguments(tool), name: [2.5] if is_array else 2.5}).startswith(name)


def test_integer_like_values_of_other_types_are_left_alone():
    args = validate_arguments("save_memory", {"text": "5.0", "concepts": ["1"]}, {})
    assert args == {"text": "5.0", "concepts": ["1"]}
    assert validate_arguments("timeline", {"anchor": "12"}, {})["anchor"] == "12"


def test_a_huge_value_gives_a_short_error_that_quotes_a_clean_prefix():
    text = "<private>do-not-echo</private>" + "x" * 4_000_000
    message = refused("search", {"query": text})
    assert len(message) < 200 and "do-not-echo" not in message
    assert message.startswith("query: ") and "4000030 characters; at most 10000 allowed" in message
    many = refused("search", {"concepts": ["c"] * 100_000})
    assert many == "concepts: has 100000 items; at most 50 allowed"
    unknown = refused("mem_search", {"k" * 100_000: 1})
    assert len(unknown) < 400
