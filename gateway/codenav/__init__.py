"""Code navigation in the gateway process (it reads the user's local files):
smart_search, smart_outline and smart_unfold on tree-sitter, confined to the project root.

For the tool table: `run_smart_search`, `run_smart_outline`, `run_smart_unfold`
(root, validated args) -> (text, structuredContent); schemas and descriptions in
`gateway.codenav.schemas`. See docs/codenav.md.
"""

from gateway.codenav.tools import run_smart_outline, run_smart_search, run_smart_unfold

__all__ = ["run_smart_outline", "run_smart_search", "run_smart_unfold"]
