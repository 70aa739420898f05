"""The code-navigation tools in the tool table: smart_search, smart_outline, smart_unfold.

They read the user's files, so they run in the gateway (`Local`, no RPC) under the project
root, and need no backend capability: they are listed even while the stack is down. All
three only read, so they carry readOnlyHint (hosts then allow them in plan mode, where an
agent is sent to smart_outline instead of a full read). Behaviour: gateway/codenav/.
"""

from __future__ import annotations

from typing import Any

from gateway.codenav import schemas as code
from gateway.spec import Local, ToolSpec


def _code_tool(name: str, description: str, input_schema: dict[str, Any], output_schema: dict[str, Any]) -> ToolSpec:
    """A code tool, served by gateway/codenav/tools.py's `run_<name>`."""
    return ToolSpec(name=name, description=description, input_schema=input_schema, output_schema=output_schema,
                    handler=Local(f"gateway.codenav.tools:run_{name}"), capability=None, read_only=True)


CODE_TOOLS: list[ToolSpec] = [
    _code_tool("smart_search", code.SMART_SEARCH_DESCRIPTION, code.SMART_SEARCH_INPUT, code.SMART_SEARCH_OUTPUT),
    _code_tool("smart_outline", code.SMART_OUTLINE_DESCRIPTION, code.SMART_OUTLINE_INPUT, code.SMART_OUTLINE_OUTPUT),
    _code_tool("smart_unfold", code.SMART_UNFOLD_DESCRIPTION, code.SMART_UNFOLD_INPUT, code.SMART_UNFOLD_OUTPUT),
]
