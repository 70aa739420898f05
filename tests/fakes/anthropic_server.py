"""A local HTTP server that answers like Anthropic's Messages API (POST /v1/messages).

Tests give it a `responder(request_json) -> str` that decides the reply text; every
request is recorded in `requests` so tests can check what was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict) -> None:
    """Answer `payload` as JSON (the fakes' one way of replying with a body)."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class FakeAnthropic:
    def __init__(self, responder: Callable[[dict], str]):
        self.responder = responder
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                fake.requests.append(body)
                if not self.path.startswith("/v1/messages"):
                    self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                    return
                text = fake.responder(body)
                self._send(200, {
                    "id": f"msg_fake_{len(fake.requests)}", "type": "message", "role": "assistant",
                    "model": body.get("model", "fake"), "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": max(1, len(text) // 4)},
                })

            def _send(self, status: int, payload: dict) -> None:
                send_json(self, status, payload)

            def log_message(self, *args):  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
