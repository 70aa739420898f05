"""The code-navigation tools in the tool table: smart_search, smart_outline, smart_unfold.

They read the user's files, so they run in the gateway (`Local`, no RPC) under the project
root, and need no backend capability: they are listed even while the stack is down. All
three only read, so they carry readOnlyHint (hosts then allow them in plan mode, where an
agent is sent to smart_outline instead of a full read). Behaviour: gateway/codenav/.
"""

from __future__ import annotations

from gateway.codenav import run_smart_outline, run_smart_search, run_smart_unfold
from gateway.codenav import schemas as code
from gateway.spec import Local, ToolSpec

CODE_TOOLS: list[ToolSpec] = [
    ToolSpec(name="smart_search", description=code.SMART_SEARCH_DESCRIPTION, input_schema=code.SMART_SEARCH_INPUT,
             output_schema=code.SMART_SEARCH_OUTPUT, handler=Local(run_smart_search), capability=None,
             read_only=True),
    ToolSpec(name="smart_outline", description=code.SMART_OUTLINE_DESCRIPTION,
             input_schema=code.SMART_OUTLINE_INPUT, output_schema=code.SMART_OUTLINE_OUTPUT,
             handler=Local(run_smart_outline), capability=None, read_only=True),
    ToolSpec(name="smart_unfold", description=code.SMART_UNFOLD_DESCRIPTION, input_schema=code.SMART_UNFOLD_INPUT,
             output_schema=code.SMART_UNFOLD_OUTPUT, handler=Local(run_smart_unfold), capability=None,
             read_only=True),
]
