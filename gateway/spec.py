"""What a tool is: its spec (schema, annotations, capability, how it is served) and the one
generic handler, `Unary`, that serves every tool whose work is a single RPC.

A `Unary` names its RPC by a reference to the generated stub's method, maps the validated
arguments to the request message, and converts the reply to text + structuredContent.
A `Local` tool calls no RPC: it runs a blocking function over the project's files in a
worker thread (code navigation). Tools with logic of their own (the prime relay) bring
their own handler.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from gateway.client import SearchClient, UnaryRpc
from mnemo.errors import InvalidArgument, MnemoError
from mnemo.vocab import MNEMO_TOOL_NAMES

Args = Mapping[str, Any]
ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
RequestT = TypeVar("RequestT")
ReplyT = TypeVar("ReplyT")


@dataclass
class ToolOutput:
    text: str
    structured: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolResult:
    """What tools/call answers, whichever transport carries it: the text for the model, the
    structuredContent (for tools that declare an output schema), and whether it is an error."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False

    def wire(self) -> dict[str, Any]:
        """The CallToolResult as JSON, in the SDK's shape."""
        result: dict[str, Any] = {"content": [{"type": "text", "text": self.text}]}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        result["isError"] = self.is_error
        return result


@dataclass
class ToolCall:
    """What a handler may use: the backend client, a progress reporter, the heartbeat interval,
    and the project root the code tools read."""

    client: SearchClient
    progress: ProgressFn
    heartbeat_interval_s: float
    project_root: Path = field(default_factory=Path.cwd)


Handler = Callable[[ToolCall, Args], Awaitable[ToolOutput]]


class TextReply(Protocol):
    """Every tool reply of SearchService carries the rendered text for the model."""

    @property
    def text(self) -> str: ...


TextReplyT = TypeVar("TextReplyT", bound=TextReply)


def text_only(reply: TextReply) -> ToolOutput:
    return ToolOutput(reply.text)


def with_structure(convert: Callable[[TextReplyT], dict[str, Any]]) -> Callable[[TextReplyT], ToolOutput]:
    """The reply's text plus structuredContent built by `convert`."""
    return lambda reply: ToolOutput(reply.text, convert(reply))


def given(args: Args, **fields: str) -> dict[str, Any]:
    """Request fields for the arguments the caller gave (proto field=argument name): for
    optional fields, where an absent argument must stay unset (0 is a real depth)."""
    return {name: args[argument] for name, argument in fields.items() if argument in args}


@dataclass(frozen=True)
class Unary(Generic[RequestT, ReplyT]):
    """The generic handler: arguments -> request -> one RPC -> reply -> output."""

    rpc: UnaryRpc[RequestT, ReplyT]
    request: Callable[[Args], RequestT]
    reply: Callable[[ReplyT], ToolOutput]
    timeout: float | None = None  # None: the configured RPC timeout

    async def __call__(self, call: ToolCall, args: Args) -> ToolOutput:
        reply = await call.client.call(self.rpc, self.request(args), timeout=self.timeout)
        return self.reply(reply)


@dataclass(frozen=True)
class Fixed:
    """A tool that answers with a constant text and calls nothing."""

    text: str

    async def __call__(self, call: ToolCall, args: Args) -> ToolOutput:
        return ToolOutput(self.text)


LocalFn = Callable[[Path, Args], tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Local:
    """A tool served in the gateway itself: `run(project_root, args)` -> (text, structuredContent),
    named "module:function" and imported on the first call (code navigation's tree-sitter and file
    walk would otherwise cost every gateway's start). It blocks on file reads, so it runs in a
    worker thread and the event loop keeps serving."""

    run: str

    async def __call__(self, call: ToolCall, args: Args) -> ToolOutput:
        text, structured = await asyncio.to_thread(self.function(), call.project_root, args)
        return ToolOutput(text, structured)

    def function(self) -> LocalFn:
        module, _, name = self.run.partition(":")
        function: LocalFn = getattr(importlib.import_module(module), name)
        return function


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool. `capability`: tools/list shows the tool only when search_svc reports it
    (None: always); `also_needs`: further capabilities it cannot work without (a tool that
    embeds needs "vector"). `byte_limits`: UTF-8 byte bounds that JSON Schema cannot express.
    `lenient`: unknown arguments are ignored and named in the reply instead of refused (the
    legacy tools, which older clients call with parameters of their time). `retry_note` (writes):
    whether a retry is safe when the outcome of a call is unknown (a timeout). `arguments`: the
    service's field names -> this tool's argument names, so an error names what the caller passed
    (`date_start` -> `dateRange.start`)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    capability: str | None
    read_only: bool
    output_schema: dict[str, Any] | None = None
    byte_limits: dict[str, int] = field(default_factory=dict)
    also_needs: tuple[str, ...] = ()
    lenient: bool = False
    retry_note: str = ""
    arguments: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in MNEMO_TOOL_NAMES:  # capture would record this tool's calls as the user's work
            raise ValueError(f"tool {self.name!r} is not in mnemo.vocab.MNEMO_TOOL_NAMES: add it there")

    def public_error(self, err: MnemoError) -> MnemoError:
        """`err` naming this tool's arguments instead of the service's field names."""
        if not isinstance(err, InvalidArgument) or not self.arguments:
            return err
        names = re.compile(r"\b(" + "|".join(map(re.escape, self.arguments)) + r")\b")
        public = names.sub(lambda m: self.arguments[m.group(1)], err.rule)
        return InvalidArgument(self.arguments.get(err.field, err.field), public)

    @property
    def needs(self) -> frozenset[str]:
        """Every capability the tool cannot work without: `capability` and `also_needs`."""
        return frozenset({self.capability} if self.capability else ()) | frozenset(self.also_needs)

    def served_by(self, capabilities: frozenset[str] | set[str]) -> bool:
        """Whether the backend, reporting `capabilities`, can serve this tool now."""
        return self.needs <= capabilities

    @property
    def annotations(self) -> dict[str, Any] | None:
        return {"readOnlyHint": True} if self.read_only else None
