"""Commands that change or remove memories: ``pin``, ``unpin``, ``promote``, ``demote``, ``reactivate``,
``undo-consolidation``, ``invalidate``, ``forget``, ``backup``, ``forget-user``, ``feedback``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import typer.core

from reverie.cli.common import DbOpt, IdArg, JsonOpt, _memory, _print_json, _say, _short, app, err_console


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
                err_console.print("Aborted: nothing was erased.")
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
