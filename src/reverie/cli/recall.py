"""Commands that read memories: ``search``, ``context``, ``get``, ``show``, ``list``, ``users``, ``history``,
``stats``."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
import typer.core
from rich.markup import escape
from rich.table import Table

from reverie.cli.common import (
    AgentOpt,
    AllUsersOpt,
    CategoryOpt,
    DbOpt,
    IdArg,
    JsonOpt,
    LayerOpt,
    SessionOpt,
    StatusOpt,
    UserOpt,
    _fail,
    _filters,
    _fmt,
    _memory,
    _print_json,
    _say,
    _short,
    app,
    console,
)
from reverie.errors import InvalidInputError


def why(hit: Any) -> str:
    """One line of why a hit was returned: its score and the channels (with ranks) that found it."""
    reason = hit.why
    return f"score {hit.score:.3f}" + ("" if reason == "no explanation recorded" else f" · {reason}")


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
    dyn, lc = mem.settings.dynamics, mem.settings.dream.forgetting
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
