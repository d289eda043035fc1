"""``reverie mcp`` over stdio: the wire between the SDK and the process's stdin/stdout.

Every line a client sends is answered. The SDK drops a line it cannot read, and its client then waits
forever; :func:`screen_request` answers such a line with a JSON-RPC error before the SDK sees it, and
:func:`run_stdio` serves with that screen in front of the SDK's own loop.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def run_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout until the client closes the pipe.

    Every line is answered: a line the SDK cannot read (not JSON, a batch, a bad id, nesting deeper
    than its parser allows, a number too long, text with lone surrogates) would otherwise be dropped
    and its client would wait forever; it gets a JSON-RPC error here instead
    (:func:`screen_request`). While serving, stray writes to the process's stdout go to stderr (the
    wire stays clean) and stdin reads see end of file."""
    import anyio

    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None:  # pragma: no cover - an SDK without it: its own stdio loop (no screening)
        server.run("stdio")
        return
    anyio.run(_serve_stdio, lowlevel)


async def _serve_stdio(lowlevel: Any) -> None:
    import io
    import os

    import anyio
    from mcp.server.stdio import stdio_server

    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the wire belongs to the protocol: stray reads see EOF ...
    os.dup2(2, 1)  # ... and stray writes land on stderr
    os.close(null)
    try:
        out = _LockedLines(anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire_out, "wb"), encoding="utf-8")))
        raw_in = anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire_in, "rb"), encoding="utf-8", errors="replace"))
        async with stdio_server(stdin=_ScreenedLines(raw_in, out), stdout=out) as (read, write):  # type: ignore[arg-type]
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
    finally:
        sys.stdout.flush()
        os.dup2(2, 1)


class _LockedLines:
    """The wire's stdout: one complete line per write, never interleaved (the SDK's answers and the
    screen's error answers come from different tasks)."""

    def __init__(self, inner: Any) -> None:
        import anyio

        self._inner = inner
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._inner.write(text)
            await self._inner.flush()

    async def flush(self) -> None:
        return None  # every write flushed already


class _ScreenedLines:
    """The wire's stdin as the SDK reads it, minus the requests it could not read: those are answered."""

    def __init__(self, inner: Any, out: _LockedLines) -> None:
        self._inner = inner
        self._out = out

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        async for line in self._inner:
            answer = screen_request(line)
            if answer is None:
                yield line
            else:
                await self._out.write(answer + "\n")


#: JSON-RPC error codes (JSON-RPC 2.0, section 5.1)
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: the longest integer Python's JSON reads (its int/str conversion limit)
_MAX_INT_DIGITS = 4300
#: a JSON token: a string, a structural character, or a bare scalar (number, true, false, null)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)


def screen_request(line: str) -> str | None:
    """The JSON-RPC error answering a line the SDK cannot read, or ``None`` when the SDK reads it (or the
    line is blank, or it is a notification or a client's response, which get no answer).

    The SDK drops a line it cannot read, and its client waits forever; every such line is answered here:
    -32700 (parse error) for a line that is not JSON, -32600 (invalid request) for JSON that is not one
    request reverie can read — a batch (MCP sends one message per line), an id that is not a string or
    an integer, a wrong ``jsonrpc`` version, no method, nesting deeper than the parser allows, a number
    longer than 4,300 digits, text with lone surrogates. The answer carries the request's id when one
    can be found (read without parsing the whole line, so that any depth is fine), else ``null``."""
    from mcp import types as mcp_types

    if not line.strip():
        return None
    try:
        read = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:  # the SDK would drop this line: answer it
        read = None
    if read is not None:
        if isinstance(read, mcp_types.JSONRPCNotification) and "id" in _top_level(line)[0]:
            # "id": null or an object: the SDK takes it for a notification and never answers
            return _error(None, INVALID_REQUEST, "Invalid request: the id must be a string or an integer")
        return None
    members, shape = _top_level(line)
    rid = _request_id(members.get("id"))
    try:
        message = json.loads(line, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        return _error(rid, PARSE_ERROR, f"Parse error: the line is not JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return _error(rid, INVALID_REQUEST, "Invalid request: nested too deep to read")
    except ValueError as exc:
        return _error(rid, INVALID_REQUEST, f"Invalid request: {exc}")
    if shape == "array" or isinstance(message, list):
        return _error(None, INVALID_REQUEST, "Invalid request: batches are not supported; send one message per line")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid request: a message is a JSON object")
    if "method" not in message:
        if "result" in message or "error" in message:
            return None  # a (malformed) response of the client: a response is never answered
        return _error(rid, INVALID_REQUEST, "Invalid request: no method")
    if "id" not in message:
        return None  # a notification: never answered
    if rid is None:
        return _error(None, INVALID_REQUEST, "Invalid request: the id must be a string or an integer")
    return _error(rid, INVALID_REQUEST, f"Invalid request: {_why_unreadable(message)}")


def _why_unreadable(message: dict[str, Any]) -> str:
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not isinstance(message.get("method"), str):
        return "the method must be a string"
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "it holds text with lone surrogates, which has no UTF-8 form; send valid Unicode text"
    except (ValueError, RecursionError):
        pass
    return "the request is malformed or nested too deep"


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"a number has more than {_MAX_INT_DIGITS} digits")
    return int(text)


def _error(rid: str | int | None, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}, ensure_ascii=True)


def _top_level(line: str) -> tuple[dict[str, str | None], str]:
    """The members of the line's top-level object whose values are scalars (their JSON text; ``None`` for a
    nested value) and the line's shape (``object``, ``array`` or ``other``), read token by token — any
    depth, no number parsed — up to where the line stops being well formed."""
    members: dict[str, str | None] = {}
    tokens = (m.group(0) for m in _TOKEN.finditer(line))
    first = next(tokens, None)
    if first != "{":
        return members, "array" if first == "[" else "other"
    depth, key, expect = 1, None, "key"
    for tok in tokens:
        if depth > 1:
            depth += 1 if tok in "{[" else -1 if tok in "}]" else 0
            continue
        if expect == "key":
            if not tok.startswith('"'):
                break
            key, expect = _string(tok), ":"
        elif expect == ":":
            if tok != ":":
                break
            expect = "value"
        elif expect == "value":
            if tok in "{[":
                depth += 1
                members.setdefault(key or "", None)
            elif tok in "}],:":
                break
            else:
                members.setdefault(key or "", tok)
            expect = ","
        elif tok == ",":
            expect = "key"
        else:
            break
    return members, "object"


def _string(token: str) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _request_id(raw: str | None) -> str | int | None:
    """A usable JSON-RPC id from its JSON text: a string, or an integer of at most 4,300 digits."""
    if raw is None:
        return None
    if raw.startswith('"'):
        return _string(raw)
    if re.fullmatch(r"-?\d+", raw) and len(raw.lstrip("-")) <= _MAX_INT_DIGITS:
        return int(raw)
    return None


__all__ = ["INVALID_REQUEST", "PARSE_ERROR", "run_stdio", "screen_request"]
