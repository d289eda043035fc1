"""The ``reverie`` command line: a thin adapter over :class:`reverie.Memory`.

Every command opens the memory at ``--db`` (or ``REVERIE_TARGET``, or the default SQLite file
under the user's data directory), calls one method, prints the result, and turns reverie
errors into a one-line message and exit code 1.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from reverie.errors import InvalidInputError, ReverieError

app = typer.Typer(
    name="reverie",
    help="reverie — long-term memory for AI agents: remember, recall, consolidate, forget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

DbOpt = Annotated[
    str | None,
    typer.Option("--db", "-d", envvar="REVERIE_TARGET",
                 help="SQLite file or postgresql:// URL (default: the user's data directory)."),
]
UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="user_id scope (isolation boundary).")]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="agent_id scope.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


@contextmanager
def _memory(db: str | None) -> Iterator[Any]:
    from reverie.memory import Memory

    try:
        mem = Memory(db)
    except ReverieError as exc:
        _fail(exc)
    try:
        yield mem
    except ReverieError as exc:
        _fail(exc)
    finally:
        mem.close()


def _fail(exc: BaseException) -> None:
    from rich.markup import escape  # a message may hold brackets ("reverie[plot]"): not markup

    err_console.print(f"[red]error[/red] ({type(exc).__name__}): {escape(str(exc))}")
    raise typer.Exit(1)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


#: write outcomes that store a new memory (a SUPERSEDE stores the new fact and keeps the old one)
STORED_ACTIONS = ("CREATE", "SUPERSEDE")


@app.command()
def init(db: DbOpt = None) -> None:
    """Create (or migrate) the memory database and print where it is."""
    with _memory(db) as mem:
        info = mem.store.info()
        console.print(f"reverie memory ready: [bold]{mem.target}[/bold] "
                      f"(backend {info.backend}, schema v{info.schema_version}, embedder {mem.embedder.name})")


@app.command()
def add(
    content: Annotated[str, typer.Argument(help="The text to remember ('-' reads stdin).")],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: Annotated[str | None, typer.Option("--session", "-s", help="session_id.")] = None,
    metadata: Annotated[str | None, typer.Option("--metadata", "-m", help="JSON object of metadata.")] = None,
    when: Annotated[str | None, typer.Option(help="ISO 8601 time the content refers to.")] = None,
    source: Annotated[str | None, typer.Option(help="human, ai, interaction, ingest, code_scan or dream.")] = None,
    verbatim: Annotated[bool, typer.Option("--verbatim", help="Store as is (infer=False).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remember one piece of content."""
    text = sys.stdin.read() if content == "-" else content
    meta = None
    if metadata:
        try:
            meta = json.loads(metadata)
        except json.JSONDecodeError as exc:
            _fail(InvalidInputError(f"--metadata is not valid JSON: {exc.msg}"))
    with _memory(db) as mem:
        res = mem.add(text, user_id=user, agent_id=agent, session_id=session, metadata=meta, when=when,
                      source=source, infer=not verbatim)
        if as_json:
            _print_json(res.to_dict())
        else:
            console.print(f"{res.action.value} {res.id}  [dim]{res.reason}[/dim]")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to recall.")],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    k: Annotated[int, typer.Option("--k", "-k", help="How many results.")] = 10,
    explain: Annotated[bool, typer.Option("--explain", "-e", help="Show how each score was made.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Recall the memories most relevant to QUERY."""
    with _memory(db) as mem:
        hits = mem.search(query, user_id=user, agent_id=agent, k=k)
        if as_json:
            _print_json([h.to_dict() for h in hits])
            return
        _hits_table(hits, explain=explain)


def _hits_table(hits: list[Any], *, explain: bool) -> None:
    table = Table(show_lines=explain)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("memory")
    table.add_column("id", style="dim")
    if explain:
        table.add_column("explanation")
    for i, h in enumerate(hits, start=1):
        row = [str(i), f"{h.score:.4f}", _short(h.memory.content, 70), h.memory.id[:8]]
        if explain:
            row.append(_format_explain(h.explain))
        table.add_row(*row)
    console.print(table if hits else "[dim]no memories found[/dim]")


def _format_explain(explain: dict[str, Any]) -> str:
    """The admitting stage and intent, one line per channel ("vector #1 similarity=0.69"), the
    score terms with their weights, boosts, multipliers and the MMR step, then the final score."""
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
    known = {"stage", "intent", "channels", "terms", "weights", "utility", "sort", "boosts", "multipliers", "mmr",
             "score", "composite", "rrf"}
    for key, value in explain.items():
        if key not in known:
            lines.append(f"{key}: {_fmt(value)}")
    if "rrf" in explain:
        lines.append(f"rrf: k={explain['rrf'].get('k')} score={_fmt(explain['rrf'].get('score'))}")
    if "score" in explain:
        lines.append(f"score: {_fmt(explain['score'])}")
    return "\n".join(lines)


@app.command()
def get(memory_id: str, db: DbOpt = None) -> None:
    """Print one memory with every field (counts as an access)."""
    with _memory(db) as mem:
        _print_json(mem.get(memory_id).to_dict())


@app.command()
def show(memory_id: str, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Explain a memory's strengths: every current value with the formula terms behind it."""
    with _memory(db) as mem:
        rec = mem.store.get([memory_id]).get(memory_id)
        data = mem.explain_strength(memory_id)
        if as_json:
            _print_json(data)
            return
        if rec is not None:
            console.print(f"[bold]{_short(rec.content, 200)}[/bold]\n{rec.layer.value} · {rec.status.value} · "
                          f"{rec.store.value} · accessed {rec.access_count}×")
        table = Table("value", "now", "formula", "terms")
        for name, item in data.items():
            if isinstance(item, dict) and "value" in item:
                terms = item.get("terms", {})
                table.add_row(name, _fmt(item["value"]), str(item.get("formula", "")),
                              ", ".join(f"{k}={_fmt(v)}" for k, v in terms.items()))
            else:
                table.add_row(name, _fmt(item), "", "")
        console.print(table)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


@app.command("list")
def list_cmd(
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    all_users: Annotated[bool, typer.Option("--all-users", help="Every user's memories.")] = False,
    layer: Annotated[str | None, typer.Option(help="Only this layer.")] = None,
    status: Annotated[str | None, typer.Option(help="Only this status (default active).")] = None,
    category: Annotated[str | None, typer.Option(help="Only this category.")] = None,
    limit: Annotated[int, typer.Option(help="How many.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List memories, newest first."""
    filters: dict[str, Any] = {}
    if layer:
        filters["layer"] = layer
    if status:
        filters["status"] = status
    if category:
        filters["category"] = category
    with _memory(db) as mem:
        recs = mem.list(user_id=user, agent_id=agent, all_users=all_users, filters=filters or None, limit=limit)
        if as_json:
            _print_json([r.to_dict() for r in recs])
            return
        table = Table("id", "layer", "status", "category", "created", "content")
        for r in recs:
            table.add_row(r.id[:8], r.layer.value, r.status.value, r.category,
                          r.created_at.strftime("%Y-%m-%d %H:%M"), _short(r.content, 60))
        console.print(table)


@app.command()
def pin(memory_id: str, db: DbOpt = None) -> None:
    """Pin a memory (immune to forgetting and demotion)."""
    with _memory(db) as mem:
        mem.pin(memory_id)
        console.print(f"pinned {memory_id}")


@app.command()
def reactivate(memory_id: str, db: DbOpt = None) -> None:
    """Bring a forgotten (dormant or archived, cold) memory back to the hot store as active."""
    with _memory(db) as mem:
        rec = mem.reactivate(memory_id)
        console.print(f"reactivated {rec.id} ({rec.status.value}, {rec.store.value})")


@app.command("undo-consolidation")
def undo_consolidation(summary_id: str, db: DbOpt = None) -> None:
    """Undo a dream consolidation: the originals go back to hot, the summary is invalidated."""
    with _memory(db) as mem:
        result = mem.undo_consolidation(summary_id)
        console.print(f"restored {len(result['restored'])} original(s); summary {summary_id} invalidated")


@app.command()
def unpin(memory_id: str, db: DbOpt = None) -> None:
    """Unpin a memory."""
    with _memory(db) as mem:
        mem.unpin(memory_id)
        console.print(f"unpinned {memory_id}")


@app.command()
def invalidate(memory_id: str, reason: Annotated[str, typer.Option(help="Why it is no longer true.")],
               db: DbOpt = None) -> None:
    """Mark a memory as no longer true (kept, never deleted)."""
    with _memory(db) as mem:
        mem.invalidate(memory_id, reason)
        console.print(f"invalidated {memory_id}")


@app.command()
def forget(
    memory_id: str,
    db: DbOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a memory for good (an explicit "forget this" request; logged)."""
    if not yes and not typer.confirm(f"Permanently delete {memory_id}?"):
        raise typer.Exit(1)
    with _memory(db) as mem:
        mem.forget(memory_id)
        console.print(f"forgot {memory_id}")


@app.command()
def feedback(memory_id: str, useful: Annotated[bool, typer.Option("--useful/--not-useful")], db: DbOpt = None) -> None:
    """Tell reverie whether a memory helped (updates its utility)."""
    with _memory(db) as mem:
        rec = mem.feedback(memory_id, useful=useful)
        console.print(f"utility of {memory_id} is now {rec.utility:.3f}")


@app.command()
def history(memory_id: str, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Every recorded transition of a memory, oldest first."""
    with _memory(db) as mem:
        events = mem.history(memory_id)
        if as_json:
            _print_json([{"at": e.at.isoformat(), "event": e.event, "reason": e.reason, "actor": e.actor,
                          "data": e.data} for e in events])
            return
        table = Table("at", "event", "actor", "reason")
        for e in events:
            table.add_row(e.at.isoformat(timespec="seconds"), e.event, e.actor, _short(e.reason, 60))
        console.print(table)


@app.command()
def stats(db: DbOpt = None, user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """Health check: counts and energy per layer and status."""
    with _memory(db) as mem:
        data = mem.stats(user_id=user)
        if as_json:
            _print_json(data)
            return
        console.print(f"{data['total']} memories in {data['target']} ({data['backend']}, {data['embedder']})")
        table = Table("layer", "status", "count", "energy avg", "min", "max")
        for r in data["rows"]:
            table.add_row(r["layer"], r["status"], str(r["count"]), f"{r['energy_avg']:.3f}",
                          f"{r['energy_min']:.3f}", f"{r['energy_max']:.3f}")
        console.print(table)


@app.command()
def dream(
    db: DbOpt = None,
    steps: Annotated[str | None, typer.Option(help="Comma-separated step names to run (default: all enabled).")] = None,
    user: UserOpt = None,
    every: Annotated[str | None, typer.Option(
        "--every", help="Keep running on a schedule: 30s, 15m, 1h, 1d, 1h30m … Stop with Ctrl-C or SIGTERM "
        "(it finishes the current run; a second signal aborts it, leaving the store consistent).")] = None,
    max_runs: Annotated[int | None, typer.Option("--max-runs", min=1, help="With --every: stop after N runs.")]
    = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the dream cycle (decay, promotion, expiry, consolidation, forgetting …) and print, per step,
    what it changed. Many processes may dream at once: each claims the memories it works on."""
    names = [s.strip() for s in steps.split(",") if s.strip()] if steps else None
    interval = _interval(every, max_runs)
    with _memory(db) as mem:
        def once() -> dict[str, Any]:
            report: dict[str, Any] = (mem.dream(steps=names, user_id=user) if user is not None
                                      else mem.dream(steps=names))
            return report

        if interval is None:
            _print_run_report(once(), as_json=as_json, title="dream cycle")
            return
        _run_scheduled(mem, once, interval, max_runs=max_runs, as_json=as_json, title="dream cycle")


@app.command()
def tick(db: DbOpt = None, user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """Run the cheap maintenance tick now (seed 003: cold migration, TTL expiry, consolidation; the steps
    are the setting dream.schedule.tick_steps). It also runs by itself every dream.schedule.tick_every
    ingestion cycles."""
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


def _print_run_report(report: dict[str, Any], *, as_json: bool, title: str, compact: bool = False) -> None:
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
        table.add_row(step["name"], str(step["changed"]), str(step.get("examined", "")),
                      f"{step.get('seconds', 0.0):.2f}", _short(json.dumps(step.get("details", {})), 90))
    console.print(table)
    console.print(f"{title} finished in {report['seconds']:.2f} s: {report['changed']} change(s)")


def _run_scheduled(mem: Any, run: Any, every: Any, *, max_runs: int | None, as_json: bool, title: str) -> None:
    """``--every``: run on a fixed-rate schedule until SIGINT/SIGTERM (finish the run, then stop)
    or ``--max-runs``; a second signal aborts the run in progress (exit code 130)."""
    import signal
    import threading

    from reverie.dream.schedule import format_duration, run_every

    if every.total_seconds() < mem.settings.dream.schedule.min_every_s:
        _fail(InvalidInputError(f"--every must be at least {mem.settings.dream.schedule.min_every_s:g} s "
                                "(dream.schedule.min_every_s)"))
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
    err_console.print(f"{title} every {format_duration(every)}" + (f", {max_runs} run(s)" if max_runs else "")
                      + " — Ctrl-C or SIGTERM stops")
    try:
        runs = run_every(run, every, stop=stop, max_runs=max_runs,
                         on_report=lambda r: _print_run_report(r, as_json=as_json, title=title, compact=True),
                         on_error=lambda e: err_console.print(f"[red]error[/red] ({type(e).__name__}): {e} — "
                                                              "trying again at the next slot"))
    except KeyboardInterrupt:
        err_console.print("aborted during a run: finished batches are kept, the next run does the rest")
        raise typer.Exit(130) from None
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
    err_console.print(f"stopped after {runs} run(s)")


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=err_console)


@app.command("import")
def import_cmd(
    path: Annotated[Path, typer.Argument(exists=True, help="A .jsonl file, a conversation .json, or a markdown dir.")],
    db: DbOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="PATH is a markdown tree (facts/…).")] = False,
    verbatim: Annotated[bool, typer.Option("--verbatim", help="Store turns as they are (infer=False).")] = False,
) -> None:
    """Import memories: JSONL (exported records or {"content": ...} lines), a conversation JSON
    (reverie's sample format or a LoCoMo conversation), or a markdown tree.

    Every record is checked as `add` checks its input; a bad line or file is reported (with its
    place) and skipped, and the rest is imported — the exit code is then 1. Running an import again
    adds nothing twice: exported records keep their ids, and with --verbatim each line or turn gets an
    id made from its scope, place and content."""
    from reverie import io

    with _memory(db) as mem:
        if markdown or path.is_dir():
            res = mem.restore(io.markdown_entries(path))
            console.print(f"restored {res['restored']}, skipped {res['skipped']} existing")
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
        console.print(f"restored {res['restored']} records, skipped {res['skipped']} existing")
        rejected, errors = res["rejected"], res["errors"]
    if items:
        keyed = _with_import_ids(items, user, agent) if verbatim else items
        added, bad = _add_with_progress(mem, keyed, "importing", user, agent, verbatim)
        console.print(f"added {added} of {len(items)} lines")
        rejected += len(bad)
        errors += bad
    _report_rejected(rejected, errors)


def _with_import_ids(items: list[tuple[str, dict[str, Any]]], user: str | None,
                     agent: str | None) -> list[tuple[str, dict[str, Any]]]:
    """Each item with a stable id (scope, session, time, content and the how-many-th such line it is),
    so that a second run of the same import finds its items stored and skips them."""
    from reverie import io
    from reverie.validation import clean_when

    seen: dict[tuple[Any, ...], int] = {}
    out: list[tuple[str, dict[str, Any]]] = []
    for where, item in items:
        fields = [json.dumps(item.get(k), sort_keys=True, default=str)
                  for k in ("content", "session_id", "when", "user_id", "agent_id")]
        key = (*fields, user or "", agent or "")
        seen[key] = seen.get(key, 0) + 1
        try:
            when = clean_when(item.get("when"))
        except ReverieError:
            when = None
        out.append((where, {**item, "id": io.stable_id("reverie-import", *key, seen[key], when=when)}))
    return out


def _add_with_progress(mem: Any, items: list[tuple[str, Any]], label: str, user: str | None, agent: str | None,
                       verbatim: bool, chunk_size: int = 100) -> tuple[int, list[dict[str, str]]]:
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
            chunk = items[start:start + chunk_size]
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


def _import_conversation(mem: Any, conv: Any, user: str | None, agent: str | None, verbatim: bool,
                         source: str = "conversation") -> None:
    from reverie import io

    items = [(f"{source} turn {t.turn_id}",
              {"content": io.turn_content(t), "session_id": t.session_id, "when": t.when,
               "metadata": {"turn_id": t.turn_id, "speaker": t.speaker, **({"role": t.role} if t.role else {})}})
             for t in conv.turns]
    if verbatim:
        items = [(where, {**item, "id": io.stable_id("reverie-turn", user or "", agent or "", item["session_id"],
                                                      item["metadata"]["turn_id"], item["content"],
                                                      when=item["when"])})
                 for where, item in items]
    added, rejected = _add_with_progress(mem, items, "importing turns", user, agent, verbatim)
    console.print(f"imported {added} of {len(items)} turns for user {user!r}")
    _report_rejected(len(rejected), rejected)


@app.command()
def export(
    path: Annotated[Path, typer.Argument(help="Output .jsonl file, or a directory with --markdown.")],
    db: DbOpt = None,
    user: UserOpt = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Write seed 004's markdown tree.")] = False,
    embeddings: Annotated[bool, typer.Option("--embeddings", help="Include vectors (JSONL only).")] = False,
) -> None:
    """Export every memory (all statuses and stores) as JSONL or as a markdown tree."""
    from reverie import io
    from reverie.store.base import MemoryFilter

    with _memory(db) as mem:
        flt = MemoryFilter.everything(user_id=user, all_users=user is None)

        def records() -> Iterator[Any]:
            for batch in mem.store.scan(flt):
                yield from batch

        n = io.export_markdown(records(), path) if markdown else io.dump_jsonl(records(), path,
                                                                                 with_embedding=embeddings)
        console.print(f"exported {n} memories to {path}")


@app.command()
def demo(
    db: Annotated[str | None, typer.Option("--db", "-d", help="Where to store (default: a temporary file).")] = None,
    k: Annotated[int, typer.Option("--k", "-k", help="Results shown per question.")] = 3,
) -> None:
    """The main job, end to end: ingest a sample conversation shipped with reverie into the
    embedded store, then answer its recall questions, printing results with their explanations."""
    import importlib.resources

    from reverie import io
    from reverie.memory import Memory

    data = json.loads(importlib.resources.files("reverie").joinpath("sample/conversation.json").read_text("utf-8"))
    conv = io.load_conversation(data)
    tmp = None
    if db is None:
        tmp = tempfile.TemporaryDirectory(prefix="reverie-demo-")
        db = str(Path(tmp.name) / "demo.db")
    try:
        with Memory(db) as mem:
            console.print(f"[bold]reverie demo[/bold] — store: {mem.target} ({mem.store.backend}), "
                          f"embedder: {mem.embedder.name}")
            _import_conversation(mem, conv, conv.user_id, conv.agent_id, verbatim=False, source="sample")
            found = 0
            for q in conv.questions:
                hits = mem.search(q["question"], user_id=conv.user_id, k=k)
                got = {h.memory.metadata.get("turn_id") for h in hits}
                ok = bool(got & set(q.get("evidence", [])))
                found += ok
                console.rule(f"[bold]{q['question']}[/bold]  {'[green]✓ evidence found' if ok else '[red]✗ missed'}")
                _hits_table(hits, explain=True)
            console.print(f"\nevidence in the top {k} for {found} of {len(conv.questions)} questions")
            console.print(mem.stats(user_id=conv.user_id)["by_layer"])
    except ReverieError as exc:
        _fail(exc)
    finally:
        if tmp is not None:
            tmp.cleanup()


@app.command()
def simulate(
    days: Annotated[int, typer.Option(min=1, max=3650, help="Days of agent life to simulate.")] = 180,
    out: Annotated[Path, typer.Option(help="Directory for simulation.png, summary.json, timeline.json and "
                                      "the store (simulation.db).")] = Path("reverie-simulation"),
    seed: Annotated[int, typer.Option(help="Seed of the synthetic workload (same seed, same workload).")] = 0,
    embedder: Annotated[str, typer.Option(help="hash (fast, word overlap) or local (all-MiniLM-L6-v2).")] = "hash",
    db: Annotated[str | None, typer.Option("--db", "-d", help="An empty store to use instead of OUT/simulation.db "
                                           "(e.g. a postgresql:// URL).")] = None,
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
            summary = sim.simulate(out, cfg=cfg, target=db, embedder=embedder,
                                   progress=lambda done, _total: progress.update(task, completed=done))
    except ReverieError as exc:
        _fail(exc)
    if as_json:
        _print_json(summary)
        return
    for line in sim.summary_lines(summary):
        console.print(line, markup=False, soft_wrap=True)
    console.print(f"plot: {summary['files']['plot']}  summary: {summary['files']['summary']}", markup=False)


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
    users: Annotated[list[str] | None, typer.Option("--user", "-u", help="A user the key may read and write "
                                                    "(repeat for several).")] = None,
    agents: Annotated[list[str] | None, typer.Option("--agent", "-a", help="Narrow the key to this agent of its "
                                                     "users (repeat for several).")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="Every user, the all-users views, export and the "
                                        "dashboard.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create an API key and print it — the only time it is shown."""
    from reverie.auth import create_key

    with _memory(db) as mem:
        key, token = create_key(mem.store, name=name, users=users or (), agents=agents or None, admin=admin,
                                now=mem.now())
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
        keys = mem.store.api_keys(include_revoked=revoked)
        if as_json:
            _print_json([_key_dict(k) for k in keys])
            return
        table = Table("id", "name", "scope", "created", "last used", "revoked")
        for k in keys:
            table.add_row(k.id, k.name, _key_scope(k), _when(k.created_at), _when(k.last_used_at),
                          _when(k.revoked_at))
        console.print(table if keys else "[dim]no API keys[/dim]")


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="The key's id (from `reverie keys list`).")],
                db: DbOpt = None) -> None:
    """Revoke an API key: it stops working within seconds."""
    from reverie.auth import revoke_key

    with _memory(db) as mem:
        key = revoke_key(mem.store, key_id, now=mem.now())
        console.print(f"revoked key {key.id} ({key.name})")


def _key_dict(key: Any) -> dict[str, Any]:
    return {"id": key.id, "name": key.name, "admin": key.admin, "users": list(key.user_ids),
            "agents": None if key.agent_ids is None else list(key.agent_ids),
            "created_at": key.created_at.isoformat(), "revoked_at": _iso(key.revoked_at),
            "last_used_at": _iso(key.last_used_at)}


def _key_scope(key: Any) -> str:
    if key.admin:
        return "admin (every user)"
    scope = "users " + ", ".join(key.user_ids)
    return scope + ("; agents " + ", ".join(key.agent_ids) if key.agent_ids else "")


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def _when(value: Any) -> str:
    return "—" if value is None else str(value.strftime("%Y-%m-%d %H:%M"))


@app.command("mcp")
def mcp_cmd(
    db: DbOpt = None,
    user: Annotated[str | None, typer.Option("--user", "-u", help="Lock the server to this user_id: tool calls "
                                             "act as it, and naming another user is refused.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="With --user: lock to this agent_id too. "
                                              "Without --user: the default agent_id.")] = None,
    session: Annotated[str | None, typer.Option("--session", "-s", help="Default session_id.")] = None,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")] = False,
    port: Annotated[int, typer.Option(help="Port for --http (0 = any free port).")] = 8765,
) -> None:
    """Run reverie as an MCP server (stdio for Claude Desktop/Code, Cursor…; --http for streamable HTTP).
    With --user the server only ever touches that user's memories; without it, it has full access."""
    from reverie.mcp_server import Defaults, build_server, run_http, run_stdio

    with _memory(db) as mem:
        server = build_server(mem, Defaults(user_id=user, agent_id=agent, session_id=session))
        if http:
            run_http(server, port=port)
        else:
            run_stdio(server)


@app.command()
def serve(
    db: DbOpt = None,
    host: Annotated[str, typer.Option(help="Bind address; anything but loopback requires REVERIE_API_TOKEN.")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 = any free port).")] = 8080,
) -> None:
    """Serve the REST API (/v1, OpenAPI at /docs) and the web dashboard (/).

    Without REVERIE_API_TOKEN and without API keys the server is single-tenant: whoever reaches it
    (loopback only) has full access. REVERIE_API_TOKEN is an admin token; API keys (`reverie keys
    create`) give each caller its own scope. Either makes every request need a credential."""
    import os

    from reverie.http.server import serve as run_server

    with _memory(db) as mem:
        run_server(mem, host=host, port=port, token=os.environ.get("REVERIE_API_TOKEN") or None)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
