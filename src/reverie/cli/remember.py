"""Commands that store memories: ``init``, ``add``, ``observe``, ``flush``, ``update``."""

from __future__ import annotations

from typing import Annotated

import typer
import typer.core

from reverie.cli.common import (
    AgentOpt,
    DbOpt,
    IdArg,
    JsonOpt,
    SessionOpt,
    UserOpt,
    _fail,
    _memory,
    _print_json,
    _read_metadata,
    _read_stdin,
    _result_line,
    _say,
    _short,
    app,
)
from reverie.errors import InvalidInputError


@app.command()
def init(db: DbOpt = None) -> None:
    """Create (or migrate) the memory database and print where it is."""
    with _memory(db, create=True) as mem:
        info = mem.info()
        _say(
            f"reverie memory ready: {mem.target} (backend {info.backend}, schema v{info.schema_version}, "
            f"embedder {mem.embedder.name})"
        )


@app.command()
def add(
    content: Annotated[str, typer.Argument(metavar="TEXT", help="The text to remember ('-' reads stdin).")],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    metadata: Annotated[
        str | None, typer.Option("--metadata", "-m", metavar="JSON", help="JSON object of metadata.")
    ] = None,
    when: Annotated[str | None, typer.Option(metavar="TIME", help="ISO 8601 time the content refers to.")] = None,
    source: Annotated[
        str | None, typer.Option(metavar="SOURCE", help="human, ai, interaction, ingest, code_scan or dream.")
    ] = None,
    verbatim: Annotated[bool, typer.Option("--verbatim", help="Store as is, without the write path.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remember one piece of content (the write path decides: create, update, supersede, reinforce
    or skip a duplicate)."""
    text = _read_stdin("TEXT") if content == "-" else content
    meta = _read_metadata(metadata)
    with _memory(db, create=True) as mem:
        res = mem.add(
            text,
            user_id=user,
            agent_id=agent,
            session_id=session,
            metadata=meta,
            when=when,
            source=source,
            infer=not verbatim,
        )
        if as_json:
            _print_json(res.to_dict())
        else:
            _say(_result_line(res, {}))


@app.command()
def observe(
    message: Annotated[str, typer.Argument(metavar="MESSAGE", help="One conversation turn, as said ('-': stdin).")],
    db: DbOpt = None,
    role: Annotated[str, typer.Option(metavar="ROLE", help="Who said it: user or assistant.")] = "user",
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    flush: Annotated[
        bool, typer.Option("--flush", help="Store what the conversation's buffer holds now, this turn included.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Feed one conversation turn to the observer: it keeps what is worth remembering and extracts
    facts. A kept turn may wait in the conversation's buffer (BUFFERED: not stored yet) until the
    buffer fills, the session ends, or --flush / `reverie flush`."""
    text = _read_stdin("MESSAGE") if message == "-" else message
    with _memory(db, create=True) as mem:
        results = mem.observe(text, role=role, user_id=user, agent_id=agent, session_id=session, flush=flush)
        if as_json:
            _print_json([r.to_dict() for r in results])
            return
        for res in results:
            _say(_result_line(res, {}))


@app.command()
def flush(db: DbOpt = None, user: UserOpt = None, session: SessionOpt = None, as_json: JsonOpt = False) -> None:
    """Store now the turns `observe` holds in a conversation's buffer (so they can be recalled)."""
    with _memory(db) as mem:
        waiting = mem.buffered(user_id=user, session_id=session)
        results = mem.flush(user_id=user, session_id=session)
        if as_json:
            _print_json([r.to_dict() for r in results])
            return
        if not waiting:
            _say("nothing was waiting in this conversation's buffer")
        for res in results:
            _say(_result_line(res, {}))


@app.command()
def update(
    memory_id: IdArg,
    content: Annotated[str | None, typer.Argument(metavar="TEXT", help="New content (re-embedded).")] = None,
    db: DbOpt = None,
    metadata: Annotated[
        str | None, typer.Option("--metadata", "-m", metavar="JSON", help="Replacement metadata (JSON object).")
    ] = None,
    category: Annotated[str | None, typer.Option(metavar="CATEGORY", help="New category.")] = None,
    importance: Annotated[float | None, typer.Option(metavar="0..1", help="New importance.")] = None,
    reason: Annotated[str, typer.Option(metavar="TEXT", help="Why (kept in the history).")] = "",
    as_json: JsonOpt = False,
) -> None:
    """Edit a memory: its content, metadata, category or importance (the change is kept in its history)."""
    meta = _read_metadata(metadata)
    if content is None and meta is None and category is None and importance is None:
        _fail(InvalidInputError("nothing to change: give new TEXT, --metadata, --category or --importance"))
    with _memory(db) as mem:
        rec = mem.update(memory_id, content, metadata=meta, category=category, importance=importance, reason=reason)
        if as_json:
            _print_json(rec.to_dict())
            return
        _say(f"updated {rec.id}: {_short(rec.content, 100)}")
