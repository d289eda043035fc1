"""How the MCP server shapes reverie's answers for a model: the brief form of a memory, recall results as
compact lines, history events as JSON, argument errors in plain words and tool schemas without noise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reverie.model import HistoryEvent, MemoryRecord


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
    return [
        {"at": e.at.isoformat(), "event": e.event, "reason": e.reason, "actor": e.actor, "data": e.data} for e in events
    ]


def event_date(rec: MemoryRecord) -> str:
    """When what the memory says happened (its validity start), else when it was stored: a date."""
    return (rec.valid_from or rec.created_at).date().isoformat()


def compact_hits(hits: list[Any], short: dict[str, str]) -> str:
    """Recall results as the model reads them: one line per memory, best first —
    ``short-id · date · relevance · content`` plus a marker for anything not plainly active."""
    if not hits:
        return "no memories found"
    lines = [f"{len(hits)} memor{'y' if len(hits) == 1 else 'ies'}, best first (id · date · relevance · text):"]
    for h in hits:
        rec = h.memory
        marks = [
            m for m in ("pinned" if rec.pinned else "", rec.status.value if rec.status.value != "active" else "") if m
        ]
        tail = f" [{', '.join(marks)}]" if marks else ""
        lines.append(f"{short.get(rec.id, rec.id)} · {event_date(rec)} · {h.score:.2f} · {rec.content}{tail}")
    return "\n".join(lines)


def friendly_argument_error(tool: str, exc: Any, accepted: list[str]) -> str:
    """A schema violation in words a model can act on (no pydantic boilerplate, no URLs)."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        kind = str(err.get("type", ""))
        if kind == "missing":
            problems.append(f"'{where}' is required")
        else:
            msg = str(err.get("msg", "is invalid")).split(" [type=")[0]
            problems.append(f"'{where}': {msg[0].lower() + msg[1:] if msg else 'invalid'}")
    return f"InvalidInputError: {tool}: " + "; ".join(problems) + f". It takes: {', '.join(accepted)}."


def compact_schema(schema: Any) -> Any:
    """A tool's input schema as short as it can be for the model (every tool definition is paid for in
    tokens in every conversation): no generated titles, an optional value as its type alone (``null``
    still accepted) with no ``default: null``. What it accepts is unchanged."""
    if isinstance(schema, list):
        return [compact_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
            continue
        out[key] = compact_schema(value)
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (kept,) = [o for o in options if o != {"type": "null"}]
        del out["anyOf"]
        out = {**kept, **out}
    if "default" in out and out["default"] is None:
        del out["default"]
    return out


def hit_dict(hit: Any) -> dict[str, Any]:
    """One recall result as structured content: the memory's id, text, relevance, date and scope."""
    rec = hit.memory
    return {
        "id": rec.id,
        "content": rec.content,
        "score": round(hit.score, 3),
        "when": event_date(rec),
        "layer": rec.layer.value,
        "status": rec.status.value,
        "category": rec.category,
        "pinned": rec.pinned,
        "user_id": rec.user_id,
        "agent_id": rec.agent_id,
        "session_id": rec.session_id,
    }
