"""A small OpenAI-compatible chat server on 127.0.0.1 with scripted answers (real HTTP).

The LLM paths of every test run against it; its fixtures (``chat_server``, ``script_by_prompt``) are
registered for the whole suite by ``tests/conftest.py``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Script = Callable[[dict[str, Any]], tuple[int, Any, float]]


class ChatServer:
    """Answers ``POST /v1/chat/completions`` with ``script(request) -> (status, content, delay_s)``;
    ``content`` is the assistant's text, or a whole assistant message (a dict, e.g. with tool calls)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: Script = lambda req: (200, "{}", 0.0)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                status, content, delay = server.script(body)
                time.sleep(delay)
                # a dict is a whole assistant message (tool calls); a string is its text content
                message = content if isinstance(content, dict) else {"role": "assistant", "content": content}
                payload = json.dumps(
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", ""),
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                            }
                        ],
                    }
                )
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(payload.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def ops(self) -> list[str]:
        return [r["messages"][0]["content"][:20] for r in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.close()


def by_prompt(answers: dict[str, Any], default: Any = None) -> Script:
    """A script answering JSON by a keyword of the system prompt (extract, merge, contradict, relation)."""

    def script(req: dict[str, Any]) -> tuple[int, str, float]:
        system = req["messages"][0]["content"]
        for key, value in answers.items():
            if key in system:
                return 200, json.dumps(value) if not isinstance(value, str) else value, 0.0
        return 200, json.dumps(default if default is not None else {}), 0.0

    return script


@pytest.fixture
def script_by_prompt() -> Callable[..., Script]:
    return by_prompt
