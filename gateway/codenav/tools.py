"""The three code tools as plain functions: validated arguments in, (text, structuredContent) out.

The arguments are already checked against the input schemas in `gateway.codenav.schemas`;
errors are `mnemo.errors` types (InvalidArgument names the argument and the rule), which
the gateway maps to MCP `isError` results. All three only read files under `root`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gateway.codenav import render
from gateway.codenav.outline import outline, unfold
from gateway.codenav.schemas import MAX_RESULTS_DEFAULT
from gateway.codenav.search import search

Args = Mapping[str, Any]


def run_smart_search(root: Path, args: Args) -> tuple[str, dict[str, Any]]:
    result = search(root, args["query"], args.get("path"), int(args.get("max_results", MAX_RESULTS_DEFAULT)),
                    args.get("file_pattern"))
    return render.search_text(result), render.search_structured(result)


def run_smart_outline(root: Path, args: Args) -> tuple[str, dict[str, Any]]:
    path, folded = outline(root, args["file_path"])
    text, tokens = render.outline_text(path, folded)
    return text, render.outline_structured(path, folded, tokens)


def run_smart_unfold(root: Path, args: Args) -> tuple[str, dict[str, Any]]:
    unfolded = unfold(root, args["file_path"], args["symbol_name"])
    return render.unfold_text(unfolded), render.unfold_structured(unfolded)
