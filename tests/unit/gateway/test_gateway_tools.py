"""The tool table: names, schemas, annotations, and the mem_search schema exactly as specified."""

from __future__ import annotations

import re

import pytest
from jsonschema import Draft202012Validator

from gateway.tools import HOST_PREFIX, NAME_PATTERN, TOOLS, advertised

pytestmark = pytest.mark.unit

READ_ONLY = {"important_workflow", "mem_search", "search", "timeline", "get_observations", "get_tool_uses",
             "work_state_read", "session_start_context", "list_corpora"}
WRITES = {"save_memory", "work_state_write", "build_corpus", "prime_corpus", "query_corpus", "rebuild_corpus",
          "reprime_corpus"}


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_name_is_safe_for_every_host(tool):
    assert re.fullmatch(NAME_PATTERN, tool.name)
    assert len(HOST_PREFIX + tool.name) <= 64
    assert ":" not in tool.name and "." not in tool.name


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_schema_is_flat_valid_and_fully_described(tool):
    schema = tool.input_schema
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and "properties" in schema
    assert not {"$ref", "oneOf", "anyOf", "allOf"} & set(schema)
    assert schema["additionalProperties"] is False
    for name, prop in schema["properties"].items():
        assert prop.get("type"), f"{tool.name}.{name} has no type"
        assert prop.get("description"), f"{tool.name}.{name} has no description"
        if prop["type"] == "string":
            assert "maxLength" in prop or "enum" in prop, f"{tool.name}.{name} is unbounded"
        if prop["type"] == "integer":
            assert "minimum" in prop, f"{tool.name}.{name} has no lower bound"
        if prop["type"] == "array":
            assert "items" in prop
    for required in schema.get("required", []):
        assert required in schema["properties"]
    if tool.output_schema is not None:
        Draft202012Validator.check_schema(tool.output_schema)


def test_table_covers_every_tool_once_with_the_right_annotations():
    names = [t.name for t in TOOLS]
    assert len(names) == len(set(names))
    assert set(names) == READ_ONLY | WRITES
    for tool in TOOLS:
        if tool.name in READ_ONLY:
            assert tool.annotations == {"readOnlyHint": True}
        else:
            assert tool.annotations is None


def test_search_tools_and_save_memory_declare_output_schemas():
    with_output = {t.name for t in TOOLS if t.output_schema is not None}
    assert with_output == {"mem_search", "search", "timeline", "get_observations", "get_tool_uses", "save_memory"}


def test_mem_search_schema_is_exactly_the_specified_one():
    schema = next(t for t in TOOLS if t.name == "mem_search").input_schema
    props = schema["properties"]
    assert schema["additionalProperties"] is False and "required" not in schema
    assert set(props) == {"mode", "query", "project", "limit", "maxDetails", "depthBefore", "depthAfter",
                          "continuation", "selectedIds"}
    assert props["mode"]["enum"] == ["guided", "auto"] and props["mode"]["default"] == "guided"
    assert props["query"]["maxLength"] == 500
    assert (props["limit"]["minimum"], props["limit"]["maximum"]) == (1, 20)
    assert (props["maxDetails"]["minimum"], props["maxDetails"]["maximum"]) == (1, 5)
    for depth in ("depthBefore", "depthAfter"):
        assert (props[depth]["minimum"], props[depth]["maximum"]) == (0, 3)
    cont = props["continuation"]
    assert (cont["minLength"], cont["maxLength"], cont["pattern"]) == (27, 27, "^ms_[A-Za-z0-9_-]{24}$")
    assert props["selectedIds"]["items"] == {"type": ["string", "integer"]}


def test_workflow_note_puts_mem_search_first_and_layer_four_last():
    note = next(t for t in TOOLS if t.name == "important_workflow").description
    lines = note.splitlines()
    assert lines[0] == "Use mem_search for all memory search."
    steps = [next(i for i, line in enumerate(lines) if line.startswith(f"{n}. ")) for n in (1, 2, 3, 4)]
    assert steps == sorted(steps)
    assert "search(" in lines[steps[0]] and "timeline(" in lines[steps[1]]
    assert "get_observations(" in lines[steps[2]] and "get_tool_uses(" in lines[steps[3]]
    assert "step 3 cannot answer" in lines[steps[3]]
    for legacy in ("search", "timeline", "get_observations"):
        assert next(t for t in TOOLS if t.name == legacy).description.startswith("Legacy")


def test_advertised_follows_capabilities():
    assert {t.name for t in advertised(set())} == {"important_workflow"}
    only_search = {t.name for t in advertised({"search"})}
    assert only_search == {"important_workflow", "search", "timeline", "get_observations"}
    everything = advertised({"search", "mem_search", "tool_uses", "write", "work_state", "context", "corpus"})
    assert len(everything) == len(TOOLS)
