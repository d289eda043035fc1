"""``reverie mcp``: reverie as a Model Context Protocol server (official ``mcp`` SDK, 2.x).

A thin adapter over one :class:`reverie.Memory`: every tool validates nothing itself, calls
one ``Memory`` method and shapes its result as JSON. reverie errors become MCP tool errors
(``is_error`` results whose text starts with the reverie error type, e.g.
``NotFoundError: no memory with id …``) so the model can read and correct them; resource reads
raise the SDK's ``ResourceNotFoundError`` (JSON-RPC -32602) or ``ResourceError``.

Scope: ``reverie mcp --user maya [--agent claude]`` locks the server to that user (and agent):
tools act as that scope, and a tool call naming another user or agent gets a
``PermissionDeniedError`` result — a prompt-injected model cannot read or change anyone else's
memories. Without ``--user`` the server has full access (single-tenant): ``user_id`` and
``agent_id`` given to a tool are used as they are (``--agent`` is then only a default).
``--session`` is always only a default.

Transports: stdio (default, what Claude Desktop/Code and Cursor launch) or streamable HTTP on
127.0.0.1 only (``--http``; the endpoint is ``http://127.0.0.1:PORT/mcp``).
"""

from __future__ import annotations

import dataclasses
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from reverie.auth import FULL_ACCESS, Credential
from reverie.errors import InvalidInputError, MissingDependencyError, NotFoundError, ReverieError
from reverie.scoped import ScopedMemory
from reverie.validation import describe_error

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from reverie.memory import Memory
    from reverie.model import HistoryEvent, MemoryRecord

SERVER_NAME = "reverie"
INSTRUCTIONS = """\
reverie is your long-term memory. Call `recall` with what the user is asking about before answering
questions that may depend on earlier conversations, and `remember` facts, preferences, decisions and
corrections worth keeping (one self-contained statement each). When a memory turns out to be wrong,
`invalidate` it with a reason instead of forgetting it; `forget` deletes for good and is for explicit
"forget this" requests. Tell reverie whether recalled memories helped with `feedback`.
"""

MemoryId = Annotated[str, Field(description="The memory's id (a UUID as returned by remember/recall).")]
UserId = Annotated[
    str | None,
    Field(description="User scope (the isolation boundary). Omit to use the server's --user."),
]
AgentId = Annotated[str | None, Field(description="Agent scope. Omit to use the server's --agent.")]
SessionId = Annotated[str | None, Field(description="Session id. Omit to use the server's --session default.")]
LayerName = Literal["working", "episodic", "semantic", "procedural", "codebase"]


@dataclass(frozen=True, slots=True)
class Defaults:
    """Scope used when a tool call names none."""

    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None

    def user(self, given: str | None) -> str | None:
        return given if given is not None else self.user_id

    def agent(self, given: str | None) -> str | None:
        return given if given is not None else self.agent_id

    def session(self, given: str | None) -> str | None:
        return given if given is not None else self.session_id


def _require_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError as exc:  # pragma: no cover - mcp is a declared extra
        raise MissingDependencyError("the MCP server needs the 'mcp' package: pip install 'reverie[server]'") from exc


@contextmanager
def _tool_errors() -> Iterator[None]:
    """reverie errors → anticipated tool errors carrying the reverie error type."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        yield
    except ReverieError as exc:
        raise ToolError(describe_error(exc)) from exc  # lone surrogates escaped: the answer must encode


@contextmanager
def _resource_errors() -> Iterator[None]:
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    try:
        yield
    except NotFoundError as exc:
        raise ResourceNotFoundError(describe_error(exc)) from exc
    except ReverieError as exc:
        raise ResourceError(describe_error(exc)) from exc


def brief(rec: MemoryRecord) -> dict[str, Any]:
    """The fields an agent needs to use a memory (``get`` returns every field)."""
    return {
        "id": rec.id,
        "content": rec.content,
        "layer": rec.layer.value,
        "status": rec.status.value,
        "category": rec.category,
        "pinned": rec.pinned,
        "user_id": rec.user_id,
        "agent_id": rec.agent_id,
        "session_id": rec.session_id,
        "created_at": rec.created_at.isoformat(),
        "valid_from": rec.valid_from.isoformat() if rec.valid_from else None,
        "valid_until": rec.valid_until.isoformat() if rec.valid_until else None,
        "metadata": rec.metadata,
    }


def history_dicts(events: list[HistoryEvent]) -> list[dict[str, Any]]:
    return [{"at": e.at.isoformat(), "event": e.event, "reason": e.reason, "actor": e.actor, "data": e.data}
            for e in events]


def server_credential(defaults: Defaults) -> Credential:
    """The scope a server runs with: locked to ``--user`` (and ``--agent``) when a user is given,
    else full access."""
    if defaults.user_id is None:
        return FULL_ACCESS
    return Credential.scoped(defaults.user_id, defaults.agent_id, name="mcp --user")


def build_server(mem: Memory, defaults: Defaults | None = None, credential: Credential | None = None) -> MCPServer:
    """An ``MCPServer`` whose tools and resources call ``mem`` within ``credential`` (default: see
    :func:`server_credential`)."""
    _require_sdk()
    from mcp.server.mcpserver import MCPServer

    from reverie import __version__

    d = defaults or Defaults()
    sm = ScopedMemory(mem, credential if credential is not None else server_credential(d))
    server: MCPServer = MCPServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    _write_tools(server, sm, d)
    _lifecycle_tools(server, sm)
    _read_tools(server, sm, d)
    _knowledge_tools(server, sm, d)
    _resources(server, sm, d)
    return server


def _write_tools(server: MCPServer, mem: ScopedMemory, d: Defaults) -> None:
    @server.tool()
    def remember(
        content: Annotated[str, Field(description="What to remember: one self-contained statement.")],
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Free-form JSON metadata.")] = None,
        when: Annotated[str | None, Field(description="ISO 8601 time the content refers to "
                                                      "(default: now).")] = None,
        source: Annotated[str | None, Field(description="Who says so: human, ai, interaction, ingest, "
                                                        "code_scan or dream (sets trust).")] = None,
        verbatim: Annotated[bool, Field(strict=True, description="Store exactly as given, skipping the write path's "
                                                    "dedup and inference.")] = False,
    ) -> dict[str, Any]:
        """Store a memory. Returns the action taken (CREATE, UPDATE, SUPERSEDE, REINFORCE or SKIP for a
        duplicate), the memory id and the reason."""
        with _tool_errors():
            res = mem.add(content, user_id=d.user(user_id), agent_id=d.agent(agent_id),
                          session_id=d.session(session_id), metadata=metadata, when=when, source=source,
                          infer=not verbatim)
        return res.to_dict()

    @server.tool()
    def observe(
        message: Annotated[str, Field(description="One raw conversation turn, as said.")],
        role: Annotated[Literal["user", "assistant"], Field(description="Who said it.")] = "user",
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        when: Annotated[str | None, Field(description="ISO 8601 time of the turn (default: now).")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Free-form JSON metadata.")] = None,
        flush: Annotated[bool, Field(description="Store what the conversation's buffer holds now, this turn "
                                     "included, so that it can be recalled at once.")] = False,
    ) -> dict[str, Any]:
        """Feed one conversation turn to reverie's observer: it decides what (if anything) is worth
        remembering, buffers small talk and extracts facts. Returns what was written now; BUFFERED
        means the turn waits in the buffer and is NOT stored yet (flush=true stores it now)."""
        with _tool_errors():
            results = mem.observe(message, role=role, user_id=d.user(user_id), agent_id=d.agent(agent_id),
                                  session_id=d.session(session_id), when=when, metadata=metadata, flush=flush)
        return {"results": [r.to_dict() for r in results]}

    @server.tool()
    def end_session(
        session_id: SessionId = None,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        """End a session: store what is still buffered, promote its strong working memories and clear
        its working memory. Returns a report."""
        sid = d.session(session_id)
        with _tool_errors():
            if sid is None:
                raise InvalidInputError("end_session needs a session_id (argument or the server's --session)")
            return mem.end_session(sid, user_id=d.user(user_id))

    @server.tool()
    def update(
        memory_id: MemoryId,
        content: Annotated[str | None, Field(description="New content (re-embedded).")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Replacement metadata.")] = None,
        category: Annotated[str | None, Field(description="New category, e.g. preference or decision.")] = None,
        importance: Annotated[float | None, Field(strict=True, ge=0.0, le=1.0,
                                                  description="New base importance, 0..1.")] = None,
        reason: Annotated[str, Field(description="Why the memory changes (kept in its history).")] = "",
    ) -> dict[str, Any]:
        """Edit a memory in place (immutable memories refuse). Returns the updated memory."""
        with _tool_errors():
            rec = mem.update(memory_id, content, metadata=metadata, category=category, importance=importance,
                             reason=reason)
        return brief(rec)

    @server.tool()
    def forget(memory_id: MemoryId) -> dict[str, Any]:
        """Delete a memory for good. Only for an explicit "forget this" request; to mark something as no
        longer true, use invalidate."""
        with _tool_errors():
            mem.forget(memory_id)
        return {"forgotten": memory_id}



def _lifecycle_tools(server: MCPServer, mem: ScopedMemory) -> None:
    @server.tool()
    def invalidate(
        memory_id: MemoryId,
        reason: Annotated[str, Field(min_length=1, description="Why it is no longer true.")],
    ) -> dict[str, Any]:
        """Mark a memory as no longer true. It is kept (with its validity closed) but no longer recalled."""
        with _tool_errors():
            return brief(mem.invalidate(memory_id, reason))

    @server.tool()
    def pin(memory_id: MemoryId) -> dict[str, Any]:
        """Pin a memory: immune to forgetting and demotion."""
        with _tool_errors():
            return brief(mem.pin(memory_id))

    @server.tool()
    def unpin(memory_id: MemoryId) -> dict[str, Any]:
        """Unpin a memory, so that the dream cycle may forget or demote it again."""
        with _tool_errors():
            return brief(mem.unpin(memory_id))

    @server.tool()
    def reactivate(memory_id: MemoryId) -> dict[str, Any]:
        """Bring a forgotten (dormant or archived, cold) memory back into everyday recall."""
        with _tool_errors():
            return brief(mem.reactivate(memory_id))

    @server.tool()
    def undo_consolidation(summary_id: MemoryId) -> dict[str, Any]:
        """Undo a dream consolidation: the originals return to everyday recall, the summary is invalidated."""
        with _tool_errors():
            return mem.undo_consolidation(summary_id)

    @server.tool()
    def promote(
        memory_id: MemoryId,
        layer: Annotated[LayerName | None, Field(description="Target layer; default: the next one "
                                                            "(working → episodic → semantic).")] = None,
    ) -> dict[str, Any]:
        """Move a memory up a layer (pinned memories may be promoted; immutable ones may not)."""
        with _tool_errors():
            return brief(mem.promote(memory_id, layer))

    @server.tool()
    def demote(memory_id: MemoryId) -> dict[str, Any]:
        """Move a memory down one layer (semantic → episodic → working). Pinned, flashbulb and immutable
        memories refuse."""
        with _tool_errors():
            return brief(mem.demote(memory_id))

    @server.tool()
    def feedback(
        memory_id: MemoryId,
        useful: Annotated[bool, Field(strict=True, description="true if the memory helped, false if it did not.")],
    ) -> dict[str, Any]:
        """Tell reverie whether a recalled memory was useful; this updates its utility."""
        with _tool_errors():
            rec = mem.feedback(memory_id, useful=useful)
        return {"id": rec.id, "utility": rec.utility}



def _read_tools(server: MCPServer, mem: ScopedMemory, d: Defaults) -> None:
    @server.tool()
    def recall(
        query: Annotated[str, Field(description="What to look for, in natural language.")],
        k: Annotated[int, Field(strict=True, ge=1, le=100, description="How many memories to return.")] = 5,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        layer: Annotated[LayerName | None, Field(description="Only memories of this layer.")] = None,
        category: Annotated[str | None, Field(description="Only memories of this category.")] = None,
        explain: Annotated[bool, Field(strict=True, description="Include how each score was made (channels, "
                                                   "ranks, fusion).")] = False,
    ) -> dict[str, Any]:
        """Recall the memories most relevant to the query, best first. Each result counts as an access
        (it strengthens the memory)."""
        filters: dict[str, Any] = {}
        if layer is not None:
            filters["layer"] = layer
        if category is not None:
            filters["category"] = category
        with _tool_errors():
            hits = mem.search(query, user_id=d.user(user_id), agent_id=d.agent(agent_id),
                              session_id=d.session(session_id), k=k, filters=filters or None)
        results = []
        for h in hits:
            item = {"score": h.score, **brief(h.memory)}
            if explain:
                item["explain"] = h.explain
            results.append(item)
        return {"results": results}

    @server.tool()
    def context(
        query: Annotated[str, Field(description="What the agent is about to answer or do.")],
        budget_tokens: Annotated[int | None, Field(strict=True, ge=1, le=100_000,
                                                   description="Token budget of the block (default: configured).")]
        = None,
        k: Annotated[int, Field(strict=True, ge=1, le=100, description="How many memories to retrieve.")] = 10,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """A ready-to-use memory block for the prompt: the session's working memory, core memories and
        the relevant ones, gated by confidence and fitted to the token budget."""
        with _tool_errors():
            block = mem.context(query, user_id=d.user(user_id), agent_id=d.agent(agent_id),
                                session_id=d.session(session_id), budget_tokens=budget_tokens, k=k)
        return {"text": block.text, "items": [dataclasses.asdict(i) for i in block.items],
                "skipped": block.skipped, "budget_tokens": block.budget_tokens, "used_tokens": block.used_tokens}

    @server.tool()
    def get(memory_id: MemoryId) -> dict[str, Any]:
        """One memory with every field (strengths, provenance, validity). Counts as an access."""
        with _tool_errors():
            return mem.get(memory_id).to_dict()

    @server.tool()
    def history(memory_id: MemoryId) -> dict[str, Any]:
        """Every recorded transition of a memory (created, updated, promoted, invalidated, …), oldest first."""
        with _tool_errors():
            return {"id": memory_id, "events": history_dicts(mem.history(memory_id))}

    @server.tool()
    def stats(
        user_id: Annotated[str | None, Field(description="Only this user's memories (default: all).")] = None,
    ) -> dict[str, Any]:
        """Health check: memory counts and energy per layer and status."""
        with _tool_errors():
            return mem.stats(user_id=d.user(user_id))

    @server.tool()
    def dream(
        steps: Annotated[list[str] | None, Field(description="Step names to run (default: every enabled "
                                                             "step: decay, promote, expire, prune, …).")] = None,
    ) -> dict[str, Any]:
        """Run the dream cycle now (decay, promotion, expiry, pruning …) and return what each step changed."""
        with _tool_errors():
            return mem.dream(steps=steps)



def _knowledge_tools(server: MCPServer, mem: ScopedMemory, d: Defaults) -> None:
    @server.tool()
    def ingest_code(
        path: Annotated[str, Field(description="A source directory (or one file) on this machine.")],
        user_id: Annotated[str | None, Field(description="Whose memory (default: the server's user).")] = None,
    ) -> dict[str, Any]:
        """Remember a code base: its file tree and each Python module's public classes, functions and methods
        (signature and first docstring line) become codebase-layer memories with their paths, found by recall.
        Run it again after changes: only what changed is updated, what disappeared is invalidated; unreadable
        files are skipped with the reason."""
        with _tool_errors():
            return mem.ingest_code(path, user_id=d.user(user_id), agent_id=d.agent_id)

    @server.tool()
    def topics(
        user_id: Annotated[str | None, Field(description="Whose memory (default: the server's user).")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="At most this many topics.")] = 30,
    ) -> dict[str, Any]:
        """What the memory is about: the topics of its conversations (sealed memory boxes) and the entities its
        memories name, each with how many memories mention it and when it was first and last seen."""
        with _tool_errors():
            index = mem.topic_index(user_id=d.user(user_id))
        return {**index, "topics": index["topics"][:limit]}

    @server.tool()
    def documents(
        user_id: Annotated[str | None, Field(description="Whose memory (default: the server's user).")] = None,
    ) -> dict[str, Any]:
        """What the memory keeps about the user for reading: the behavioural profile (preferences, decisions,
        know-how, patterns — with a line cap), entity profiles, reflections, compression guidelines learned from
        past write decisions, and the topic index."""
        with _tool_errors():
            return mem.documents(user_id=d.user(user_id))


def _resources(server: MCPServer, mem: ScopedMemory, d: Defaults) -> None:
    def working(user_id: str | None, session_id: str) -> dict[str, Any]:
        with _resource_errors():
            recs = mem.working_memory(session_id, user_id=user_id, agent_id=d.agent_id)
        return {"user_id": user_id, "session_id": session_id, "memories": [brief(r) for r in recs]}

    def hot(user_id: str | None) -> dict[str, Any]:
        with _resource_errors():
            recs = mem.hot_tier(user_id=user_id, agent_id=d.agent_id)
        return {"user_id": user_id, "memories": [brief(r) for r in recs]}

    @server.resource("reverie://hot", mime_type="application/json",
                     description="The hot tier (seed 001): proven memories always injected (server's default user).")
    def hot_default() -> dict[str, Any]:
        return hot(d.user_id)

    @server.resource("reverie://users/{user_id}/hot", mime_type="application/json",
                     description="The hot tier of one user.")
    def hot_user(user_id: str) -> dict[str, Any]:
        return hot(user_id)

    @server.resource("reverie://sessions/{session_id}/working", mime_type="application/json",
                     description="The working memory of a session (server's default user).")
    def session_working(session_id: str) -> dict[str, Any]:
        return working(d.user_id, session_id)

    @server.resource("reverie://users/{user_id}/sessions/{session_id}/working", mime_type="application/json",
                     description="The working memory of one user's session.")
    def user_session_working(user_id: str, session_id: str) -> dict[str, Any]:
        return working(user_id, session_id)

    @server.resource("reverie://memories/{memory_id}", mime_type="application/json",
                     description="One memory with every field.")
    def memory_resource(memory_id: str) -> dict[str, Any]:
        with _resource_errors():
            return mem.get(memory_id).to_dict()

    @server.resource("reverie://stats", mime_type="application/json",
                     description="Health check: counts and energy per layer and status.")
    def stats_resource() -> dict[str, Any]:
        with _resource_errors():
            return mem.stats(user_id=d.user_id)


def run_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout until the client closes the pipe.

    Every request is answered: a request line the SDK cannot read — text with lone surrogates (which
    JSON's ``\\ud800`` escapes can carry but no UTF-8 can), nesting deeper than its parser allows —
    would otherwise be dropped and its client would wait forever; it gets a JSON-RPC error (-32602)
    here instead. While serving, stray writes to the process's stdout go to stderr (the wire stays
    clean) and stdin reads see end of file."""
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


def screen_request(line: str) -> str | None:
    """The JSON-RPC error answering a request line the SDK cannot read (its id found with Python's own
    JSON parser), or ``None`` when the SDK can read the line or it carries no request id to answer."""
    import json

    from mcp import types as mcp_types

    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except Exception:  # the SDK would drop this line: answer it if it is a request
        pass
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None  # not JSON: no id to answer
    if not isinstance(message, dict) or "method" not in message:
        return None
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None  # a notification (or an unusable id): nothing to answer
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
        reason = "the request is malformed or nested too deep"
    except UnicodeEncodeError:
        reason = "it holds text with lone surrogates, which has no UTF-8 form; send valid Unicode text"
    except (ValueError, RecursionError):
        reason = "the request is malformed or nested too deep"
    error = {"code": -32602, "message": f"Invalid request: {reason}"}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}, ensure_ascii=True)


def run_http(server: MCPServer, *, port: int = 8765) -> None:
    """Serve streamable HTTP on 127.0.0.1:``port`` (0 = any free port; the URL goes to stderr)."""
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # connections queue from now on: the URL below is usable at once
    bound = sock.getsockname()[1]
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    userver = uvicorn.Server(config)
    sys.stderr.write(f"reverie MCP server listening on http://127.0.0.1:{bound}/mcp\n")
    sys.stderr.flush()
    anyio.run(lambda: userver.serve(sockets=[sock]))


__all__ = ["Defaults", "brief", "build_server", "history_dicts", "run_http", "run_stdio", "screen_request",
           "server_credential"]
