"""Moving memories in and out: ``import``, ``export``, ``topics``, ``documents``, ``ingest-code``, ``reembed``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
from rich.markup import escape
from rich.table import Table

from reverie.cli.common import (
    STORED_ACTIONS,
    AgentOpt,
    DbOpt,
    JsonOpt,
    UserOpt,
    _fail,
    _memory,
    _print_json,
    _progress,
    _say,
    app,
    console,
    err_console,
    safe_json,
)
from reverie.errors import InvalidInputError, ReverieError


@app.command("import")
def import_cmd(
    where: Annotated[
        str,
        typer.Argument(metavar="PATH", help="A .jsonl file, a conversation .json, or a markdown directory."),
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

    path = _existing_path(where)
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
        except (ValueError, RecursionError) as exc:  # not JSON, nested too deep, a number too long
            _fail(InvalidInputError(f"{path} is not valid JSON: {type(exc).__name__}: {exc}"))
        conv = io.load_conversation(data)
        _import_conversation(mem, conv, user or conv.user_id, agent or conv.agent_id, verbatim, source=str(path))


def _existing_path(given: str) -> Path:
    """The path ``import`` reads: it must be named (an empty argument is not the current directory) and
    exist."""
    from reverie.validation import clean_path

    try:
        path = clean_path(given, "PATH")
    except InvalidInputError as exc:
        _fail(exc)
    if not path.exists():
        _fail(InvalidInputError(f"{path} does not exist"))
    return path


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
                line = json.dumps(rec.to_dict(with_embedding=embeddings), ensure_ascii=False)
                sys.stdout.write(safe_json(line) + "\n")
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
