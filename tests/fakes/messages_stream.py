"""A local stand-in for Anthropic's streaming Messages API, for driving the real `claude`
CLI offline (ANTHROPIC_BASE_URL pointed here, any ANTHROPIC_API_KEY).

The agent loop is scripted: each assistant turn is a list of blocks (`text(...)`,
`tool_use(name, input)`). Which turn to answer is read from the conversation itself (the
number of tool results it already holds), so a retried request gets the same answer.
Requests without tools (titles, summaries, quota probes the CLI makes on the side) get a
short text. Replies stream as server-sent events: message_start, content_block_start,
content_block_delta (text_delta / input_json_delta), content_block_stop, message_delta,
message_stop; a request with `"stream": false` gets the whole message as JSON.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.anthropic_server import send_json

Block = dict[str, Any]


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments: dict[str, Any]) -> Block:
    return {"type": "tool_use", "name": name, "input": arguments}


class ScriptedMessages:
    """Serves `turns` to the agent loop; records every request body in `requests`."""

    def __init__(self, turns: list[list[Block]], side_text: str = "Scripted session",
                 before_turn: Callable[[int], None] | None = None):
        self.turns = turns
        self.before_turn = before_turn
        """Called with the turn's index before it is answered (e.g. to let the hooks of the
        previous tool use land first, as a real model's seconds of latency would)."""
        self.side_text = side_text
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedMessages:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- what to answer ------------------------------------------------------------------
    def answer(self, body: dict[str, Any]) -> list[Block]:
        if not body.get("tools"):
            return [text(self.side_text)]
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "user"
                   for b in _blocks(m) if b.get("type") == "tool_result")
        if self.before_turn is not None:
            self.before_turn(step)
        if step >= len(self.turns):
            return [text("Done.")]
        return [dict(b, id=f"toolu_scripted_{step}_{i}") if b["type"] == "tool_use" else b
                for i, b in enumerate(self.turns[step])]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block the CLI sent back, in order (the last request holds all)."""
        main = [r for r in self.requests if r.get("tools")]
        if not main:
            return []
        return [b for m in main[-1].get("messages", []) if m.get("role") == "user" for b in _blocks(m)
                if b.get("type") == "tool_result"]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("content-length", 0) or 0))
                body = json.loads(raw or b"{}")
                if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
                    self._json(200, {"input_tokens": 100} if "count_tokens" in self.path else {})
                    return
                with fake._lock:
                    fake.requests.append(body)
                blocks = fake.answer(body)
                if body.get("stream"):
                    self._stream(body, blocks)
                else:
                    self._json(200, _message(body, blocks))

            def do_GET(self) -> None:  # noqa: N802
                self._json(200, {})

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                send_json(self, status, payload)

            def _stream(self, body: dict[str, Any], blocks: list[Block]) -> None:
                data = b"".join(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode()
                                for name, event in _events(body, blocks))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        return Handler


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _message(body: dict[str, Any], blocks: list[Block]) -> dict[str, Any]:
    uses_tools = any(b["type"] == "tool_use" for b in blocks)
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
            "content": blocks, "stop_reason": "tool_use" if uses_tools else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 50, "output_tokens": 20}}


def _events(body: dict[str, Any], blocks: list[Block]) -> Iterator[tuple[str, dict[str, Any]]]:
    whole = _message(body, blocks)
    yield "message_start", {"type": "message_start", "message": {**whole, "content": [], "stop_reason": None,
                                                                  "usage": {"input_tokens": 50, "output_tokens": 1}}}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
            arguments = json.dumps(block["input"])
            for start in range(0, len(arguments), 40):  # in pieces, as the API sends them
                yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                    "type": "input_json_delta", "partial_json": arguments[start:start + 40]}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"],
                                                               "stop_sequence": None},
                            "usage": {"output_tokens": 20}}
    yield "message_stop", {"type": "message_stop"}
