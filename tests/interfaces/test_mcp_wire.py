"""Every line sent to ``reverie mcp`` over stdio gets an answer: a request the SDK cannot read is answered
with a JSON-RPC error (-32700 for a line that is not JSON, -32600 for an invalid request) carrying its id
when one can be found, and the server keeps serving. The red-team lines that got no reply within 20 s:
metadata nested 3,000+ levels, an integer of 4,400+ digits, a batch array, ``"id": null`` or an object,
a 5,000-digit id, a parse error without an id."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from reverie.mcp_stdio import INVALID_REQUEST, PARSE_ERROR, screen_request

from .helpers import LAUNCHER, child_env


def _deep(levels: int) -> str:
    return '{"k":' * levels + "1" + "}" * levels


def _call(rid: Any, arguments: str, tool: str = "remember") -> str:
    return f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}'


#: (name, line, the answer's expected id, expected code); id ``None``: the answer's id is null
LINES: list[tuple[str, str, Any, int]] = [
    ("metadata 3,000 deep", _call(11, f'{{"content":"x","metadata":{_deep(3000)}}}'), 11, INVALID_REQUEST),
    ("params 100,000 deep", _call(12, _deep(100_000)), 12, INVALID_REQUEST),
    ("4,400-digit integer", _call(13, '{"query":"x","k":' + "9" * 4400 + "}", "recall"), 13, INVALID_REQUEST),
    ("batch array", '[{"jsonrpc":"2.0","id":14,"method":"tools/list"}]', None, INVALID_REQUEST),
    ("empty batch", "[]", None, INVALID_REQUEST),
    ("id null", '{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None, INVALID_REQUEST),
    ("id object", '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', None, INVALID_REQUEST),
    ("id list", '{"jsonrpc":"2.0","id":[1],"method":"tools/list"}', None, INVALID_REQUEST),
    ("id true", '{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None, INVALID_REQUEST),
    ("id 1.5", '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', None, INVALID_REQUEST),
    ("5,000-digit id", '{"jsonrpc":"2.0","id":' + "1" * 5000 + ',"method":"tools/list"}', None, INVALID_REQUEST),
    ("parse error", '{"jsonrpc":"2.0", oops', None, PARSE_ERROR),
    ("parse error after the id", '{"jsonrpc":"2.0","id":15,"method":"tools/list",', 15, PARSE_ERROR),
    ("not JSON", "hello", None, PARSE_ERROR),
    ("a number", "42", None, INVALID_REQUEST),
    ("a string", '"tools/list"', None, INVALID_REQUEST),
    ("no method", '{"jsonrpc":"2.0","id":16}', 16, INVALID_REQUEST),
    ("method a number", '{"jsonrpc":"2.0","id":17,"method":5}', 17, INVALID_REQUEST),
    ("jsonrpc 1.0", '{"jsonrpc":"1.0","id":18,"method":"tools/list"}', 18, INVALID_REQUEST),
    ("no jsonrpc", '{"id":19,"method":"tools/list"}', 19, INVALID_REQUEST),
    (
        "lone surrogate in the method",
        '{"jsonrpc":"2.0","id":"s\\ud800","method":"\\ud800"}',
        "s\ud800",
        INVALID_REQUEST,
    ),
    ("an empty object", "{}", None, INVALID_REQUEST),
]


@pytest.mark.parametrize(("name", "line", "rid", "code"), LINES, ids=[c[0] for c in LINES])
def test_screen_answers_every_line_the_sdk_cannot_read(name: str, line: str, rid: Any, code: int) -> None:
    answer = screen_request(line)
    assert answer is not None, name
    msg = json.loads(answer)
    assert msg["jsonrpc"] == "2.0" and msg["id"] == rid and msg["error"]["code"] == code, msg
    assert msg["error"]["message"]


def test_screen_leaves_what_the_sdk_reads_and_what_gets_no_answer() -> None:
    for line in (
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":' + "1" * 50 + ',"method":"tools/list"}',  # a long id the SDK reads
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',  # a notification: never answered
        '{"jsonrpc":"2.0","id":1,"result":{}}',  # a client's response: never answered
        "   ",
    ):
        assert screen_request(line) is None, line


def test_every_line_over_stdio_is_answered_and_the_server_keeps_serving(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCHER), "mcp", str(tmp_path / "m.db"), "--user", "alice"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    answers: list[dict[str, Any]] = []

    def reader() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            answers.append(json.loads(raw))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()

    def send(line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        proc.stdin.flush()

    def wait_for(count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(answers) < count and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        wait_for(1)
        send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for _name, line, _rid, _code in LINES:
            send(line)
        send('{"jsonrpc":"2.0","id":"last","method":"tools/list"}')  # still serving
        wait_for(2 + len(LINES))
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        thread.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    errors = [a for a in answers[1:] if "error" in a]
    assert len(errors) == len(LINES), [a for a in answers[1:]]
    got = sorted((json.dumps(a["id"]), a["error"]["code"]) for a in errors)
    want = sorted((json.dumps(rid), code) for _n, _l, rid, code in LINES)
    assert got == want
    assert answers[-1]["id"] == "last" and answers[-1]["result"]["tools"]
