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
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, TypeVar

from pydantic import Field

from reverie.auth import FULL_ACCESS, Credential
from reverie.errors import InvalidInputError, MissingDependencyError, NotFoundError, ReverieError
from reverie.mcp_format import brief, compact_hits, compact_schema, friendly_argument_error, history_dicts, hit_dict
from reverie.mcp_stdio import run_stdio, screen_request
from reverie.scoped import ScopedMemory
from reverie.validation import describe_error

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from reverie.memory import Memory
    from reverie.model import MemoryRecord

SERVER_NAME = "reverie"
INSTRUCTIONS = """\
reverie is your long-term memory. Call `recall` with what the user is asking about before answering
questions that may depend on earlier conversations, and `remember` facts, preferences, decisions and
corrections worth keeping (one self-contained statement each). When a memory is wrong, `update` it
with the corrected text, or `invalidate` it with a reason when it simply stopped being true; `forget`
deletes for good and is only for explicit "forget this" requests. Ids may be shortened to any unique
prefix (recall shows short ones).
"""

#: the tools an agent needs in a conversation (``reverie mcp`` exposes these unless ``--tools`` says
#: otherwise): store, look up, put in the prompt, correct, retract, delete on request
DEFAULT_TOOLS: tuple[str, ...] = ("remember", "recall", "context", "update", "invalidate", "forget")
#: every tool, in the order they are listed; the rest are operator work (maintenance, inspection)
ALL_TOOLS: tuple[str, ...] = (
    *DEFAULT_TOOLS,
    "observe",
    "end_session",
    "feedback",
    "get",
    "history",
    "pin",
    "unpin",
    "promote",
    "demote",
    "reactivate",
    "undo_consolidation",
    "stats",
    "dream",
    "ingest_code",
    "topics",
    "documents",
)


@dataclass(frozen=True, slots=True)
class Hints:
    """MCP tool annotations: whether a tool only reads, may destroy, and may be repeated safely."""

    read_only: bool
    destructive: bool
    idempotent: bool


#: ``recall``, ``context`` and ``get`` change no memory's content or status; they do record the access
#: (which strengthens the memory), as any recall does
HINTS: dict[str, Hints] = {
    "remember": Hints(False, False, False),
    "recall": Hints(True, False, True),
    "context": Hints(True, False, True),
    "update": Hints(False, False, True),
    "invalidate": Hints(False, False, True),
    "forget": Hints(False, True, True),
    "observe": Hints(False, False, False),
    "end_session": Hints(False, False, True),
    "feedback": Hints(False, False, False),
    "get": Hints(True, False, True),
    "history": Hints(True, False, True),
    "pin": Hints(False, False, True),
    "unpin": Hints(False, False, True),
    "promote": Hints(False, False, False),
    "demote": Hints(False, False, False),
    "reactivate": Hints(False, False, True),
    "undo_consolidation": Hints(False, False, True),
    "stats": Hints(True, False, True),
    "dream": Hints(False, False, False),
    "ingest_code": Hints(False, False, True),
    "topics": Hints(True, False, True),
    "documents": Hints(True, False, True),
}

ToolFn = TypeVar("ToolFn", bound=Callable[..., Any])


class ToolDecorator(Protocol):
    """Registers a tool function (when the server offers it) and returns it unchanged."""

    def __call__(self, fn: ToolFn) -> ToolFn: ...


MemoryId = Annotated[str, Field(description="Id or unique prefix.")]
UserId = Annotated[str | None, Field(description="Whose memories.")]
AgentId = Annotated[str | None, Field(description="Agent scope (default: the server's).")]
SessionId = Annotated[str | None, Field(description="Session (default: the server's).")]
LayerName = Literal["working", "episodic", "semantic", "procedural", "codebase"]
#: who says what an agent remembers: the user (human), the agent's own inference (ai), the conversation
SourceName = Literal["human", "ai", "interaction"]
#: the write path's categories (what an LLM extraction or the classifier assigns)
CategoryName = Literal["preference", "fact", "decision", "correction", "plan", "entity"]
#: scope parameters not published in the tools' schemas: the agent and the session are the host's
#: settings (``--agent``, ``--session``), and a server locked to a user (``--user``) publishes no
#: ``user_id`` either. A call naming one is still accepted and checked against the server's scope.
HOST_SCOPE_PARAMS = ("agent_id", "session_id")


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


def parse_tools(spec: str | None) -> tuple[str, ...]:
    """``--tools``: ``default`` (the agent's set), ``all``, or comma-separated names and groups
    (``default,dream,stats``). Unknown names raise :class:`InvalidInputError` listing the known ones."""
    if spec is None or not spec.strip():
        return DEFAULT_TOOLS
    chosen: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        names = {"default": DEFAULT_TOOLS, "all": ALL_TOOLS}.get(part, (part,))
        for name in names:
            if name not in HINTS:
                raise InvalidInputError(f"unknown MCP tool {name!r}; choose from default, all, " + ", ".join(ALL_TOOLS))
            if name not in chosen:
                chosen.append(name)
    if not chosen:
        raise InvalidInputError("--tools names no tool")
    return tuple(n for n in ALL_TOOLS if n in chosen)


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


def _result(data: Mapping[str, Any], text: str | None = None) -> Any:
    """A tool answer: ``text`` (default: compact JSON) for the model, ``data`` as structured content."""
    from mcp.types import CallToolResult, TextContent

    shown = text if text is not None else json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return CallToolResult(content=[TextContent(type="text", text=shown)], structured_content=data)


def server_credential(defaults: Defaults) -> Credential:
    """The scope a server runs with: locked to ``--user`` (and ``--agent``) when a user is given,
    else full access."""
    if defaults.user_id is None:
        return FULL_ACCESS
    return Credential.scoped(defaults.user_id, defaults.agent_id, name="mcp --user")


def _make_server() -> Any:
    """``MCPServer`` whose tool calls check argument names first and report schema violations in plain
    words (``InvalidInputError: recall: 'query' is required …``)."""
    import difflib

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    class ReverieMCPServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            if tool is not None:
                accepted = list(tool.parameters.get("properties", {}))
                known = set(tool.fn_metadata.arg_model.model_fields)
                unknown = [a for a in arguments if a not in known]
                if unknown:
                    hints = []
                    for a in unknown:
                        close = difflib.get_close_matches(a, accepted, n=1)
                        hints.append(f"'{a}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
                    raise ToolError(
                        f"InvalidInputError: {name} has no argument {', '.join(hints)}. "
                        f"It takes: {', '.join(accepted)}."
                    )
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if tool is not None and isinstance(exc.__cause__, ValidationError):
                    accepted = list(tool.parameters.get("properties", {}))
                    raise ToolError(friendly_argument_error(name, exc.__cause__, accepted)) from exc.__cause__
                raise

    return ReverieMCPServer


def build_server(
    mem: Memory,
    defaults: Defaults | None = None,
    credential: Credential | None = None,
    tools: tuple[str, ...] | list[str] | None = None,
    code_roots: Sequence[str | os.PathLike[str]] | None = None,
) -> MCPServer:
    """An ``MCPServer`` whose tools and resources call ``mem`` within ``credential`` (default: see
    :func:`server_credential`). ``tools``: which tools to offer (default :data:`DEFAULT_TOOLS`; see
    :func:`parse_tools`). ``code_roots``: the directories ``ingest_code`` may read (``--code-root``);
    without them a server locked to a user reads no code, and a full-access one any path."""
    _require_sdk()
    from mcp.types import ToolAnnotations

    from reverie import __version__

    chosen = DEFAULT_TOOLS if tools is None else parse_tools(",".join(tools))
    d = defaults or Defaults()
    cred = credential if credential is not None else server_credential(d)
    sm = ScopedMemory(mem, cred, code_roots=code_roots)
    server: MCPServer = _make_server()(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(fn: ToolFn) -> ToolFn:
        name = fn.__name__
        if name in chosen:
            h = HINTS[name]
            server.add_tool(
                fn,
                description=" ".join((fn.__doc__ or "").split()),
                annotations=ToolAnnotations(
                    read_only_hint=h.read_only, destructive_hint=h.destructive, idempotent_hint=h.idempotent
                ),
                structured_output=False,
            )
        return fn

    _write_tools(tool, sm, d)
    _edit_tools(tool, sm, d)
    _lifecycle_tools(tool, sm)
    _recall_tools(tool, sm, d)
    _inspect_tools(tool, sm, d)
    _knowledge_tools(tool, sm, d)
    for registered in server._tool_manager.list_tools():
        hidden = HOST_SCOPE_PARAMS if cred.admin else (*HOST_SCOPE_PARAMS, "user_id")
        if registered.name in DEFAULT_TOOLS:  # operator tools keep every parameter
            for param in hidden:
                registered.parameters.get("properties", {}).pop(param, None)
        registered.parameters = compact_schema(registered.parameters)
    _resources(server, sm, d)
    return server


def _write_tools(tool: ToolDecorator, mem: ScopedMemory, d: Defaults) -> None:
    @tool
    def remember(
        content: Annotated[str, Field(description="One self-contained statement.")],
        when: Annotated[str | None, Field(description="ISO 8601 time it happened.")] = None,
        source: Annotated[SourceName | None, Field(description="Who says so.")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Any:
        """Store a fact, preference or decision. Answers CREATE, UPDATE, SUPERSEDE (replaced an older
        fact), REINFORCE or SKIP (known)."""
        with _tool_errors():
            res = mem.add(
                content,
                user_id=d.user(user_id),
                agent_id=d.agent(agent_id),
                session_id=d.session(session_id),
                when=when,
                source=source,
            )
            short = mem.memory.short_ids([i for i in (res.id, *res.ids) if i])
        data = res.to_dict()
        text = f"{res.action.value} {short.get(res.id, '') if res.id else ''}".strip() + f": {res.reason}"
        return _result(data, text)

    @tool
    def observe(
        message: Annotated[str, Field(description="One raw conversation turn, as said.")],
        role: Annotated[Literal["user", "assistant"], Field(description="Who said it.")] = "user",
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        when: Annotated[str | None, Field(description="ISO 8601 time of the turn (default: now).")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Free-form JSON metadata.")] = None,
        flush: Annotated[
            bool,
            Field(
                description="Store what the conversation's buffer holds now, this turn "
                "included, so that it can be recalled at once."
            ),
        ] = False,
    ) -> Any:
        """Feed one conversation turn to reverie's observer: it decides what (if anything) is worth
        remembering, buffers small talk and extracts facts. Returns what was written now; BUFFERED
        means the turn waits in the buffer and is NOT stored yet (flush=true stores it now)."""
        with _tool_errors():
            results = mem.observe(
                message,
                role=role,
                user_id=d.user(user_id),
                agent_id=d.agent(agent_id),
                session_id=d.session(session_id),
                when=when,
                metadata=metadata,
                flush=flush,
            )
        return _result({"results": [r.to_dict() for r in results]})


def _edit_tools(tool: ToolDecorator, mem: ScopedMemory, d: Defaults) -> None:
    @tool
    def end_session(
        session_id: SessionId = None,
        user_id: UserId = None,
    ) -> Any:
        """End a session: store what is still buffered, promote its strong working memories and clear
        its working memory. Returns a report."""
        sid = d.session(session_id)
        with _tool_errors():
            if sid is None:
                raise InvalidInputError("end_session needs a session_id (argument or the server's --session)")
            return _result(mem.end_session(sid, user_id=d.user(user_id)))

    @tool
    def update(
        memory_id: MemoryId,
        content: Annotated[str | None, Field(description="The corrected text.")] = None,
        reason: Annotated[str, Field(description="Why.")] = "",
    ) -> Any:
        """Correct a memory's text (the old text stays in its history)."""
        with _tool_errors():
            rec = mem.update(memory_id, content, reason=reason)
        return _result(brief(rec), f"updated {mem.memory.short_ids([rec.id])[rec.id]}: {rec.content}")

    @tool
    def forget(memory_id: MemoryId) -> Any:
        """Delete a memory for good; only when the user asks."""
        with _tool_errors():
            mem.forget(memory_id)
        return _result({"forgotten": memory_id}, f"forgotten: {memory_id}")


def _lifecycle_tools(tool: ToolDecorator, mem: ScopedMemory) -> None:
    def answer(rec: MemoryRecord, what: str) -> Any:
        return _result(brief(rec), f"{what} {mem.memory.short_ids([rec.id])[rec.id]}")

    @tool
    def invalidate(
        memory_id: MemoryId,
        reason: Annotated[str, Field(min_length=1, description="Why it is no longer true.")],
    ) -> Any:
        """Mark a memory no longer true (kept, not recalled)."""
        with _tool_errors():
            return answer(mem.invalidate(memory_id, reason), "invalidated")

    @tool
    def pin(memory_id: MemoryId) -> Any:
        """Pin a memory: immune to forgetting and demotion."""
        with _tool_errors():
            return answer(mem.pin(memory_id), "pinned")

    @tool
    def unpin(memory_id: MemoryId) -> Any:
        """Unpin a memory, so that the dream cycle may forget or demote it again."""
        with _tool_errors():
            return answer(mem.unpin(memory_id), "unpinned")

    @tool
    def reactivate(memory_id: MemoryId) -> Any:
        """Bring a forgotten (dormant or archived, cold) memory back into everyday recall."""
        with _tool_errors():
            return answer(mem.reactivate(memory_id), "reactivated")

    @tool
    def undo_consolidation(summary_id: MemoryId) -> Any:
        """Undo a dream consolidation: the originals return to everyday recall, the summary is invalidated."""
        with _tool_errors():
            return _result(mem.undo_consolidation(summary_id))

    @tool
    def promote(
        memory_id: MemoryId,
        layer: Annotated[
            LayerName | None, Field(description="Target layer; default: the next one (working → episodic → semantic).")
        ] = None,
    ) -> Any:
        """Move a memory up a layer (pinned memories may be promoted; immutable ones may not)."""
        with _tool_errors():
            return answer(mem.promote(memory_id, layer), "promoted")

    @tool
    def demote(memory_id: MemoryId) -> Any:
        """Move a memory down one layer (semantic → episodic → working). Pinned, flashbulb and immutable
        memories refuse."""
        with _tool_errors():
            return answer(mem.demote(memory_id), "demoted")

    @tool
    def feedback(
        memory_id: MemoryId,
        useful: Annotated[bool, Field(strict=True, description="true if the memory helped, false if it did not.")],
    ) -> Any:
        """Tell reverie whether a recalled memory was useful; this updates its utility."""
        with _tool_errors():
            rec = mem.feedback(memory_id, useful=useful)
        return _result({"id": rec.id, "utility": rec.utility})


def _recall_tools(tool: ToolDecorator, mem: ScopedMemory, d: Defaults) -> None:
    @tool
    def recall(
        query: Annotated[str, Field(description="What to look for.")],
        k: Annotated[int, Field(strict=True, ge=1, le=100, description="How many.")] = 5,
        category: Annotated[CategoryName | None, Field(description="Only this category.")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Any:
        """Memories relevant to the query, best first: id · date · relevance · text."""
        filters: dict[str, Any] = {}
        if category is not None:
            filters["category"] = category
        with _tool_errors():
            hits = mem.search(
                query,
                user_id=d.user(user_id),
                agent_id=d.agent(agent_id),
                session_id=d.session(session_id),
                k=k,
                filters=filters or None,
            )
            short = mem.memory.short_ids([h.memory.id for h in hits])
        results = [hit_dict(h) for h in hits]
        return _result({"results": results}, compact_hits(hits, short))

    @tool
    def context(
        query: Annotated[str, Field(description="What you are about to answer or do.")],
        budget_tokens: Annotated[int | None, Field(strict=True, ge=1, le=100_000, description="Token budget.")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Any:
        """The memories to put in your prompt, as one block within a token budget."""
        with _tool_errors():
            block = mem.context(
                query,
                user_id=d.user(user_id),
                agent_id=d.agent(agent_id),
                session_id=d.session(session_id),
                budget_tokens=budget_tokens,
            )
        data = {
            "text": block.text,
            "items": [dataclasses.asdict(i) for i in block.items],
            "skipped": block.skipped,
            "budget_tokens": block.budget_tokens,
            "used_tokens": block.used_tokens,
        }
        return _result(data, block.text or "no memories relevant enough to include")


def _inspect_tools(tool: ToolDecorator, mem: ScopedMemory, d: Defaults) -> None:
    @tool
    def get(memory_id: MemoryId) -> Any:
        """One memory with every field (strengths, provenance, validity). Counts as an access."""
        with _tool_errors():
            return _result(mem.get(memory_id).to_dict())

    @tool
    def history(memory_id: MemoryId) -> Any:
        """Every recorded transition of a memory (created, updated, promoted, invalidated, …), oldest first."""
        with _tool_errors():
            return _result({"id": memory_id, "events": history_dicts(mem.history(memory_id))})

    @tool
    def stats(
        user_id: Annotated[str | None, Field(description="Only this user's memories (default: all).")] = None,
    ) -> Any:
        """Health check: memory counts and energy per layer and status, and which users exist."""
        with _tool_errors():
            return _result(mem.served_stats(user_id=d.user(user_id)))

    @tool
    def dream(
        steps: Annotated[
            list[str] | None,
            Field(description="Step names to run (default: every enabled step: decay, promote, expire, prune, …)."),
        ] = None,
    ) -> Any:
        """Run the dream cycle now (decay, promotion, expiry, pruning …) and return what each step changed."""
        with _tool_errors():
            return _result(mem.dream(steps=steps))


def _knowledge_tools(tool: ToolDecorator, mem: ScopedMemory, d: Defaults) -> None:
    @tool
    def ingest_code(
        path: Annotated[
            str,
            Field(description="A source directory (or one file) on this machine, within the server's code roots."),
        ],
        user_id: Annotated[str | None, Field(description="Whose memory (default: the server's user).")] = None,
    ) -> Any:
        """Remember a code base: its file tree and each Python module's public classes, functions and methods
        (signature and first docstring line) become codebase-layer memories with their paths, found by recall.
        Run it again after changes: only what changed is updated, what disappeared is invalidated; unreadable
        files are skipped with the reason."""
        with _tool_errors():
            return _result(mem.ingest_code(path, user_id=d.user(user_id), agent_id=d.agent_id))

    @tool
    def topics(
        user_id: Annotated[str | None, Field(description="Whose memory (default: the server's user).")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="At most this many topics.")] = 30,
    ) -> Any:
        """What the memory is about: the topics of its conversations (sealed memory boxes) and the entities its
        memories name, each with how many memories mention it and when it was first and last seen."""
        with _tool_errors():
            index = mem.topic_index(user_id=d.user(user_id))
        return _result({**index, "topics": index["topics"][:limit]})

    @tool
    def documents(
        user_id: Annotated[str | None, Field(description="Whose memory (default: the server's user).")] = None,
    ) -> Any:
        """What the memory keeps about the user for reading: the behavioural profile (preferences, decisions,
        know-how, patterns — with a line cap), entity profiles, reflections, compression guidelines learned from
        past write decisions, and the topic index."""
        with _tool_errors():
            return _result(mem.documents(user_id=d.user(user_id)))


def _resources(server: MCPServer, mem: ScopedMemory, d: Defaults) -> None:
    def working(user_id: str | None, session_id: str) -> dict[str, Any]:
        with _resource_errors():
            recs = mem.working_memory(session_id, user_id=user_id, agent_id=d.agent_id)
        return {"user_id": user_id, "session_id": session_id, "memories": [brief(r) for r in recs]}

    def hot(user_id: str | None) -> dict[str, Any]:
        with _resource_errors():
            recs = mem.hot_tier(user_id=user_id, agent_id=d.agent_id)
        return {"user_id": user_id, "memories": [brief(r) for r in recs]}

    @server.resource(
        "reverie://hot",
        mime_type="application/json",
        description="The hot tier: proven memories always put in the context (server's default user).",
    )
    def hot_default() -> dict[str, Any]:
        return hot(d.user_id)

    @server.resource(
        "reverie://users/{user_id}/hot", mime_type="application/json", description="The hot tier of one user."
    )
    def hot_user(user_id: str) -> dict[str, Any]:
        return hot(user_id)

    @server.resource(
        "reverie://sessions/{session_id}/working",
        mime_type="application/json",
        description="The working memory of a session (server's default user).",
    )
    def session_working(session_id: str) -> dict[str, Any]:
        return working(d.user_id, session_id)

    @server.resource(
        "reverie://users/{user_id}/sessions/{session_id}/working",
        mime_type="application/json",
        description="The working memory of one user's session.",
    )
    def user_session_working(user_id: str, session_id: str) -> dict[str, Any]:
        return working(user_id, session_id)

    @server.resource(
        "reverie://memories/{memory_id}", mime_type="application/json", description="One memory with every field."
    )
    def memory_resource(memory_id: str) -> dict[str, Any]:
        with _resource_errors():
            return mem.get(memory_id).to_dict()

    @server.resource(
        "reverie://stats",
        mime_type="application/json",
        description="Health check: counts and energy per layer and status.",
    )
    def stats_resource() -> dict[str, Any]:
        with _resource_errors():
            return mem.served_stats(user_id=d.user_id)


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


__all__ = [
    "ALL_TOOLS",
    "DEFAULT_TOOLS",
    "HINTS",
    "Defaults",
    "brief",
    "build_server",
    "compact_hits",
    "history_dicts",
    "parse_tools",
    "run_http",
    "run_stdio",
    "screen_request",
    "server_credential",
]
