"""What every command shares: the typer app, the consoles, the common options, opening the memory and printing."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from reverie.errors import InvalidInputError, NotFoundError, ReverieError

app = typer.Typer(
    name="reverie",
    help="reverie — long-term memory for AI agents: remember, recall, consolidate, forget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help is plain text: "reverie[plot]" stays as written, flags show no "<bool>"
)
#: characters a terminal acts on instead of showing: C0 controls but tab and newline, DEL, C1 controls (CSI …),
#: and the bidirectional overrides that reorder what is shown
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def safe_text(text: str) -> str:
    """``text`` with every character a terminal would act on (an escape sequence clearing the screen, setting
    the title, making a link; a bidi override) written as its escape (``\\x1b``, ``\\u202e``): stored text is
    shown, never executed by the terminal."""
    return _UNSAFE.sub(_escape_char, text)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_json(text: str) -> str:
    """JSON text with the characters :func:`safe_text` escapes written as JSON escapes (``\\u009b``): the same
    data, safe on a terminal (JSON itself escapes only C0 controls)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


class SafeConsole(Console):
    """A rich console that shows every string it prints (plain text and table cells) through
    :func:`safe_text`; its own styling is unaffected. It wraps long lines only on a terminal: printed to a pipe,
    a file or a log, a message (a path, an error) stays on one line, whatever width the console would guess."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if kwargs.get("soft_wrap") is None and not self.is_terminal:
            kwargs["soft_wrap"] = True
        super().print(*objects, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(safe_text(text), **kwargs)


console = SafeConsole(highlight=False)
err_console = SafeConsole(stderr=True, highlight=False)

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
    from reverie.store import check_target

    check_target(db)
    from reverie.config import Settings
    from reverie.memory import default_target

    explicit = db is not None
    path = Path(db).expanduser() if db is not None else default_target(Settings.load())
    if path.is_dir():
        raise InvalidInputError(f"{path} is a directory; --db takes a database file (e.g. {path / 'memory.db'})")
    if not create and not path.exists():
        where = f" --db {path}" if explicit else ""
        raise NotFoundError(
            f"no memory database at {path}. `reverie init{where}` creates one (so do add, observe and import; "
            "the servers with --create)"
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
    except OSError as exc:  # a file the command reads or writes (an export into /proc, a full disk …)
        _fail_os(exc)
    finally:
        mem.close()


def _fail(exc: BaseException) -> None:
    err_console.print(f"[red]error[/red] ({type(exc).__name__}): {escape(str(exc))}")
    raise typer.Exit(1)


def _fail_os(exc: OSError) -> None:
    where = f": {exc.filename}" if exc.filename else ""
    err_console.print(
        f"[red]error[/red] ({type(exc).__name__}): {escape(exc.strerror or str(exc))}{escape(str(where))}"
    )
    raise typer.Exit(1)


def _say(text: str) -> None:
    """Print text that may hold brackets (memory content, ids): never read as markup."""
    console.print(text, markup=False, soft_wrap=True)


def _read_stdin(what: str) -> str:
    """Standard input as text ('-' for an argument): UTF-8, or a one-line error."""
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8", "replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(InvalidInputError(f"{what} from standard input is not UTF-8 text ({exc.reason} at byte {exc.start})"))
    return ""  # pragma: no cover - _fail raises


def _print_json(data: Any) -> None:
    sys.stdout.write(safe_json(json.dumps(data, ensure_ascii=False, indent=2, default=str)) + "\n")


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
    except RecursionError:
        _fail(InvalidInputError("--metadata is nested too deep"))
    except ValueError:  # the only other ValueError: a number longer than Python reads
        _fail(InvalidInputError(f"--metadata holds a number longer than {sys.get_int_max_str_digits()} digits"))
    return None  # pragma: no cover - _fail raises


def _result_line(res: Any, short: dict[str, str]) -> str:
    """One write outcome for a person: what happened, to which memory, why."""
    action = res.action.value
    if res.id is None:
        return f"{action}  {res.reason}"
    return f"{action} {short.get(res.id, res.id)}  {res.reason}"


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err_console
    )
