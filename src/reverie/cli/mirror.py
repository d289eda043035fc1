"""The markdown mirror's commands: ``mirror`` (write one) and ``sync`` (bring people's edits back)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from reverie.cli.common import DbOpt, JsonOpt, _memory, _print_json, _say, app

DirArg = Annotated[str, typer.Argument(metavar="DIR", help="The mirror's directory (created if missing).")]
DirOpt = Annotated[
    str | None,
    typer.Option("--dir", metavar="DIR", help="The mirror's directory (default: the setting mirror.dir)."),
]


@app.command("mirror")
def mirror_command(path: DirArg, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Write the whole memory into DIR as markdown files people can read, edit, grep and keep in git: one
    file per memory under facts/YYYY-MM-DD/, the sealed memory boxes, the dream's documents. Run again, it
    reads back what people changed there first (as `reverie sync` does). To keep DIR in step as memories
    change, set mirror.dir to it (REVERIE_MIRROR__DIR=DIR, or mirror.dir in reverie.toml)."""
    with _memory(db) as mem:
        report = mem.sync_mirror(path)
        live = mem.settings.mirror.dir
    if as_json:
        _print_json(report)
        return
    _show(report, {})
    if live is None:
        _say(
            f"to keep it in step as memories change: REVERIE_MIRROR__DIR={report['dir']} "
            "(or mirror.dir in reverie.toml)"
        )
    _exit_on_trouble(report)


@app.command()
def sync(
    db: DbOpt = None,
    directory: DirOpt = None,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch", help="Keep syncing as files change, until interrupted (needs: pip install 'reverie[mirror]')."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring the markdown mirror and the memory in step. What people changed in its files comes back: an
    edited file updates its memory (kept in its history), a deleted file invalidates its memory (never
    forgets it), a new file under facts/ is added. Then every change of the memory is written to the files.
    An edit that meets a change in the store is a conflict: both are kept (the store's version under
    conflicts/) and reported; copy it over your file to take it, or delete it to keep yours. Exits 1 when a
    sync met a conflict or a file it could not read."""
    with _memory(db) as mem:
        if not watch:
            report = mem.sync_mirror(directory)
            if as_json:
                _print_json(report)
            else:
                _show(report, mem.short_ids(_ids(report)))
            _exit_on_trouble(report)
            return
        from reverie.mirror import mirror_of
        from reverie.mirror import watch as watch_mirror

        mirror = mirror_of(mem, directory)
        _say(f"watching {mirror.root} (Ctrl-C stops)")

        def show(rep: Any) -> None:
            data = rep.to_dict()
            if as_json:
                _print_json(data)
            elif _changed(data):
                _show(data, mem.short_ids(_ids(data)))

        watch_mirror(mem, mirror, on_report=show)


def _ids(report: dict[str, Any]) -> list[str]:
    return [
        *report["added"],
        *report["updated"],
        *report["invalidated"],
        *(c["memory_id"] for c in report["conflicts"]),
    ]


def _changed(report: dict[str, Any]) -> bool:
    keys = ("added", "updated", "invalidated", "conflicts", "errors", "notes", "written", "removed")
    return any(report[k] for k in keys)


def _show(report: dict[str, Any], short: dict[str, str]) -> None:
    counts = [
        f"{len(report['added'])} added",
        f"{len(report['updated'])} updated",
        f"{len(report['invalidated'])} invalidated",
        f"{report['written']} files written",
        f"{report['removed']} removed",
    ]
    _say(f"synced {report['dir']}: " + ", ".join(counts))
    for key, verb in (("added", "added"), ("updated", "updated"), ("invalidated", "invalidated")):
        for memory_id in report[key]:
            _say(f"  {verb} {short.get(memory_id, memory_id)}")
    for c in report["conflicts"]:
        memory_id = short.get(c["memory_id"], c["memory_id"])
        _say(
            f"  conflict: memory {memory_id} changed in the store and in {c['file']}; both kept (the store's "
            f"version: {c['store_copy']}). Copy it over the file to take it, or delete it to keep the file"
        )
    for e in report["errors"]:
        _say(f"  not read: {e['file']}: {e['error']}")
    for n in report["notes"]:
        _say(f"  note: {n['file']}: {n['note']}")
    failure = report.get("failure")
    if failure:
        _say(
            f"  the mirror could not be written at {failure.get('at')} ({failure.get('error')}); this sync caught it up"
        )


def _exit_on_trouble(report: dict[str, Any]) -> None:
    if report["conflicts"] or report["errors"]:
        raise typer.Exit(1)


__all__ = ["mirror_command", "sync"]
