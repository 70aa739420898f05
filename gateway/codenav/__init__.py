"""Code navigation in the gateway process (it reads the user's local files):
smart_search, smart_outline and smart_unfold on tree-sitter, confined to the project root.

For the tool table: `run_smart_search`, `run_smart_outline`, `run_smart_unfold`
(root, validated args) -> (text, structuredContent); schemas and descriptions in
`gateway.codenav.schemas`. See docs/codenav.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemo.extras import require

if TYPE_CHECKING:
    from gateway.codenav.tools import run_smart_outline, run_smart_search, run_smart_unfold

__all__ = ["run_smart_outline", "run_smart_search", "run_smart_unfold"]


def __getattr__(name: str) -> Any:
    """The tools, imported on first use: the tool table reads only `gateway.codenav.schemas`,
    and tree-sitter and the file walk are not loaded before a code tool runs."""
    if name in __all__:
        require("tree_sitter", "code", "code navigation (smart_search, smart_outline, smart_unfold)")
        from gateway.codenav import tools

        return getattr(tools, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
