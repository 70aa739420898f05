"""The texts of mem_search and get_tool_uses replies, composed from search_svc.render's pieces.

Records are rendered by the Renderer (compact form); this module only arranges them
into a reply: the found line, notices, details with their context, next steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mnemo.v1 import common_pb2, search_pb2
from mnemo.vocab import EVIDENCE_NOTICE
from search_svc.cursor import SearchState
from search_svc.memsearch.params import MemSearchParams
from search_svc.render import Renderer, inline, quoted


def with_notice(text: str, notice: str) -> str:
    return f"{text}\nNote: {inline(notice, 300)}" if notice else text


def no_results(query: str, notice: str) -> str:
    return with_notice(f"No results for {quoted(query)}. Try other or fewer words, or another project; "
                       "this search has no continuation.", notice)


def _found_line(state: SearchState, reply: search_pb2.MemSearchReply) -> str:
    shown = f"Results {reply.offset + 1}-{reply.offset + len(reply.rows)}" if reply.rows else "No rows"
    kept = len(state.rows)
    beyond = f"; {state.matches} matches, best {kept} kept" if state.matches > kept else ""
    return f"{shown} of {kept} for {quoted(state.query)} (best first{beyond}) [{state.strategy or 'search'}]."


def _next_steps(state: SearchState, reply: search_pb2.MemSearchReply) -> str:
    more = "; continuation alone for the next page" if reply.has_more else ""
    if reply.details:
        picked = f"other ids of this index (at most {state.max_details})"
    else:
        picked = f"at most {state.max_details} ids of this index"
    return f'Details: mem_search with continuation="{reply.continuation}" and selectedIds = {picked}{more}.'


def _details(renderer: Renderer, details: Iterable[search_pb2.MemDetail], params: MemSearchParams) -> list[str]:
    lines: list[str] = []
    any_tool_uses = False
    for detail in details:
        lines += renderer.compact_record(detail.record)
        if params.depth_before or params.depth_after:
            lines.append("Context:")
            lines += [renderer.context_line(row) for row in detail.context] or ["- (no neighbours)"]
        if detail.tool_uses:
            any_tool_uses = True
            names = ", ".join(f"{use.id} {inline(use.tool_name, 40)}" for use in detail.tool_uses)
            lines.append(f"Tool uses (layer 4): {names}")
        lines.append("")
    if any_tool_uses:
        lines += ["Call get_tool_uses with those ids only if these details cannot answer.", ""]
    return lines


def page_text(renderer: Renderer, state: SearchState, reply: search_pb2.MemSearchReply,
              params: MemSearchParams) -> str:
    """An index page (with the details of its best rows in auto mode)."""
    # The index shows titles, which are record contents: the notice leads every page.
    lines = [EVIDENCE_NOTICE, "", _found_line(state, reply)]
    if state.notice:
        lines.append(f"Note: {inline(state.notice, 300)}")
    if reply.rows:
        lines += ["", *renderer.compact_index(reply.rows), ""]
    else:
        lines += ["", "No more results in this search.", ""]
    lines += _details(renderer, reply.details, params)
    lines.append(_next_steps(state, reply))
    return "\n".join(lines)


def details_text(renderer: Renderer, state: SearchState, reply: search_pb2.MemSearchReply,
                 params: MemSearchParams) -> str:
    """The details of ids the caller selected from an index this search showed."""
    lines = [EVIDENCE_NOTICE, ""]
    missing = len(params.selected) - len(reply.details)
    if missing:
        lines += [f"{missing} selected record(s) no longer exist in the store.", ""]
    lines += _details(renderer, reply.details, params)
    more = " or the next page (continuation only)" if reply.has_more else ""
    lines.append(f"More: other shown ids (at most {state.max_details}){more} "
                 f'with continuation="{reply.continuation}".')
    return "\n".join(lines)


def tool_uses_text(renderer: Renderer, found: Sequence[common_pb2.ToolUse]) -> str:
    lines = [EVIDENCE_NOTICE, ""]
    if not found:
        lines.append("No recorded tool uses match; check the ids (named in mem_search details) "
                     "or the filters.")
    for use in found:
        lines += renderer.tool_use(use)
    return "\n".join(lines).rstrip() + "\n"
