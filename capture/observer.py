"""The deterministic observer: rules per tool turn one tool use into observations.

No LLM and no I/O: the same tool use always compiles to the same observations, so a
replayed hook is deduplicated by the store's content hash.

Read-only tools (Read, Grep, Glob, LS) are not compiled one by one: a burst of them
(consecutive read-only uses within one prompt) becomes ONE discovery observation listing
every file and search, built by `merge_reads` when the hook flushes the burst (at Stop
or SessionEnd). Every other tool compiles at once in `observe`.

Inputs arrive privacy-stripped (the hook cleans them first); every text produced here
goes through `mnemo.privacy.clean` again, so secrets in tool output are masked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from capture.drafts import (
    EDIT_TOOLS,
    FACT_MAX,
    READ_ONLY_TOOLS,
    SNIPPET_MAX,
    Draft,
    ToolEvent,
    cap,
    concepts_for,
    counted,
    first_line,
    keyword_concepts,
    line_count,
    relative_path,
    response_text,
    scalar_text,
    unique,
)
from capture.observer_shell import bash_draft, command_kind, command_label, shell_verdict

__all__ = ["Draft", "ToolEvent", "READ_ONLY_TOOLS", "command_kind", "command_label", "merge_reads", "observe",
           "shell_verdict"]


# --------------------------------------------------------------------------------------
# entry points


def observe(event: ToolEvent) -> list[Draft]:
    """Observations for one non-read-only tool use (read-only tools: see merge_reads)."""
    name = event.tool_name
    inputs = event.tool_input if isinstance(event.tool_input, dict) else {"input": event.tool_input}
    if name == "Bash":
        drafts = [bash_draft(event)]
    elif event.failed_call:
        drafts = [_failed_call(name, inputs, event)]
    elif name in EDIT_TOOLS:
        drafts = [_edit(name, inputs, event.cwd)]
    elif name in ("WebFetch", "WebSearch"):
        drafts = [_web(name, inputs, event.tool_response)]
    elif name in ("Task", "Agent"):
        drafts = [_subagent(inputs, event.tool_response)]
    elif name in READ_ONLY_TOOLS:
        drafts = [merge_reads([event])]
    else:
        drafts = [_generic(name, inputs, event.tool_response)]
    return [d.cleaned() for d in drafts]


def merge_reads(events: Iterable[ToolEvent]) -> Draft:
    """One discovery observation for a burst of read-only tool uses."""
    files: list[str] = []
    facts: list[str] = []
    searches: list[str] = []
    for event in events:
        inputs = event.tool_input if isinstance(event.tool_input, dict) else {}
        if event.tool_name == "Read":
            path = relative_path(inputs.get("file_path", ""), event.cwd)
            if path:
                files.append(path)
                facts.append(f"Read {path}{_line_range(inputs)}")
        elif event.tool_name == "Grep":
            pattern = str(inputs.get("pattern", ""))
            where = relative_path(inputs.get("path", ""), event.cwd) or "the project"
            matched = _matched_files(event.tool_response, event.cwd)
            files.extend(matched)
            searches.append(f"`{pattern}`")
            facts.append(f"Searched for `{pattern}` in {where}{_glob_note(inputs)}: {counted(matched, 'file')} matched")
        elif event.tool_name == "Glob":
            pattern = str(inputs.get("pattern", ""))
            matched = _matched_files(event.tool_response, event.cwd)
            searches.append(f"`{pattern}`")
            facts.append(f"Listed files matching `{pattern}`: {counted(matched, 'file')}")
        elif event.tool_name == "LS":
            path = relative_path(inputs.get("path", ""), event.cwd) or "."
            facts.append(f"Listed directory {path}")
    files = unique(files)
    title = _reads_title(files, searches)
    narrative = "Looked at " + (", ".join(files[:20]) if files else "the project structure")
    if searches:
        narrative += "; searched for " + ", ".join(searches[:10])
    concepts = concepts_for(files, " ".join(searches)) + ["how-it-works"]
    return Draft(
        type="discovery",
        title=title,
        subtitle=f"{counted(files, 'file')} read, {counted(searches, 'search', 'searches')}",
        narrative=narrative + ".",
        facts=facts,
        concepts=concepts,
        files_read=files,
    ).cleaned()


# --------------------------------------------------------------------------------------
# rules per tool


def _edit(name: str, inputs: dict, cwd: str) -> Draft:
    path = relative_path(inputs.get("file_path") or inputs.get("notebook_path") or "", cwd) or "a file"
    facts: list[str] = []
    if name == "Write":
        content = str(inputs.get("content", ""))
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        title = f"Wrote {path}"
        subtitle = f"Wrote {lines} lines to {path}"
        facts.append(f"{path} now has {lines} lines")
        snippet = content
    elif name == "MultiEdit":
        listed = inputs.get("edits")
        edits: list[Any] = listed if isinstance(listed, list) else []
        title = f"Edited {path} ({len(edits)} edits)"
        subtitle = f"Applied {len(edits)} edits to {path}"
        facts.extend(_edit_fact(path, e) for e in edits if isinstance(e, dict))
        snippet = "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, dict))
    elif name == "NotebookEdit":
        mode = str(inputs.get("edit_mode") or "replace")
        title = f"Edited notebook {path}"
        subtitle = f"Notebook cell {mode} in {path}"
        facts.append(f"{mode} of a cell in {path}")
        snippet = str(inputs.get("new_source", ""))
    else:
        title = f"Edited {path}"
        old, new = str(inputs.get("old_string", "")), str(inputs.get("new_string", ""))
        subtitle = f"Replaced {line_count(old)} lines with {line_count(new)} in {path}"
        facts.append(_edit_fact(path, inputs))
        if inputs.get("replace_all"):
            facts.append(f"Every occurrence was replaced in {path}")
        snippet = new
    narrative = f"{subtitle}."
    if snippet.strip():
        narrative += "\n" + cap(snippet.strip(), SNIPPET_MAX)
    return Draft(
        type="change",
        title=title,
        subtitle=subtitle,
        narrative=narrative,
        facts=facts,
        concepts=concepts_for([path], snippet[:2000]) + ["what-changed"],
        files_modified=[path] if path != "a file" else [],
    )


def _failed_call(name: str, inputs: dict, event: ToolEvent) -> Draft:
    """A tool call the host reported as failed (PostToolUseFailure): a bugfix candidate
    that names what was attempted and the first line of the error."""
    response = event.tool_response if isinstance(event.tool_response, dict) else {"error": event.tool_response}
    error = _tool_error_text(str(response.get("error") or ""))
    target_key = next((k for k in ("file_path", "notebook_path", "path", "url", "pattern") if inputs.get(k)), "")
    target = relative_path(inputs[target_key], event.cwd) if target_key.endswith("path") else str(
        inputs.get(target_key, ""))
    label = f"{name} {target}".strip()
    facts = [f"{name} failed" + (f" on {target}" if target else ""), f"First error: {first_line(error, 200)}"]
    if name in EDIT_TOOLS and inputs.get("old_string"):
        facts.append(f"Looked for `{first_line(str(inputs['old_string']), 120)}`")
    files = [target] if target_key.endswith("path") and target else []
    return Draft(
        type="bugfix",
        title=f"{cap(label, 80)} failed: {first_line(error, 60)}",
        subtitle=first_line(error, FACT_MAX),
        narrative=f"The {name} call failed" + (f" on {target}" if target else "") + f".\n{cap(error, SNIPPET_MAX)}",
        facts=facts,
        concepts=concepts_for(files, error) + ["problem-solution", "gotcha"],
        files_read=files if name not in EDIT_TOOLS else [],
    )


def _tool_error_text(error: str) -> str:
    """The host's error without its <tool_use_error> wrapper."""
    return re.sub(r"</?tool_use_error>", "", error).strip()


def _edit_fact(path: str, edit: dict) -> str:
    old = first_line(str(edit.get("old_string", "")))
    new = first_line(str(edit.get("new_string", "")))
    if old and new:
        return f"In {path}: `{old}` became `{new}`"
    if new:
        return f"In {path}: added `{new}`"
    return f"In {path}: removed `{old}`" if old else f"Edited {path}"


def _web(name: str, inputs: dict, response: Any) -> Draft:
    if name == "WebFetch":
        url = str(inputs.get("url", ""))
        question = str(inputs.get("prompt", ""))
        facts = [f"Fetched {url}"] + ([f"Looked for: {question}"] if question else [])
        answer = response_text(response)
        return Draft(
            type="discovery",
            title=f"Fetched {cap(url, 100)}",
            subtitle=cap(question, FACT_MAX) or f"Read {url}",
            narrative=f"Fetched {url}" + (f" to find out: {question}" if question else "") + "."
            + (f"\n{cap(answer, SNIPPET_MAX)}" if answer else ""),
            facts=facts,
            concepts=["docs", "how-it-works"] + keyword_concepts(question + " " + url),
        )
    query = str(inputs.get("query", ""))
    return Draft(
        type="discovery",
        title=f"Searched the web: {cap(query, 100)}",
        subtitle=f"Web search for {query}",
        narrative=f"Searched the web for `{query}`." + _web_results(response),
        facts=[f"Web search: {query}"],
        concepts=["how-it-works"] + keyword_concepts(query),
    )


def _web_results(response: Any) -> str:
    text = response_text(response)
    return f"\n{cap(text, SNIPPET_MAX)}" if text else ""


def _subagent(inputs: dict, response: Any) -> Draft:
    description = str(inputs.get("description", "")).strip() or "sub-agent task"
    prompt = str(inputs.get("prompt", "")).strip()
    agent = str(inputs.get("subagent_type", "")).strip()
    result = response_text(response)
    decided = bool(re.search(r"\b(decide|decision|choose|chose|recommend|plan)\b", prompt + " " + description, re.I))
    facts = [f"Delegated to {agent or 'a sub-agent'}: {description}"]
    if result:
        facts.append("Result: " + first_line(result, 200))
    return Draft(
        type="decision" if decided else "discovery",
        title=f"Sub-agent: {cap(description, 100)}",
        subtitle=first_line(prompt, 200) or description,
        narrative=f"Asked {agent or 'a sub-agent'} to {description}.\n{cap(prompt, SNIPPET_MAX)}"
        + (f"\nIt answered: {cap(result, SNIPPET_MAX)}" if result else ""),
        facts=facts,
        concepts=(["trade-off"] if decided else ["how-it-works"]) + keyword_concepts(prompt + " " + description),
    )


def _generic(name: str, inputs: dict, response: Any) -> Draft:
    server, _, tool = name[len("mcp__"):].partition("__") if name.startswith("mcp__") else ("", "", name)
    label = f"{tool} ({server})" if server else tool or "a tool"
    facts = [f"{key} = {scalar_text(value)}" for key, value in list(inputs.items())[:6] if scalar_text(value)]
    result = response_text(response)
    paths = [relative_path(v, "") for k, v in inputs.items() if isinstance(v, str) and k.endswith(("path", "file"))]
    return Draft(
        type="discovery",
        title=f"Used {cap(label, 100)}",
        subtitle=cap("; ".join(facts), FACT_MAX) or f"Called {label}",
        narrative=f"Called {label}." + (f"\n{cap(result, SNIPPET_MAX)}" if result else ""),
        facts=facts,
        concepts=(["mcp"] if server else []) + concepts_for([p for p in paths if p], " ".join(facts)),
        files_read=[p for p in paths if p],
    )


# --------------------------------------------------------------------------------------
# helpers of merge_reads


def _matched_files(response: Any, cwd: str) -> list[str]:
    names: Any = None
    if isinstance(response, dict):
        names = response.get("filenames") or response.get("files")
    elif isinstance(response, list):
        names = response
    if isinstance(names, list):
        return [relative_path(n, cwd) for n in names if isinstance(n, str)][:50]
    if isinstance(response, str):
        return [relative_path(line, cwd) for line in response.splitlines() if line.strip().startswith(("/", "./"))][:50]
    return []


def _reads_title(files: list[str], searches: list[str]) -> str:
    if len(files) == 1 and not searches:
        return f"Read {files[0]}"
    if files and not searches:
        return f"Read {len(files)} files: " + ", ".join(PurePosixPath(f).name for f in files[:4])
    if searches and not files:
        return "Searched for " + ", ".join(searches[:3])
    return f"Explored {', '.join(PurePosixPath(f).name for f in files[:3])} (searched {', '.join(searches[:2])})"


def _line_range(inputs: dict) -> str:
    offset, limit = inputs.get("offset"), inputs.get("limit")
    if isinstance(offset, int) and isinstance(limit, int):
        return f" (lines {offset}-{offset + limit})"
    return ""


def _glob_note(inputs: dict) -> str:
    glob = inputs.get("glob") or inputs.get("type")
    return f" ({glob})" if glob else ""


