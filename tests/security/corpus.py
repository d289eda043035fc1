"""The bad-input corpus: calls of ``Memory`` methods with one bad argument each (the others valid).

Every case must be refused with a reverie error (or, for ``observe``, a SKIP that writes nothing) and
change no row — whichever way it arrives: the Python API, REST, MCP (in process and over stdio). Each
case names the method, its arguments (``$ID`` stands for an existing memory's id) and whether it
can travel as JSON (REST, MCP); :func:`http_request` and :func:`mcp_call` map it onto those.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

SURR = "\ud800"
SURR_MID = "ok \udfff ok"
NUL = "a\x00b"
ID = "$ID"


def deep_dict(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    cur = root
    for _ in range(levels - 1):
        cur["k"] = {}
        cur = cur["k"]
    return root


def deep_list(levels: int) -> list[Any]:
    root: list[Any] = []
    cur = root
    for _ in range(levels - 1):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return root


@dataclass
class Case:
    name: str
    op: str
    args: dict[str, Any]
    json_ok: bool = field(default=True)

    def resolved(self, memory_id: str) -> dict[str, Any]:
        return {k: (memory_id if v == ID else v) for k, v in self.args.items()}


class _Opaque:
    """A value no JSON can carry (a Python-only bad argument)."""

    def __repr__(self) -> str:
        return "<opaque>"


def _json_ok(args: Any) -> bool:
    """Whether ``args`` travels through JSON unchanged (non-string keys, tuples, bytes … do not)."""
    stack = [args]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif not (item is None or isinstance(item, str | int | float | bool)):
            return False
    return True


BAD_TEXT = [SURR, SURR_MID, NUL, "", "   \n\t ", 5, 1.5, True, [], {}, ["list"], b"\xff\xfe", _Opaque()]
BAD_SCOPE = [SURR, SURR_MID, NUL, "", "  ", "u" * 257, 5, 2.5, False, ["alice"], {"user": "alice"}, b"alice"]
BAD_ID = [SURR, NUL, "", "x" * 200, "no-such-id", 5, None, ["id"], {"id": 1}, "../../etc/passwd"]
BAD_WHEN = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "not a date",
    "2024-13-45T00:00:00+00:00",
    "2024-01-01T00:00:00",
    SURR,
    "2024-01-01T00:00:00+00:00" + "0" * 100,
    12345,
    1.5,
    True,
    ["2024"],
    datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
    datetime(2024, 1, 1),
]
BAD_METADATA = [
    deep_dict(40),
    deep_dict(600),
    {"l": deep_list(600)},
    {"a": math.nan},
    {"a": math.inf},
    {"a": -math.inf},
    {"k": SURR},
    {SURR: 1},
    {"k": NUL},
    {"k": "x" * 70_000},
    [1, 2],
    "meta",
    5,
    {"n": 10**30},
    {1: "int key"},
    {"s": {1, 2}},
    {"o": _Opaque()},
    {"b": b"bytes"},
    {"t": datetime(2024, 1, 1)},
]
BAD_NUMBER = [math.nan, math.inf, -math.inf, -0.5, 1.5, 10**400, "0.5", True, None, [0.5]]
BAD_K = [0, -1, 10**6, 1.5, "5", True, None, math.nan]
BAD_FILTERS = [
    {"layer": "attic"},
    {"status": 5},
    {"store": ["hot", "lukewarm"]},
    {"unknown": 1},
    {SURR: 1},
    {"category": [SURR]},
    {"category": [5]},
    {"category": []},
    {"ids": [1]},
    {"ids": [SURR]},
    {"ids": ["x" * 300]},
    {"metadata": {"k": math.nan}},
    {"metadata": {"k": [1]}},
    {"metadata": {SURR: 1}},
    {"metadata": {"k": SURR}},
    {"metadata": "k"},
    {"valid_at": "0001-01-01T00:00:00+14:00"},
    {"recorded_before": "yesterday"},
    {"pinned": "yes"},
    {"session_id": SURR},
    {"session_id": 5},
    "not a mapping",
    [("layer", "working")],
]
BAD_SOURCE = ["rumour", SURR, 5, "", ["human"]]
BAD_LAYER = ["attic", SURR, 5, "", ["semantic"]]
BAD_STEPS = [["nap"], [SURR], [5], "decay", [["decay"]]]


def _cases() -> list[Case]:
    out: list[Case] = []

    def add(op: str, base: dict[str, Any], key: str, values: list[Any]) -> None:
        for i, value in enumerate(values):
            args = {**base, key: value}
            out.append(Case(f"{op}.{key}[{i}]", op, args, _json_ok(args)))

    add_base = {"content": "a valid memory", "user_id": "alice", "infer": False}
    add("add", add_base, "content", [*BAD_TEXT, "x" * 100_001, None])
    for key in ("user_id", "agent_id", "session_id"):
        add("add", add_base, key, BAD_SCOPE)
    add("add", add_base, "when", BAD_WHEN)
    add("add", add_base, "metadata", BAD_METADATA)
    add("add", add_base, "source", BAD_SOURCE)
    add("add", {**add_base, "infer": True}, "content", [SURR, NUL, "   "])
    search = {"query": "what do I know", "user_id": "alice"}
    add("search", search, "query", [*BAD_TEXT, "q" * 5000, None])
    add("search", search, "user_id", BAD_SCOPE)
    add("search", search, "agent_id", [SURR, NUL, 5])
    add("search", search, "k", BAD_K)
    add("search", search, "filters", BAD_FILTERS)
    add("context", search, "query", [SURR, NUL, "", 5])
    add("context", search, "budget_tokens", [0, -5, 1.5, "100", True])
    add("context", search, "session_id", [SURR, NUL, 5])
    add("observe", {"message": "hello there", "user_id": "alice"}, "user_id", [SURR, NUL, 5, ""])
    add("observe", {"message": "hello there", "user_id": "alice"}, "role", ["system", SURR, 5])
    add("observe", {"message": "I moved to Lisbon", "user_id": "alice"}, "when", BAD_WHEN[:6])
    add("observe", {"message": "I moved to Lisbon", "user_id": "alice"}, "metadata", BAD_METADATA[:9])
    add("observe", {"user_id": "alice"}, "message", [SURR, NUL, "", 5])
    for op in (
        "get",
        "forget",
        "pin",
        "unpin",
        "reactivate",
        "demote",
        "history",
        "explain_strength",
        "undo_consolidation",
    ):
        key = "summary_id" if op == "undo_consolidation" else "memory_id"
        add(op, {}, key, BAD_ID)
    upd = {"memory_id": ID}
    add("update", upd, "content", [SURR, NUL, "", "   ", 5, "x" * 100_001])
    add("update", upd, "metadata", BAD_METADATA)
    add("update", upd, "category", [SURR, NUL, "", "c" * 65, 5, ["fact"]])
    add("update", upd, "importance", [*BAD_NUMBER[:-2], [0.5]])
    add("update", upd, "reason", [SURR, NUL, 5, "r" * 5000])
    add("update", {"content": "fine"}, "memory_id", [SURR, "no-such-id", 5])
    add("invalidate", {"memory_id": ID}, "reason", [SURR, NUL, "", "   ", 5, None])
    add("promote", {"memory_id": ID}, "layer", BAD_LAYER)
    add("feedback", {"memory_id": ID}, "useful", ["yes", 1, None, SURR])
    add("list", {"user_id": "alice"}, "filters", BAD_FILTERS[:12])
    add("list", {"user_id": "alice"}, "limit", [0, -1, 10**6, "10", 1.5, True])
    add("list", {"user_id": "alice"}, "offset", [-1, "0", 1.5])
    add("list", {"user_id": "alice"}, "order_by", ["content; DROP TABLE memories", SURR, 5])
    add("list", {}, "user_id", [SURR, NUL, 5])
    add("stats", {}, "user_id", [SURR, NUL, 5, "", "u" * 300])
    add("dream", {}, "steps", BAD_STEPS)
    add("end_session", {"user_id": "alice"}, "session_id", [SURR, NUL, "", 5, None])
    add("working_memory", {"user_id": "alice"}, "session_id", [SURR, NUL, "", 5])
    add(
        "add_many",
        {"user_id": "alice", "infer": False},
        "items",
        [
            "abc",
            b"abc",
            {"content": "x"},
            5,
            None,
            [{"content": "x", "user_id": "bob"}],
            [{"nocontent": 1}],
            [{"content": "x", "bogus": 1}],
            [None],
            [{"content": SURR}],
            [{"content": "x", "when": "0001-01-01T00:00:00+14:00"}],
            [{"content": "x", "metadata": deep_dict(100)}],
            [{"content": "x", "id": SURR}],
            [["nested list"]],
        ],
    )
    add("add_many", {"user_id": "alice", "infer": True}, "items", [[{"content": "x", "id": "fixed-id"}]])
    # what the red team found untyped (a TypeError, ValueError …) or taken as true
    add("add", add_base, "evil", [1])
    add("add", add_base, "infer", ["no", "false", 0, None])
    add("update", {"memory_id": ID, "content": "fine"}, "user_id", ["bob"])
    add("dream", {}, "bogus", [1])
    add("add_many", {"items": ["a valid memory"], "user_id": "alice", "infer": False}, "batch_size", [0, -1, "2", 2.5])
    add("list", {"user_id": "alice"}, "order_by", [["created_at"], {"created_at": 1}])
    add("list", {"user_id": "alice"}, "offset", [10**30, 10**13])
    add("list", {"user_id": "alice"}, "descending", ["no", 1, None])
    add("export_markdown", {}, "path", ["a\x00b", 5, "", SURR, None])
    add("backup", {}, "dest", [5, "a\x00b", "", None, ["x.db"]])
    add("search", search, "query", ["q" * 100_000, "q" * 4001])
    add("search", search, "bogus", [1])
    return out


CASES: list[Case] = _cases()


# the same calls over REST and MCP ------------------------------------------------------------------

BY_ID_POST = {
    "pin": "pin",
    "unpin": "unpin",
    "reactivate": "reactivate",
    "demote": "demote",
    "undo_consolidation": "undo-consolidation",
    "promote": "promote",
    "invalidate": "invalidate",
    "feedback": "feedback",
}


def _path_id(value: Any) -> str:
    from urllib.parse import quote

    text = value if isinstance(value, str) else json.dumps(value)
    return quote(text.encode("utf-8", "surrogatepass"), safe="")  # a lone surrogate as its CESU bytes


def _url_bad(value: Any) -> bool:
    """Whether ``value`` is still a bad scope after travelling in a URL (as text, surrogates replaced)."""
    return isinstance(value, str) and (value.strip() == "" or "\x00" in value or len(value) > 256)


def http_request(case: Case, memory_id: str) -> tuple[str, str, Any, dict[str, Any]] | None:
    """``(method, path, json_body, query)`` of the case over REST, or ``None`` (no REST route takes it)."""
    a = case.resolved(memory_id)
    op = case.op
    body = {k: v for k, v in a.items() if k not in ("memory_id", "summary_id")}
    mid = a.get("memory_id", a.get("summary_id"))
    if op == "add":
        return "POST", "/v1/memories", a, {}
    if op in ("search", "context", "observe"):
        return "POST", f"/v1/{op}", a, {}
    if op in ("get", "forget", "history", "explain_strength"):
        method = {"forget": "DELETE"}.get(op, "GET")
        suffix = {"history": "/history", "explain_strength": "/strength"}.get(op, "")
        return method, f"/v1/memories/{_path_id(mid)}{suffix}", None, {}
    if op == "update":
        return "PATCH", f"/v1/memories/{_path_id(mid)}", body, {}
    if op in BY_ID_POST:
        return "POST", f"/v1/memories/{_path_id(mid)}/{BY_ID_POST[op]}", body or None, {}
    if op in ("list", "stats", "end_session") and not all(
        _url_bad(v) for k, v in a.items() if k in ("user_id" if op != "end_session" else "session_id",)
    ):
        return None  # a URL carries text only: 5 arrives as "5", a lone surrogate as U+FFFD — valid scopes
    if op == "list":
        if set(a) - {"user_id", "limit", "offset"} or any(isinstance(v, str) and v.isdigit() for v in a.values()):
            return None  # filters and ordering are no query parameters; "10" is a valid query-string number
        return "GET", "/v1/memories", None, a
    if op == "stats":
        return "GET", "/v1/stats", None, a
    if op == "dream":
        return "POST", "/v1/dream", a, {}
    if op == "end_session":
        user = {"user_id": a.get("user_id")}
        return "POST", f"/v1/sessions/{_path_id(a.get('session_id'))}/end", user, {}
    return None


MCP_TOOLS = {
    "add": "remember",
    "search": "recall",
    "get": "get",
    "forget": "forget",
    "pin": "pin",
    "unpin": "unpin",
    "reactivate": "reactivate",
    "demote": "demote",
    "promote": "promote",
    "invalidate": "invalidate",
    "feedback": "feedback",
    "history": "history",
    "update": "update",
    "stats": "stats",
    "dream": "dream",
    "context": "context",
    "observe": "observe",
    "end_session": "end_session",
    "undo_consolidation": "undo_consolidation",
}


def mcp_call(case: Case, memory_id: str) -> tuple[str, dict[str, Any]] | None:
    """``(tool, arguments)`` of the case over MCP, or ``None``."""
    tool = MCP_TOOLS.get(case.op)
    if tool is None:
        return None
    a = case.resolved(memory_id)
    # remember always runs the write path: it has no infer (a bad infer has no MCP form)
    if case.op == "add" and not isinstance(a.pop("infer", True), bool):
        return None
    if case.op == "search" and "filters" in a:
        return None  # recall takes layer/category, not a filters object
    return tool, a


def row_counts(mem: Any) -> dict[str, int]:
    """Rows of every table of the store (SQLite: every table, FTS shadow tables included)."""
    target = str(mem.target)
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                    "AND table_type = 'BASE TABLE'"
                )
            ]
            return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    import sqlite3

    with sqlite3.connect(target) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


__all__ = [
    "CASES",
    "ID",
    "NUL",
    "SURR",
    "Case",
    "deep_dict",
    "deep_list",
    "http_request",
    "mcp_call",
    "row_counts",
]
