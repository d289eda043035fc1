"""The ``reverie`` command line: a thin adapter over :class:`reverie.Memory`.

Every command opens the memory at ``--db`` (or ``REVERIE_TARGET``, or the default SQLite file
under the user's data directory), calls one method, prints the result for a person (``--json``
for programs), and turns reverie errors into a one-line message and exit code 1.

Only ``init``, ``add``, ``observe``, ``import`` (and the servers) create a database; every other
command refuses a database that does not exist, and a ``--db`` in a directory that does not exist
is an error, never created. Ids are shown in a short form that is unique among what is shown and in
the store; every command that takes an id takes any unique prefix of one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from reverie.errors import InvalidInputError, NotFoundError, ReverieError

app = typer.Typer(
    name="reverie",
    help="reverie — long-term memory for AI agents: remember, recall, consolidate, forget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help is plain text: "reverie[plot]" stays as written, flags show no "<bool>"
)
console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        "-d",
        envvar="REVERIE_TARGET",
        metavar="PATH|URL",
        help="SQLite file or postgresql:// URL (default: memory.db in the user's data directory).",
    ),
]
UserOpt = Annotated[
    str | None,
    typer.Option("--user", "-u", metavar="NAME", help="The user whose memories these are (the isolation boundary)."),
]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", metavar="NAME", help="Narrow to one agent.")]
SessionOpt = Annotated[str | None, typer.Option("--session", "-s", metavar="ID", help="The conversation session.")]
AllUsersOpt = Annotated[bool, typer.Option("--all-users", help="Every user's memories.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (every field) instead of text.")]
IdArg = Annotated[str, typer.Argument(metavar="ID", help="A memory id, or any prefix of one that no other id shares.")]
LayerOpt = Annotated[
    str | None,
    typer.Option(metavar="LAYER", help="Only this layer: working, episodic, semantic, procedural, codebase."),
]
StatusOpt = Annotated[
    str | None,
    typer.Option(
        metavar="STATUS",
        help="Only this status: active (default), superseded, dormant, archived, expired, invalidated.",
    ),
]
CategoryOpt = Annotated[str | None, typer.Option(metavar="CATEGORY", help="Only this category (fact, preference …).")]

#: write outcomes that store a new memory (a SUPERSEDE stores the new fact and keeps the old one)
STORED_ACTIONS = ("CREATE", "SUPERSEDE")
_POSTGRES = ("postgresql://", "postgres://")


def _version(value: bool) -> None:
    if value:
        from reverie import __version__

        console.print(f"reverie {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """reverie — long-term memory for AI agents: remember, recall, consolidate, forget."""


def _target(db: str | None, *, create: bool) -> str | Path:
    """Where the memory is. A command that may not create one refuses a missing database; none
    creates a missing directory named by --db (the default location is created on first write)."""
    if db is not None and db.startswith(_POSTGRES):
        return db
    from reverie.config import Settings
    from reverie.memory import default_target

    explicit = db is not None
    path = Path(db).expanduser() if db is not None else default_target(Settings.load())
    if path.is_dir():
        raise InvalidInputError(f"{path} is a directory; --db takes a database file (e.g. {path / 'memory.db'})")
    if not create and not path.exists():
        where = f" --db {path}" if explicit else ""
        raise NotFoundError(
            f"no memory database at {path}. `reverie init{where}` creates one (so do add, observe and import)"
        )
    if explicit and not path.parent.is_dir():
        raise InvalidInputError(
            f"the directory {path.parent} does not exist; reverie does not create it "
            "(check the path, or create the directory first)"
        )
    return path


@contextmanager
def _memory(db: str | None, *, create: bool = False) -> Iterator[Any]:
    from reverie.memory import Memory

    try:
        mem = Memory(_target(db, create=create))
    except ReverieError as exc:
        _fail(exc)
    try:
        yield mem
    except ReverieError as exc:
        _fail(exc)
    finally:
        mem.close()


def _fail(exc: BaseException) -> None:
    err_console.print(f"[red]error[/red] ({type(exc).__name__}): {escape(str(exc))}")
    raise typer.Exit(1)


def _say(text: str) -> None:
    """Print text that may hold brackets (memory content, ids): never read as markup."""
    console.print(text, markup=False, soft_wrap=True)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _filters(
    layer: str | None = None, status: str | None = None, category: str | None = None, session: str | None = None
) -> dict[str, Any] | None:
    out = {
        k: v for k, v in (("layer", layer), ("status", status), ("category", category), ("session_id", session)) if v
    }
    return out or None


def _read_metadata(metadata: str | None) -> Any:
    if not metadata:
        return None
    try:
        return json.loads(metadata)
    except json.JSONDecodeError as exc:
        _fail(InvalidInputError(f"--metadata is not valid JSON: {exc.msg}"))
    return None  # pragma: no cover - _fail raises


def _result_line(res: Any, short: dict[str, str]) -> str:
    """One write outcome for a person: what happened, to which memory, why."""
    action = res.action.value
    if res.id is None:
        return f"{action}  {res.reason}"
    return f"{action} {short.get(res.id, res.id)}  {res.reason}"


# -- remember -------------------------------------------------------------------------------------


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
    text = sys.stdin.read() if content == "-" else content
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
    text = sys.stdin.read() if message == "-" else message
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


# -- recall ---------------------------------------------------------------------------------------

#: what a person calls each retrieval channel
_CHANNEL_WORDS = {"vector": "meaning", "text": "words", "graph": "a linked memory"}


def why(hit: Any) -> str:
    """One line of why a hit was returned: its score and the channels (with ranks) that found it."""
    explain = hit.explain
    found = []
    for name, ch in explain.get("channels", {}).items():
        word = _CHANNEL_WORDS.get(name, name)
        rank = ch.get("rank") if isinstance(ch, dict) else None
        found.append(f"{word} #{rank}" if rank else word)
    parts = [f"score {hit.score:.3f}"]
    if found:
        parts.append("found by " + " and ".join(found))
    stage = explain.get("stage")
    if stage and stage != "hybrid":
        parts.append(f"stage {stage}")
    return " · ".join(parts)


def format_explain(explain: dict[str, Any]) -> list[str]:
    """The whole explanation: the admitting stage and intent, one line per channel ("vector #1
    similarity=0.69"), the score terms with their weights, boosts, multipliers and the MMR step, then
    the final score."""
    lines = [f"stage: {explain.get('stage', '?')}" + (f" · intent {explain['intent']}" if "intent" in explain else "")]
    for name, ch in explain.get("channels", {}).items():
        rest = " ".join(f"{k}={_fmt(v)}" for k, v in ch.items() if k != "rank")
        lines.append(f"{name} #{ch.get('rank', '?')} {rest}".rstrip())
    terms, weights = explain.get("terms", {}), explain.get("weights", {})
    if terms:
        lines.append("terms: " + " ".join(f"{k}={_fmt(v)}×{_fmt(weights.get(k, ''))}" for k, v in terms.items()))
    for key in ("utility", "sort", "boosts", "multipliers", "mmr"):
        value = explain.get(key)
        if value:
            lines.append(f"{key}: " + " ".join(f"{k}={_fmt(v)}" for k, v in value.items()))
    known = {
        "stage",
        "intent",
        "channels",
        "terms",
        "weights",
        "utility",
        "sort",
        "boosts",
        "multipliers",
        "mmr",
        "score",
        "composite",
        "rrf",
    }
    for key, value in explain.items():
        if key not in known:
            lines.append(f"{key}: {_fmt(value)}")
    if "rrf" in explain:
        lines.append(f"rrf: k={explain['rrf'].get('k')} score={_fmt(explain['rrf'].get('score'))}")
    if "score" in explain:
        lines.append(f"score: {_fmt(explain['score'])}")
    return lines


def print_hits(
    hits: list[Any], short: dict[str, str], *, explain: bool, show_user: bool = False, width: int = 160
) -> None:
    """Hits in rank order: the memory, then one line of why (or, with ``explain``, every term)."""
    for i, h in enumerate(hits, start=1):
        _say(f"{i}. {_short(h.memory.content, width)}")
        who = f" · user {h.memory.user_id}" if show_user else ""
        _say(f"   {why(h)} · id {short.get(h.memory.id, h.memory.id)}{who}")
        if explain:
            for line in format_explain(h.explain):
                _say(f"     {line}")


def _nothing_found(mem: Any, user: str | None, query: str) -> None:
    """An empty answer that says what was searched and what the store holds."""
    users = mem.users(limit=11)
    here = next((n for u, n in users if u == user), 0)
    scope = f"user {user!r}" if user is not None else "memories without a user"
    if here == 0 and users:
        names = ", ".join(f"{u if u is not None else '(no user)'} ({n})" for u, n in users[:10])
        _say(f"no memories for {scope}; memories are stored for: {names}")
    else:
        _say(f"no memory matches {query!r} among the {here} memories of {scope}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to recall.")],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    all_users: AllUsersOpt = False,
    session: Annotated[
        str | None, typer.Option("--session", "-s", metavar="ID", help="Only memories of this session.")
    ] = None,
    layer: LayerOpt = None,
    status: StatusOpt = None,
    category: CategoryOpt = None,
    deep: Annotated[bool, typer.Option("--deep", help="Search the cold store too (deep recall).")] = False,
    k: Annotated[int, typer.Option("--k", "-k", metavar="N", help="How many results.")] = 10,
    explain: Annotated[bool, typer.Option("--explain", "-e", help="Show how each score was made.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Recall the memories most relevant to QUERY, best first, each with one line of why."""
    with _memory(db) as mem:
        hits = mem.search(
            query,
            user_id=user,
            agent_id=agent,
            k=k,
            deep=deep,
            all_users=all_users,
            filters=_filters(layer, status, category, session),
        )
        if as_json:
            _print_json([h.to_dict() for h in hits])
            return
        if not hits:
            if not all_users:
                _nothing_found(mem, user, query)
            else:
                _say(f"no memory of any user matches {query!r}")
            return
        print_hits(hits, mem.short_ids([h.memory.id for h in hits]), explain=explain, show_user=all_users)


@app.command()
def context(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What the agent is about to answer.")],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    budget: Annotated[int | None, typer.Option(metavar="TOKENS", help="Token budget of the block.")] = None,
    k: Annotated[int, typer.Option("--k", "-k", metavar="N", help="How many memories to consider.")] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Print the memory block an agent would put in its prompt for QUERY (working memory, the hot
    tier, then retrieved memories by confidence, within the token budget)."""
    with _memory(db) as mem:
        block = mem.context(query, user_id=user, agent_id=agent, session_id=session, budget_tokens=budget, k=k)
        if as_json:
            _print_json(
                {
                    "text": block.text,
                    "used_tokens": block.used_tokens,
                    "budget_tokens": block.budget_tokens,
                    "items": [{"id": i.id, "section": i.section} for i in block.items],
                    "skipped": block.skipped,
                }
            )
            return
        _say(block.text or "(no memory is confident enough to inject)")
        _say(
            f"-- {len(block.items)} memories, {block.used_tokens} of {block.budget_tokens} tokens; "
            f"{len(block.skipped)} left out"
        )


_GET_FIELDS = (
    "user_id",
    "agent_id",
    "session_id",
    "layer",
    "status",
    "store",
    "category",
    "importance",
    "utility",
    "access_count",
    "pinned",
    "created_at",
    "valid_from",
    "valid_until",
)


@app.command()
def get(
    memory_id: IdArg,
    db: DbOpt = None,
    peek: Annotated[
        bool, typer.Option("--peek", help="Look without counting a recall (no access is recorded).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print one memory: its content and main fields (--json: every field). Reading it counts as a
    recall, which strengthens it, unless --peek."""
    with _memory(db) as mem:
        rec = mem.peek(memory_id) if peek else mem.get(memory_id)
        if as_json:
            _print_json(rec.to_dict())
            return
        _say(rec.content)
        _say(f"id {rec.id}")
        for name in _GET_FIELDS:
            value = getattr(rec, name)
            if value is None or value == "" or value is False:
                continue
            value = getattr(value, "value", value)
            if hasattr(value, "isoformat"):
                value = value.isoformat(timespec="seconds")
            _say(f"  {name:<13} {_fmt(value)}")
        if rec.metadata:
            _say(f"  {'metadata':<13} {json.dumps(rec.metadata, ensure_ascii=False)}")
        _say(
            "(--json for every field; `reverie show ID` for its strengths)"
            + ("" if peek else "; this read counted as a recall (--peek does not)")
        )


@app.command()
def show(
    memory_id: IdArg,
    db: DbOpt = None,
    explain: Annotated[
        bool, typer.Option("--explain", "-e", help="Every strength value with its formula and terms.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """A memory's strengths now, and which of them decides its forgetting (no recall is counted)."""
    with _memory(db) as mem:
        rec = mem.peek(memory_id)
        data = mem.explain_strength(rec.id)
        if as_json:
            _print_json(data)
            return
        _say(_short(rec.content, 300))
        _say(
            f"id {rec.id} · {rec.layer.value} · {rec.status.value} · {rec.store.value} store · "
            f"accessed {rec.access_count}×" + (" · pinned" if rec.pinned else "")
        )
        if explain:
            table = Table("value", "now", "formula", "terms")
            for name, item in data.items():
                if isinstance(item, dict) and "value" in item:
                    terms = item.get("terms", {})
                    table.add_row(
                        name,
                        _fmt(item["value"]),
                        escape(str(item.get("formula", ""))),
                        escape(", ".join(f"{k}={_fmt(v)}" for k, v in terms.items())),
                    )
                else:
                    table.add_row(name, _fmt(item), "", "")
            console.print(table)
            return
        for line in _forgetting_lines(mem, rec, data):
            _say(line)
        _say("(`reverie show ID --explain`: every strength value with its formula)")


def _value(data: dict[str, Any], name: str) -> Any:
    item = data.get(name)
    return item.get("value") if isinstance(item, dict) else item


def _forgetting_lines(mem: Any, rec: Any, data: dict[str, Any]) -> list[str]:
    """The values the dream cycle acts on, each with the rule it feeds, in the user's words."""
    dyn, lc = mem.settings.dynamics, mem.settings.dream.lifecycle
    pc, fc = dyn.promotion, dyn.fsrs
    mode = dyn.retention.mode
    lines = ["what decides its forgetting (the dream cycle):"]
    rows = [
        (
            "retention",
            _value(data, "retention"),
            f"{mode} curve (the configured one): archived to cold storage when idle > {pc.archive_age_days:g} days "
            f"with retention < {pc.archive_retention:g}, importance < {pc.archive_importance:g} and "
            f"< {pc.archive_accesses} accesses",
        ),
        (
            "consolidation",
            _value(data, "fading_retention"),
            f"fading curve of consolidation: at its floor for {lc.cold_migration_days:g} days → cold storage; "
            "fading memories are merged into summaries (undo-consolidation restores them)",
        ),
        (
            "retrievability",
            _value(data, "retrievability"),
            f"FSRS-6 recall probability: rehearsed by the dream cycle below {fc.rehearsal_threshold:g}",
        ),
        (
            "utility",
            _value(data, "utility"),
            f"helpfulness (feedback): dormant below {lc.utility_floor:g} "
            f"after {lc.utility_floor_idle_days:g} idle days",
        ),
        ("importance", _value(data, "importance"), "raises every threshold above; stored when written"),
    ]
    for name, value, rule in rows:
        lines.append(f"  {name:<15}{_fmt(value):>8}  {rule}")
    protection = []
    if rec.pinned or rec.immutable:
        protection.append("pinned" if rec.pinned else "immutable")
    if rec.flashbulb:
        protection.append("flashbulb")
    if _value(data, "min_retention") is True:
        protection.append(f"category {rec.category!r} is within its minimum retention")
    lines.append("  protected      " + (", ".join(protection) if protection else "no (forgetting applies)"))
    promotion = _value(data, "promotion")
    if promotion:
        lines.append(f"  next move      {promotion}")
    return lines


@app.command("list")
def list_cmd(
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    all_users: AllUsersOpt = False,
    session: Annotated[
        str | None, typer.Option("--session", "-s", metavar="ID", help="Only memories of this session.")
    ] = None,
    layer: LayerOpt = None,
    status: StatusOpt = None,
    category: CategoryOpt = None,
    where: Annotated[
        str,
        typer.Option(
            "--store",
            metavar="STORE",
            help="hot (searched by default), cold (forgotten and consolidated memories) or all.",
        ),
    ] = "hot",
    limit: Annotated[int, typer.Option(metavar="N", help="How many.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List memories, newest first (no recall is counted)."""
    if where not in ("hot", "cold", "all"):
        _fail(InvalidInputError("--store must be hot, cold or all"))
    filters = _filters(layer, status, category, session) or {}
    filters["store"] = ["hot", "cold"] if where == "all" else [where]
    with _memory(db) as mem:
        recs = mem.list(user_id=user, agent_id=agent, all_users=all_users, limit=limit, filters=filters)
        if as_json:
            _print_json([r.to_dict() for r in recs])
            return
        if not recs:
            _say("no memories here" + ("" if all_users else f" for {'user ' + repr(user) if user else 'no user'}"))
            return
        short = mem.short_ids([r.id for r in recs])
        width = max(len(v) for v in short.values())
        for r in recs:  # one line each: the short id, where it is in its life, the content
            who = f"{r.user_id or '(no user)'}: " if all_users else ""
            head = f"{short[r.id]:<{width}}  {r.layer.value:<9} {r.status.value:<11} {r.created_at:%Y-%m-%d}  {who}"
            _say(head + _short(r.content, max(30, console.width - len(head) - 1)))


@app.command()
def users(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """The users with memories in this store, and how many each has."""
    with _memory(db) as mem:
        rows = mem.users()
        if as_json:
            _print_json([{"user_id": u, "memories": n} for u, n in rows])
            return
        for u, n in rows:
            _say(f"{n:>8}  {u if u is not None else '(no user)'}")
        if not rows:
            _say("no memories yet")


@app.command()
def history(memory_id: IdArg, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Every recorded transition of a memory, oldest first."""
    with _memory(db) as mem:
        events = mem.history(memory_id)
        if as_json:
            _print_json(
                [
                    {"at": e.at.isoformat(), "event": e.event, "reason": e.reason, "actor": e.actor, "data": e.data}
                    for e in events
                ]
            )
            return
        table = Table("at", "event", "actor", "reason")
        for e in events:
            table.add_row(e.at.isoformat(timespec="seconds"), e.event, e.actor, escape(_short(e.reason, 60)))
        console.print(table)


@app.command()
def stats(db: DbOpt = None, user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """Health check: counts and energy per layer and status."""
    with _memory(db) as mem:
        data = mem.stats(user_id=user)
        if as_json:
            _print_json(data)
            return
        _say(f"{data['total']} memories in {data['target']} ({data['backend']}, {data['embedder']})")
        table = Table("layer", "status", "count", "energy avg", "min", "max")
        for r in data["rows"]:
            table.add_row(
                r["layer"],
                r["status"],
                str(r["count"]),
                f"{r['energy_avg']:.3f}",
                f"{r['energy_min']:.3f}",
                f"{r['energy_max']:.3f}",
            )
        console.print(table)


# -- change ---------------------------------------------------------------------------------------


@app.command()
def pin(memory_id: IdArg, db: DbOpt = None) -> None:
    """Pin a memory (immune to forgetting and demotion)."""
    with _memory(db) as mem:
        rec = mem.pin(memory_id)
        _say(f"pinned {rec.id}")


@app.command()
def unpin(memory_id: IdArg, db: DbOpt = None) -> None:
    """Unpin a memory (forgetting and demotion apply again)."""
    with _memory(db) as mem:
        rec = mem.unpin(memory_id)
        _say(f"unpinned {rec.id}")


@app.command()
def promote(
    memory_id: IdArg,
    db: DbOpt = None,
    layer: Annotated[
        str | None, typer.Option(metavar="LAYER", help="Target layer (default: one up: working → episodic → semantic).")
    ] = None,
) -> None:
    """Move a memory up a layer (it keeps its id; the move is kept in its history)."""
    with _memory(db) as mem:
        before = mem.peek(memory_id).layer.value
        rec = mem.promote(memory_id, layer)
        _say(f"promoted {rec.id}: {before} → {rec.layer.value}")


@app.command()
def demote(memory_id: IdArg, db: DbOpt = None) -> None:
    """Move a memory down a layer (semantic → episodic → working); pinned memories refuse."""
    with _memory(db) as mem:
        before = mem.peek(memory_id).layer.value
        rec = mem.demote(memory_id)
        _say(f"demoted {rec.id}: {before} → {rec.layer.value}")


@app.command()
def reactivate(memory_id: IdArg, db: DbOpt = None) -> None:
    """Bring a forgotten (dormant or archived, cold) memory back to the hot store as active."""
    with _memory(db) as mem:
        rec = mem.reactivate(memory_id)
        _say(f"reactivated {rec.id} ({rec.status.value}, {rec.store.value})")


@app.command("undo-consolidation")
def undo_consolidation(summary_id: IdArg, db: DbOpt = None) -> None:
    """Undo a dream consolidation: the originals go back to hot, the summary is invalidated."""
    with _memory(db) as mem:
        result = mem.undo_consolidation(summary_id)
        _say(f"restored {len(result['restored'])} original(s); summary {result['summary_id']} invalidated")


@app.command()
def invalidate(
    memory_id: IdArg,
    reason: Annotated[str, typer.Option(metavar="TEXT", help="Why it is no longer true.")],
    db: DbOpt = None,
) -> None:
    """Mark a memory as no longer true (kept, never deleted)."""
    with _memory(db) as mem:
        rec = mem.invalidate(memory_id, reason)
        _say(f"invalidated {rec.id}")


@app.command()
def forget(
    memory_id: IdArg,
    db: DbOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a memory for good (an explicit "forget this" request; logged)."""
    with _memory(db) as mem:
        rec = mem.peek(memory_id)
        if not yes and not typer.confirm(f"Permanently delete {rec.id} ({_short(rec.content, 60)})?"):
            raise typer.Exit(1)
        mem.forget(rec.id)
        _say(f"forgot {rec.id}")


@app.command()
def backup(
    dest: Annotated[Path, typer.Argument(metavar="FILE", help="The new backup file (never overwritten).")],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Back up a live SQLite memory to FILE while agents keep using it (SQLite's online-backup API: a
    consistent copy of every write committed before it began, checked before it is kept). Restore by
    stopping the servers and putting the file in the database's place. PostgreSQL: use pg_dump."""
    with _memory(db) as mem:
        report = mem.backup(dest)
    if as_json:
        _print_json(report)
        return
    _say(
        f"backed up {report['memories']} memories to {report['path']} ({report['bytes']:,} bytes, integrity "
        f"{report['integrity']}, {report['seconds']} s)"
    )


@app.command("forget-user")
def forget_user(
    user: Annotated[str, typer.Argument(metavar="USER", help="The user_id whose memories are erased.")],
    db: DbOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only count what would be erased.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Erase everything of one user (the right to be forgotten): every memory in any status, its index
    entries, history and access log, the user's memory boxes, clusters and unsaved conversation turns.
    Other users are untouched. Logged (counts only, never a text). Try --dry-run first."""
    with _memory(db) as mem:
        if not dry_run and not yes:
            counted = mem.forget_user(user, dry_run=True)
            if not typer.confirm(
                f"Permanently erase {counted['memories']} memories and everything else of user {user!r}?"
            ):
                raise typer.Exit(1)
        report = mem.forget_user(user, dry_run=dry_run)
        if as_json:
            _print_json(report)
            return
        verb = "would erase" if dry_run else "erased"
        _say(
            f"{verb} {report['memories']} memories, {report['boxes']} memory boxes, {report['clusters']} clusters "
            f"and {report['state_entries']} buffers/counters of user {user}"
        )


@app.command()
def feedback(
    memory_id: IdArg,
    useful: Annotated[bool, typer.Option("--useful/--not-useful", help="Did it help?")],
    db: DbOpt = None,
) -> None:
    """Tell reverie whether a memory helped (updates its utility)."""
    with _memory(db) as mem:
        rec = mem.feedback(memory_id, useful=useful)
        _say(f"utility of {rec.id} is now {rec.utility:.3f}")


# -- maintenance ----------------------------------------------------------------------------------


@app.command()
def dream(
    db: DbOpt = None,
    steps: Annotated[
        str | None, typer.Option(metavar="NAMES", help="Comma-separated step names to run (default: all enabled).")
    ] = None,
    user: UserOpt = None,
    every: Annotated[
        str | None,
        typer.Option(
            "--every",
            metavar="DURATION",
            help="Keep running on a schedule: 30s, 15m, 1h, 1d, 1h30m … Stop with Ctrl-C or SIGTERM "
            "(it finishes the current run; a second signal aborts it, leaving the store consistent).",
        ),
    ] = None,
    max_runs: Annotated[
        int | None,
        typer.Option(
            "--max-runs", min=1, metavar="N", help="With --every: stop after N full cycles (or N runs of --steps)."
        ),
    ] = None,
    no_jobs: Annotated[
        bool,
        typer.Option("--no-jobs", help="With --every: only the full cycle, without the maintenance jobs in between."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the dream cycle (decay, promotion, expiry, consolidation, forgetting …) and print, per step,
    what it changed. Many processes may dream at once: each claims the memories it works on.

    With --every the full cycle runs every DURATION and, in between, each maintenance job on its own
    interval (setting dream.schedule.jobs: promotion every 10 minutes, decay and clustering every 60);
    with --steps only those steps run, every DURATION."""
    names = [s.strip() for s in steps.split(",") if s.strip()] if steps else None
    interval = _interval(every, max_runs)
    with _memory(db) as mem:

        def once() -> dict[str, Any]:
            report: dict[str, Any] = (
                mem.dream(steps=names, user_id=user) if user is not None else mem.dream(steps=names)
            )
            return report

        if interval is None:
            _print_run_report(once(), as_json=as_json, title="dream cycle")
            return
        if names is None and not no_jobs and mem.settings.dream.schedule.jobs:
            _run_jobs(mem, interval, user=user, max_runs=max_runs, as_json=as_json)
            return
        _run_scheduled(mem, once, interval, max_runs=max_runs, as_json=as_json, title="dream cycle")


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if abs(size) < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


@app.command()
def compact(
    db: DbOpt = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            "-u",
            metavar="NAME",
            help="Deduplicate only this user's memories (the indexes are optimised for everyone).",
        ),
    ] = None,
    no_dedup: Annotated[
        bool, typer.Option("--no-dedup", help="Only optimise the store; keep duplicate memories as they are.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Deduplicate memories and optimise the store, then say what it reclaimed. Identical active memories
    of one user and agent keep one copy (the others are superseded, kept in cold storage); SQLite:
    VACUUM, ANALYZE, full-text optimisation, vector index rebuild; PostgreSQL: VACUUM ANALYZE and
    REINDEX CONCURRENTLY."""
    with _memory(db) as mem:
        report = mem.compact(dedup=not no_dedup, user_id=user)
    if as_json:
        _print_json(report)
        return
    st = report["store"]
    if "dedup" in report:
        d = report["dedup"]
        _say(f"dedup: {d['superseded']} duplicate memories superseded in {d['groups']} group(s)")
    _say(
        f"store ({st['backend']}): {_bytes(st['bytes_before'])} → {_bytes(st['bytes_after'])}, reclaimed "
        f"{_bytes(st['reclaimed_bytes'])} in {st['seconds']:.1f} s"
    )
    rows = {k: v for k, v in st["rows_removed"].items() if v}
    if rows or report.get("claims_removed"):
        rows = {**rows, **({"claims": report["claims_removed"]} if report.get("claims_removed") else {})}
        _say("rows removed: " + ", ".join(f"{k} {v}" for k, v in rows.items()))
    removed = {k: v for k, v in st["index_entries_removed"].items() if v}
    _say(
        "index entries: "
        + ", ".join(
            f"{k} {st['index_entries_before'][k]} → {st['index_entries_after'].get(k, 0)}"
            for k in st["index_entries_before"]
        )
        + (f" ({', '.join(f'{k} −{v}' for k, v in removed.items())})" if removed else "")
    )
    _say("done: " + "; ".join(st["actions"]))


@app.command()
def maintain(
    db: DbOpt = None,
    user: UserOpt = None,
    every: Annotated[
        str | None,
        typer.Option(
            "--cycle-every",
            metavar="DURATION",
            help="Interval of the full dream cycle (default: the setting dream.schedule.cycle_every_hours).",
        ),
    ] = None,
    status: Annotated[bool, typer.Option("--status", help="Only show each job's last and next run.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the maintenance jobs that are due now (each on its own interval: dream.schedule.jobs, plus the
    full dream cycle), then exit: for cron or a systemd timer, e.g. once a minute. --status shows the
    schedule without running anything."""
    with _memory(db) as mem:
        if status:
            rows = mem.maintenance_status(user_id=user, cycle_every=every)
            if as_json:
                _print_json(rows)
                return
            table = Table("job", "steps", "every", "batch", "last run", "next run", title="maintenance schedule")
            for r in rows:
                steps_text = r["steps"] if isinstance(r["steps"], str) else ", ".join(r["steps"])
                table.add_row(
                    r["name"],
                    escape(steps_text),
                    r["every"],
                    str(r["batch_size"] or "—"),
                    r["last_run"] or "never",
                    r["next_run"],
                )
            console.print(table)
            return
        reports = mem.maintain(user_id=user, cycle_every=every)
        if as_json:
            _print_json(reports)
            return
        if not reports:
            _say("nothing due (reverie maintain --status shows when each job runs next)")
        for report in reports:
            _print_run_report(report, as_json=False, title=_job_title(report))


@app.command()
def tick(db: DbOpt = None, user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """Run the cheap maintenance tick now (cold migration, expiry, consolidation: the setting
    dream.schedule.tick_steps). It also runs by itself every dream.schedule.tick_every ingestion calls."""
    with _memory(db) as mem:
        report = mem.tick(user_id=user) if user is not None else mem.tick()
        _print_run_report(report, as_json=as_json, title="tick")


def _interval(every: str | None, max_runs: int | None) -> Any:
    from reverie.dream.schedule import parse_duration

    if every is None:
        if max_runs is not None:
            _fail(InvalidInputError("--max-runs needs --every"))
        return None
    try:
        return parse_duration(every)
    except ReverieError as exc:
        _fail(exc)
    return None  # pragma: no cover - _fail raises


def _print_run_report(report: Mapping[str, Any], *, as_json: bool, title: str, compact: bool = False) -> None:
    """A dream or tick report: per step what it changed and examined, its details and its time."""
    if as_json:
        if compact:  # one JSON object per line while running on a schedule (JSON Lines)
            sys.stdout.write(json.dumps(report, ensure_ascii=False, default=str) + "\n")
            sys.stdout.flush()
        else:
            _print_json(report)
        return
    table = Table("step", "changed", "examined", "s", "details", title=f"{title} at {report.get('at', '?')}")
    for step in report["steps"]:
        table.add_row(
            step["name"],
            str(step["changed"]),
            str(step.get("examined", "")),
            f"{step.get('seconds', 0.0):.2f}",
            escape(_short(json.dumps(step.get("details", {})), 90)),
        )
    console.print(table)
    console.print(f"{title} finished in {report['seconds']:.2f} s: {report['changed']} change(s)")


def _run_scheduled(mem: Any, run: Any, every: Any, *, max_runs: int | None, as_json: bool, title: str) -> None:
    """``--every``: run on a fixed-rate schedule until SIGINT/SIGTERM (finish the run, then stop)
    or ``--max-runs``; a second signal aborts the run in progress (exit code 130)."""
    import signal
    import threading

    from reverie.dream.schedule import format_duration, run_every

    if every.total_seconds() < mem.settings.dream.schedule.min_every_s:
        _fail(
            InvalidInputError(
                f"--every must be at least {mem.settings.dream.schedule.min_every_s:g} s (dream.schedule.min_every_s)"
            )
        )
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        err_console.print(f"{signal.Signals(signum).name}: stopping after the current run (send it again to abort)")

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, on_signal)
    err_console.print(
        f"{title} every {format_duration(every)}"
        + (f", {max_runs} run(s)" if max_runs else "")
        + " — Ctrl-C or SIGTERM stops"
    )
    try:
        runs = run_every(
            run,
            every,
            stop=stop,
            max_runs=max_runs,
            on_report=lambda r: _print_run_report(r, as_json=as_json, title=title, compact=True),
            on_error=lambda e: err_console.print(
                f"[red]error[/red] ({type(e).__name__}): {e} — trying again at the next slot"
            ),
        )
    except KeyboardInterrupt:
        err_console.print("aborted during a run: finished batches are kept, the next run does the rest")
        raise typer.Exit(130) from None
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
    err_console.print(f"stopped after {runs} run(s)")


def _job_title(report: Mapping[str, Any]) -> str:
    job = report.get("job") or {}
    return "dream cycle" if job.get("name") in (None, "cycle") else f"job {job['name']}"


def _run_jobs(mem: Any, every: Any, *, user: str | None, max_runs: int | None, as_json: bool) -> None:
    """``dream --every`` without ``--steps``: the full cycle every ``every`` and each maintenance job on its
    own interval in between, until SIGINT/SIGTERM (finish the job in progress, then stop) or ``max_runs``
    full cycles; a second signal aborts the run in progress (exit code 130)."""
    import signal
    import threading

    from reverie.dream.schedule import JobSchedule, configured_jobs, format_duration, run_jobs

    if every.total_seconds() < mem.settings.dream.schedule.min_every_s:
        _fail(
            InvalidInputError(
                f"--every must be at least {mem.settings.dream.schedule.min_every_s:g} s (dream.schedule.min_every_s)"
            )
        )
    schedule = JobSchedule(mem, configured_jobs(mem, cycle_every=every), user_id=user)
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        err_console.print(f"{signal.Signals(signum).name}: stopping after the current run (send it again to abort)")

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, on_signal)
    jobs = ", ".join(f"{j.name} every {format_duration(j.every)}" for j in schedule.jobs if not j.is_cycle)
    err_console.print(
        f"dream cycle every {format_duration(every)}; in between: {jobs}"
        + (f"; {max_runs} cycle(s)" if max_runs else "")
        + " — Ctrl-C or SIGTERM stops"
    )
    try:
        runs = run_jobs(
            schedule,
            stop=stop,
            max_cycles=max_runs,
            on_report=lambda r: _print_run_report(r, as_json=as_json, title=_job_title(r), compact=True),
            on_error=lambda e: err_console.print(
                f"[red]error[/red] ({type(e).__name__}): {e} — trying again at the next slot"
            ),
        )
    except KeyboardInterrupt:
        err_console.print("aborted during a run: finished batches are kept, the next run does the rest")
        raise typer.Exit(130) from None
    except ReverieError as exc:
        _fail(exc)
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
    err_console.print(f"stopped after {runs} run(s)")


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err_console
    )


# -- import and export ----------------------------------------------------------------------------


@app.command("import")
def import_cmd(
    path: Annotated[
        Path,
        typer.Argument(
            exists=True, metavar="PATH", help="A .jsonl file, a conversation .json, or a markdown directory."
        ),
    ],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="PATH is a markdown tree (facts/…).")] = False,
    verbatim: Annotated[
        bool, typer.Option("--verbatim", help="Store turns as they are, without the write path.")
    ] = False,
) -> None:
    """Import memories: JSONL (exported records or {"content": ...} lines), a conversation JSON
    (reverie's sample format or a LoCoMo conversation), or a markdown tree.

    Every record is checked as `add` checks its input; a bad line or file is reported (with its
    place) and skipped, and the rest is imported — the exit code is then 1. Running an import again
    adds nothing twice: exported records keep their ids, and with --verbatim each line or turn gets an
    id made from its scope, place and content."""
    from reverie import io

    with _memory(db, create=True) as mem:
        if markdown or path.is_dir():
            res = mem.restore(io.markdown_entries(path))
            _say(f"restored {res['restored']}, skipped {res['skipped']} existing")
            _report_rejected(res["rejected"], res["errors"])
            return
        if path.suffix == ".jsonl":
            _import_jsonl(mem, path, user, agent, verbatim)
            return
        try:
            data = json.loads(io.read_regular_text(path))
        except (json.JSONDecodeError, RecursionError) as exc:
            _fail(InvalidInputError(f"{path} is not valid JSON: {exc}"))
        conv = io.load_conversation(data)
        _import_conversation(mem, conv, user or conv.user_id, agent or conv.agent_id, verbatim, source=str(path))


def _report_rejected(rejected: int, errors: list[dict[str, str]], shown: int = 20) -> None:
    """Print the rejected records (where and why) and exit with code 1 if there were any."""
    if not rejected:
        return
    from rich.markup import escape

    for err in errors[:shown]:
        err_console.print(f"[red]rejected[/red] {escape(err['where'])}: {escape(err['error'])}")
    if rejected > min(shown, len(errors)):
        err_console.print(f"… and {rejected - min(shown, len(errors))} more")
    err_console.print(f"[red]{rejected} record(s) rejected[/red]; everything else was imported")
    raise typer.Exit(1)


def _import_jsonl(mem: Any, path: Path, user: str | None, agent: str | None, verbatim: bool) -> None:
    """Exported records (lines with ``id`` and ``content``) are restored; other lines are added."""
    from reverie import io

    records: list[Any] = []
    items: list[tuple[str, dict[str, Any]]] = []
    for entry in io.jsonl_entries(path):
        if entry.error is None and "id" not in entry.data:
            items.append((entry.where, entry.data))
        else:
            records.append(entry)
    rejected, errors = 0, []
    if records:
        res = mem.restore(records)
        _say(f"restored {res['restored']} records, skipped {res['skipped']} existing")
        rejected, errors = res["rejected"], res["errors"]
    if items:
        keyed = _with_import_ids(items, user, agent) if verbatim else items
        added, bad = _import_items(mem, keyed, "importing", user, agent, verbatim)
        _say(f"added {added} of {len(items)} lines")
        rejected += len(bad)
        errors += bad
    _report_rejected(rejected, errors)


def _with_import_ids(
    items: list[tuple[str, dict[str, Any]]], user: str | None, agent: str | None
) -> list[tuple[str, dict[str, Any]]]:
    """Each item with a stable id (scope, session, time, content and the how-many-th such line it is),
    so that a second run of the same import finds its items stored and skips them."""
    from reverie import io
    from reverie.validation import clean_when

    seen: dict[tuple[Any, ...], int] = {}
    out: list[tuple[str, dict[str, Any]]] = []
    for where, item in items:
        fields = [
            json.dumps(item.get(k), sort_keys=True, default=str)
            for k in ("content", "session_id", "when", "user_id", "agent_id")
        ]
        key = (*fields, user or "", agent or "")
        seen[key] = seen.get(key, 0) + 1
        try:
            when = clean_when(item.get("when"))
        except ReverieError:
            when = None
        out.append((where, {**item, "id": io.stable_id("reverie-import", *key, seen[key], when=when)}))
    return out


def _import_items(
    mem: Any,
    items: list[tuple[str, Any]],
    label: str,
    user: str | None,
    agent: str | None,
    verbatim: bool,
    chunk_size: int = 100,
) -> tuple[int, list[dict[str, str]]]:
    """``add_many`` in chunks behind a progress bar. A chunk with a bad item is added item by item, so
    that the bad one is rejected alone. Returns how many items stored a new memory and the rejections."""
    from reverie.validation import describe_error

    added = 0
    rejected: list[dict[str, str]] = []

    def count(results: list[Any]) -> int:
        return sum(r.action.value in STORED_ACTIONS for r in results)

    with _progress() as progress:
        task = progress.add_task(label, total=len(items))
        for start in range(0, len(items), chunk_size):
            chunk = items[start : start + chunk_size]
            try:
                added += count(mem.add_many([i for _, i in chunk], user_id=user, agent_id=agent, infer=not verbatim))
            except InvalidInputError:
                for where, item in chunk:
                    try:
                        added += count(mem.add_many([item], user_id=user, agent_id=agent, infer=not verbatim))
                    except InvalidInputError as exc:
                        rejected.append({"where": where, "error": describe_error(exc)})
            progress.advance(task, len(chunk))
    return added, rejected


def _import_conversation(
    mem: Any, conv: Any, user: str | None, agent: str | None, verbatim: bool, source: str = "conversation"
) -> None:
    from reverie import io

    items = [(f"{source} turn {t.turn_id}", item) for t, item in zip(conv.turns, conversation_items(conv), strict=True)]
    if verbatim:
        items = [
            (
                where,
                {
                    **item,
                    "id": io.stable_id(
                        "reverie-turn",
                        user or "",
                        agent or "",
                        item["session_id"],
                        item["metadata"]["turn_id"],
                        item["content"],
                        when=item["when"],
                    ),
                },
            )
            for where, item in items
        ]
    added, rejected = _import_items(mem, items, "importing turns", user, agent, verbatim)
    _say(f"imported {added} of {len(items)} turns for user {user!r}")
    _report_rejected(len(rejected), rejected)


def _add_with_progress(
    mem: Any,
    items: list[Any],
    label: str,
    user: str | None,
    agent: str | None,
    verbatim: bool,
    chunk_size: int = 100,
    *,
    progress: bool = True,
) -> list[Any]:
    """``add_many`` in chunks behind a progress bar; returns every result."""
    results: list[Any] = []
    if not progress:
        for start in range(0, len(items), chunk_size):
            results += mem.add_many(items[start : start + chunk_size], user_id=user, agent_id=agent, infer=not verbatim)
        return results
    with _progress() as bar:
        task = bar.add_task(label, total=len(items))
        for start in range(0, len(items), chunk_size):
            chunk = items[start : start + chunk_size]
            results += mem.add_many(chunk, user_id=user, agent_id=agent, infer=not verbatim)
            bar.advance(task, len(chunk))
    return results


def conversation_items(conv: Any) -> list[dict[str, Any]]:
    """A conversation's turns as ``add_many`` items (session, time and turn id kept)."""
    from reverie import io

    return [
        {
            "content": io.turn_content(t),
            "session_id": t.session_id,
            "when": t.when,
            "metadata": {"turn_id": t.turn_id, "speaker": t.speaker, **({"role": t.role} if t.role else {})},
        }
        for t in conv.turns
    ]


@app.command()
def topics(
    db: DbOpt = None,
    user: UserOpt = None,
    refresh: Annotated[
        bool,
        typer.Option("--refresh", help="Build the index now instead of showing the one the last dream cycle kept."),
    ] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, metavar="N", help="Show at most N topics.")] = 30,
    as_json: JsonOpt = False,
) -> None:
    """What a user's memory is about: the topics of its sealed memory boxes and the entities its memories name,
    with how many memories and boxes mention each and when they were first and last seen."""
    with _memory(db) as mem:
        index = mem.topic_index(user_id=user, refresh=refresh)
    if as_json:
        _print_json(index)
        return
    rows = index.get("topics", [])[:limit]
    if not rows:
        _say(
            f"no topics yet for {user or 'memories without a user'} (they come from sealed memory boxes and the "
            "entities memories name; the dream cycle keeps the index)"
        )
        return
    table = Table(
        "topic",
        "memories",
        "boxes",
        "traces",
        "first seen",
        "last seen",
        title=f"topics of {user or '(no user)'} — {index.get('updated_at', '?')}",
    )
    for t in rows:
        table.add_row(
            escape(str(t["topic"])) + (" (entity)" if t.get("entity") else ""),
            str(t["memories"]),
            str(t["boxes"]),
            str(t["traces"]),
            (t.get("first_seen") or "—")[:10],
            (t.get("last_seen") or "—")[:10],
        )
    console.print(table)


@app.command()
def documents(
    db: DbOpt = None,
    user: UserOpt = None,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Build them now instead of showing those the last dream cycle kept.")
    ] = False,
    actions: Annotated[
        int,
        typer.Option("--actions", min=0, max=10_000, metavar="N", help="Also show the N most recent write decisions."),
    ] = 0,
    as_json: JsonOpt = False,
) -> None:
    """A user's readable documents: the behavioural profile (with its line cap), entity profiles, reflections
    and the compression guidelines learned from past write decisions (markdown)."""
    from reverie.documents import document_markdown

    with _memory(db) as mem:
        docs = mem.documents(user_id=user, refresh=refresh)
        recent = mem.action_telemetry(user_id=user, limit=actions) if actions else []
    if as_json:
        _print_json({**docs, **({"actions": recent} if actions else {})})
        return
    shown = [d for k, d in docs.items() if k != "topics" and isinstance(d, dict)]
    if not shown:
        _say(
            f"no documents yet for {user or 'memories without a user'} (the dream cycle makes them; --refresh "
            "makes them now)"
        )
    for doc in shown:
        console.print(escape(document_markdown(doc)), markup=False, highlight=False)
    if recent:
        table = Table(
            "at",
            "action",
            "outcome",
            "confidence",
            "lifecycle",
            "importance",
            "source",
            "memory",
            title="recent write decisions",
        )
        for e in recent:
            table.add_row(
                e["at"][:19],
                e["action"],
                e["outcome"],
                f"{e['confidence']:.2f}",
                e["lifecycle_state"],
                f"{e['importance']:.2f}",
                e["source"],
                (e["memory_id"] or "—")[:8],
            )
        console.print(table)


@app.command("ingest-code")
def ingest_code(
    path: Annotated[str, typer.Argument(metavar="PATH", help="A source directory (or one file) to remember.")],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remember a code base in the codebase layer: its file tree and each Python module's public classes,
    functions and methods (signature and docstring's first line), with their paths. Run it again after
    changes: only what changed is updated; what disappeared is invalidated. Files that cannot be read
    (binary, not UTF-8, a syntax error, too large, symbolic links) are skipped and listed."""
    with _memory(db, create=True) as mem:
        report = mem.ingest_code(path, user_id=user, agent_id=agent)
    if as_json:
        _print_json(report)
        return
    _say(
        f"ingested {report['root']}: {report['created']} new, {report['updated']} updated"
        + (f" ({report['reactivated']} back)" if report["reactivated"] else "")
        + f", {report['invalidated']} invalidated, {report['unchanged']} unchanged "
        f"({report['files_parsed']} file(s) read, {report['files_unchanged']} unchanged)"
    )
    if report["changed_files"]:
        _say(
            "changed: "
            + ", ".join(report["changed_files"][:20])
            + (f" and {len(report['changed_files']) - 20} more" if len(report["changed_files"]) > 20 else "")
        )
    for rel, why in list(report["skipped"].items())[:50]:
        _say(f"skipped {rel}: {why}")
    if len(report["skipped"]) > 50:
        _say(f"… and {len(report['skipped']) - 50} more skipped (--json lists all)")


#: what `export` writes, by the output's extension
EXPORT_FORMATS = {".jsonl": "JSON Lines (one memory record per line; `reverie import` reads it back)"}


@app.command()
def reembed(
    db: DbOpt = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Memories embedded per batch.")] = 128,
    as_json: JsonOpt = False,
) -> None:
    """Move a store to the configured embedder: embed every memory again (all users, statuses and tiers).

    Needed after changing the embedder (embedding.local_model, embedding.provider): a store remembers
    which embedder wrote its vectors and refuses another until it is re-embedded. Safe to interrupt
    (Ctrl-C): finished batches are kept and the next run continues where this one stopped. Stop other
    processes that use the store first."""
    from reverie.memory import Memory

    try:
        mem = Memory(db, reembed=True)
    except ReverieError as exc:
        _fail(exc)
    try:
        with _progress() as progress:
            task = progress.add_task(f"re-embedding with {mem.embedder.name}", total=None)
            report = mem.reembed(
                batch_size=batch_size, progress=lambda done, total: progress.update(task, completed=done, total=total)
            )
    except KeyboardInterrupt:
        err_console.print("interrupted: finished batches are kept; run `reverie reembed` again to continue")
        raise typer.Exit(130) from None
    except ReverieError as exc:
        _fail(exc)
    finally:
        mem.close()
    if as_json:
        _print_json(report)
    elif report["already_current"]:
        console.print(
            f"nothing to do: the store's vectors are already {mem.embedder.name}'s ({report['total']} memories)"
        )
    else:
        how = "continued an interrupted run: " if report["resumed"] else ""
        console.print(
            f"{how}re-embedded {report['reembedded']} of {report['total']} memories with "
            f"{report['target']['model']} (was {(report['source'] or {}).get('model', 'not recorded')})"
        )


@app.command()
def export(
    path: Annotated[
        str,
        typer.Argument(
            metavar="PATH", help="Output .jsonl file, '-' for standard output, or a directory with --markdown."
        ),
    ],
    db: DbOpt = None,
    user: UserOpt = None,
    markdown: Annotated[
        bool,
        typer.Option(
            "--markdown",
            help="Write a markdown tree: one file per memory, the sealed memory boxes and the topic index.",
        ),
    ] = False,
    embeddings: Annotated[bool, typer.Option("--embeddings", help="Include vectors (JSONL only).")] = False,
    force: Annotated[bool, typer.Option("--force", "-f", help="Overwrite an existing file.")] = False,
) -> None:
    """Export every memory (all statuses and stores) as JSON Lines or as a markdown tree. Files are
    created readable by you only (0600), like the database; an existing file is not overwritten
    without --force."""
    from reverie import io

    out = None if path == "-" else Path(path).expanduser()
    if out is not None:
        _check_export_path(out, markdown=markdown, force=force)
    with _memory(db) as mem:
        if out is None:
            if markdown:
                _fail(InvalidInputError("--markdown writes a directory; give its path instead of '-'"))
            n = 0
            for rec in mem.export(user_id=user):
                sys.stdout.write(json.dumps(rec.to_dict(with_embedding=embeddings), ensure_ascii=False) + "\n")
                n += 1
            err_console.print(f"exported {n} memories to standard output")
            return
        previous = os.umask(0o077)  # every file and directory written: owner only, like the database
        try:
            if markdown:
                done = mem.export_markdown(out, user_id=user)
                _say(
                    f"exported {done['memories']} memories, {done['boxes']} sealed memory boxes and the topic "
                    f"index to {out}"
                )
                return
            if out.exists():  # --force: replace it, with owner-only permissions
                out.unlink()
            n = io.dump_jsonl(mem.export(user_id=user), out, with_embedding=embeddings)
        finally:
            os.umask(previous)
        _say(f"exported {n} memories to {out}")


def _check_export_path(out: Path, *, markdown: bool, force: bool) -> None:
    if not out.parent.is_dir():
        _fail(InvalidInputError(f"the directory {out.parent} does not exist"))
    if markdown:
        if out.exists() and not out.is_dir():
            _fail(InvalidInputError(f"{out} exists and is not a directory"))
        return
    if out.suffix not in EXPORT_FORMATS:
        known = "; ".join(f"{ext}: {what}" for ext, what in EXPORT_FORMATS.items())
        _fail(
            InvalidInputError(
                f"cannot export to {out.name!r}: the extension says the format ({known}; "
                "--markdown DIR: a markdown tree; '-': JSON Lines on standard output)"
            )
        )
    if out.exists() and not force:
        _fail(InvalidInputError(f"{out} exists; not overwritten (--force replaces it)"))


# -- demo and simulation --------------------------------------------------------------------------


@app.command()
def demo(
    db: Annotated[
        str | None, typer.Option("--db", "-d", metavar="PATH|URL", help="Where to store (default: a temporary file).")
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", metavar="N", help="Results considered per question.")] = 3,
    months: Annotated[
        int, typer.Option(min=0, max=24, metavar="N", help="Months of simulated life after the conversation.")
    ] = 6,
    explain: Annotated[bool, typer.Option("--explain", "-e", help="Show how each answer's score was made.")] = False,
) -> None:
    """The main job, end to end: remember a sample conversation shipped with reverie, answer its
    questions, then live six months on a simulated clock (a dream cycle every night) and show what
    the memory became and what it still answers."""
    import tempfile

    from reverie._demo import run_demo

    tmp = None
    if db is None:
        tmp = tempfile.TemporaryDirectory(prefix="reverie-demo-")
        db = str(Path(tmp.name) / "demo.db")
    try:
        run_demo(_target(db, create=True), k=k, months=months, explain=explain, keep=tmp is None)
    except ReverieError as exc:
        _fail(exc)
    finally:
        if tmp is not None:
            tmp.cleanup()


@app.command()
def simulate(
    days: Annotated[int, typer.Option(min=1, max=3650, metavar="N", help="Days of agent life to simulate.")] = 180,
    out: Annotated[
        Path,
        typer.Option(
            metavar="DIR",
            help="Directory for simulation.png, summary.json, timeline.json and the store (simulation.db).",
        ),
    ] = Path("reverie-simulation"),
    seed: Annotated[
        int, typer.Option(metavar="N", help="Seed of the synthetic workload (same seed, same workload).")
    ] = 0,
    embedder: Annotated[
        str, typer.Option(metavar="NAME", help="hash (fast, word overlap) or local (all-MiniLM-L6-v2).")
    ] = "hash",
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            "-d",
            metavar="PATH|URL",
            help="An empty store to use instead of OUT/simulation.db (e.g. a postgresql:// URL).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Simulate months of a synthetic agent's life on a settable clock (sessions, searches, a nightly
    dream cycle) and write a PNG of the memories per layer and status over time, plus a summary of
    what was promoted, consolidated and forgotten. Needs matplotlib: pip install 'reverie[plot]'."""
    from reverie import simulate as sim

    try:
        cfg = sim.SimulationConfig(days=days, seed=seed)
        with _progress() as progress:
            task = progress.add_task(f"simulating {days} days", total=days)
            summary = sim.simulate(
                out,
                cfg=cfg,
                target=db,
                embedder=embedder,
                progress=lambda done, _total: progress.update(task, completed=done),
            )
    except ReverieError as exc:
        _fail(exc)
    if as_json:
        _print_json(summary)
        return
    for line in sim.summary_lines(summary):
        _say(line)
    _say(f"plot: {summary['files']['plot']}  summary: {summary['files']['summary']}")


keys_app = typer.Typer(
    name="keys",
    help="API keys for the REST API: each key covers some users (optionally some of their agents), or "
    "everything (--admin). Only a key's SHA-256 is stored, in the memory's own store. As soon as one "
    "active key exists, `reverie serve` requires a key (or REVERIE_API_TOKEN) on every request.",
    no_args_is_help=True,
)
app.add_typer(keys_app)


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option("--name", "-n", help="A label for the key (who or what uses it).")],
    db: DbOpt = None,
    users: Annotated[
        list[str] | None, typer.Option("--user", "-u", help="A user the key may read and write (repeat for several).")
    ] = None,
    agents: Annotated[
        list[str] | None,
        typer.Option("--agent", "-a", help="Narrow the key to this agent of its users (repeat for several)."),
    ] = None,
    admin: Annotated[
        bool, typer.Option("--admin", help="Every user, the all-users views, export and the dashboard.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create an API key and print it — the only time it is shown."""
    with _memory(db, create=True) as mem:
        key, token = mem.create_api_key(name=name, users=users or (), agents=agents or None, admin=admin)
        if as_json:
            _print_json({**_key_dict(key), "key": token})
            return
        console.print(f"created key [bold]{key.id}[/bold] ({_key_scope(key)})")
        console.print("the key (shown once; give it as 'Authorization: Bearer <key>'):", style="dim")
        sys.stdout.write(token + "\n")


@keys_app.command("list")
def keys_list(
    db: DbOpt = None,
    revoked: Annotated[bool, typer.Option("--all", help="Also list revoked keys.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the API keys (never the keys themselves): id, name, scope, created, last used."""
    with _memory(db) as mem:
        keys = mem.api_keys(include_revoked=revoked)
        if as_json:
            _print_json([_key_dict(k) for k in keys])
            return
        table = Table("id", "name", "scope", "created", "last used", "revoked")
        for k in keys:
            table.add_row(k.id, k.name, _key_scope(k), _when(k.created_at), _when(k.last_used_at), _when(k.revoked_at))
        console.print(table if keys else "[dim]no API keys[/dim]")


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `reverie keys list`).")], db: DbOpt = None
) -> None:
    """Revoke an API key: it stops working within seconds."""
    with _memory(db) as mem:
        key = mem.revoke_api_key(key_id)
        console.print(f"revoked key {key.id} ({key.name})")


def _key_dict(key: Any) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "admin": key.admin,
        "users": list(key.user_ids),
        "agents": None if key.agent_ids is None else list(key.agent_ids),
        "created_at": key.created_at.isoformat(),
        "revoked_at": _iso(key.revoked_at),
        "last_used_at": _iso(key.last_used_at),
    }


def _key_scope(key: Any) -> str:
    if key.admin:
        return "admin (every user)"
    scope = "users " + ", ".join(key.user_ids)
    return scope + ("; agents " + ", ".join(key.agent_ids) if key.agent_ids else "")


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def _when(value: Any) -> str:
    return "—" if value is None else str(value.strftime("%Y-%m-%d %H:%M"))


# -- servers --------------------------------------------------------------------------------------


@app.command("mcp")
def mcp_cmd(
    db: DbOpt = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            "-u",
            metavar="NAME",
            help="Lock the server to this user_id: tool calls act as it, and naming another user is refused.",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            metavar="NAME",
            help="With --user: lock to this agent_id too. Without --user: the default agent_id.",
        ),
    ] = None,
    session: Annotated[str | None, typer.Option("--session", "-s", metavar="ID", help="Default session_id.")] = None,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")] = False,
    port: Annotated[int, typer.Option(metavar="PORT", help="Port for --http (0 = any free port).")] = 8765,
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            metavar="NAMES",
            help="Which tools to offer: 'default' (remember, recall, context, update, invalidate, forget), 'all', "
            "or a comma-separated list of names and groups, e.g. default,dream,stats.",
        ),
    ] = None,
) -> None:
    """Run reverie as an MCP server (stdio for Claude Desktop/Code, Cursor…; --http for streamable HTTP).
    With --user the server only ever touches that user's memories; without it, it has full access."""
    from reverie.mcp_server import Defaults, build_server, parse_tools, run_http, run_stdio

    try:
        chosen = parse_tools(tools)
    except ReverieError as exc:
        _fail(exc)
    with _memory(db, create=True) as mem:
        server = build_server(mem, Defaults(user_id=user, agent_id=agent, session_id=session), tools=chosen)
        if http:
            run_http(server, port=port)
        else:
            run_stdio(server)


@app.command()
def serve(
    db: DbOpt = None,
    host: Annotated[
        str,
        typer.Option(
            metavar="HOST", help="Bind address; anything but loopback requires REVERIE_API_TOKEN or an API key."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="Port (0 = any free port).")] = 8080,
    workers: Annotated[int, typer.Option(metavar="N", help="Server processes on one socket (PostgreSQL only).")] = 1,
    proxy_headers: Annotated[
        bool,
        typer.Option(
            "--proxy-headers",
            help="Behind a reverse proxy: take the client address and scheme from "
            "X-Forwarded-For/-Proto (sent by --forwarded-allow-ips).",
        ),
    ] = False,
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(metavar="IPS", help="Comma-separated proxy addresses trusted with --proxy-headers ('*': any)."),
    ] = "127.0.0.1",
    root_path: Annotated[
        str, typer.Option(metavar="PREFIX", help="The path prefix a proxy serves reverie under, e.g. /memory.")
    ] = "",
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            metavar="NAME",
            help="A host name the proxy passes in the Host header (repeat for "
            "several); a loopback bind refuses other names.",
        ),
    ] = None,
    access_log: Annotated[
        bool,
        typer.Option(
            "--access-log/--no-access-log", help="One line per request on stderr (never query strings or bodies)."
        ),
    ] = True,
    dream_every: Annotated[
        str | None,
        typer.Option(
            "--dream-every",
            metavar="DURATION",
            help="Also run the dream cycle every DURATION (30m, 1h, 1d) in the server process.",
        ),
    ] = None,
) -> None:
    """Serve the REST API (/v1, OpenAPI at /docs, metrics at /metrics, readiness at /readyz) and the web
    dashboard (/). With the setting dream.schedule.server_jobs on, it also runs the maintenance schedule
    in the background (the jobs of dream.schedule.jobs on their intervals, the full dream cycle every
    --dream-every or else dream.schedule.cycle_every_hours).

    Without REVERIE_API_TOKEN and without API keys the server is single-tenant: whoever reaches it
    (loopback only) has full access. REVERIE_API_TOKEN is an admin token; API keys (`reverie keys
    create`) give each caller its own scope. Either makes every request need a credential."""
    from reverie.dream.schedule import parse_duration
    from reverie.http.server import ServeOptions
    from reverie.http.server import serve as run_server

    try:
        every = parse_duration(dream_every).total_seconds() if dream_every else None
    except ReverieError as exc:
        _fail(exc)
    opts = ServeOptions(
        host=host,
        port=port,
        workers=workers,
        proxy_headers=proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips,
        root_path=root_path.rstrip("/"),
        allow_hosts=list(allow_host or []),
        access_log=access_log,
        dream_every=every,
    )
    with _memory(db, create=True) as mem:
        background = None
        if mem.settings.dream.schedule.server_jobs:
            from reverie.dream.schedule import BackgroundSchedule, JobSchedule, configured_jobs

            cycle = timedelta(seconds=every) if every else _cycle_every(mem)
            try:
                schedule = JobSchedule(mem, configured_jobs(mem, cycle_every=cycle))
            except ReverieError as exc:
                _fail(exc)
            background = BackgroundSchedule(schedule).start()
            opts.dream_every = None  # the schedule runs the full cycle
            err_console.print("maintenance schedule running in the background (dream.schedule.server_jobs)")
        try:
            run_server(mem, token=os.environ.get("REVERIE_API_TOKEN") or None, options=opts)
        finally:
            if background is not None:
                background.stop(timeout=60)


def _cycle_every(mem: Any) -> timedelta:
    return timedelta(hours=mem.settings.dream.schedule.cycle_every_hours)


class _Command(typer.core.TyperCommand):
    """Usage lines name arguments plainly (``reverie add [OPTIONS] TEXT``), without typer's braces."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in super().collect_usage_pieces(ctx)]


for _info in app.registered_commands:
    _info.cls = _Command


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
