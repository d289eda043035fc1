"""The bad-input corpus of the ``reverie`` command: command lines (and environments, and standard input) with
one bad part each — what a shell can pass: text, empty and oversized arguments, undecodable bytes (a shell
hands Python an invalid UTF-8 byte as a lone surrogate, ``\\udcff``), malformed JSON, out-of-range numbers,
unknown names, paths that are missing, special or not writable, broken configuration.

Every case must end with a one-line error and exit code 1 (a reverie error) or 2 (a usage error from the
argument parser), or — where marked ``accepted`` — exit 0 for the documented reason; never a traceback.
``$DB`` stands for the seeded database, ``$ID`` for one of its memory ids, ``$TMP`` for a scratch directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: a byte that is not UTF-8, as Python receives it in argv (surrogateescape)
UNDECODABLE = "\udcff"
DEEP_JSON = '{"k":' * 60_000 + "1" + "}" * 60_000
HUGE_INT_JSON = '{"n": ' + "9" * 4400 + "}"


@dataclass
class CliCase:
    name: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | bytes | None = None
    #: exit 0 is right: why (``None``: the case must be refused)
    accepted: str | None = None


BAD_TEXT = ["", "   ", "\t\n", UNDECODABLE, f"ok {UNDECODABLE} ok", "x" * 100_001]
BAD_SCOPE = ["", "  ", "u" * 257, UNDECODABLE]
BAD_ID = ["", "no-such-id", "x" * 200, UNDECODABLE, "../../etc/passwd", "%s%n", "-1"]
BAD_JSON = [
    DEEP_JSON,
    HUGE_INT_JSON,
    "{not json",
    "[1, 2]",
    "5",
    '"text"',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"k": "\\ud800"}',
    '{"k": "' + "x" * 70_000 + '"}',
    '{"l": ' + "[" * 600 + "]" * 600 + "}",
]
BAD_WHEN = [
    "not a date",
    "2024-13-45",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    UNDECODABLE,
    "",
    "2024-01-01T00:00:00+00:00" + "0" * 100,
]
BAD_COUNT = ["0", "-1", "abc", "1.5", "1000000", "9" * 30, "9" * 5000]
BAD_IMPORTANCE = ["2", "-1", "nan", "inf", "abc", "1e400"]
ID_COMMANDS = ["get", "show", "history", "pin", "unpin", "promote", "demote", "reactivate", "undo-consolidation"]
ALL_COMMANDS = [
    "init",
    "add",
    "observe",
    "flush",
    "update",
    "search",
    "context",
    "get",
    "show",
    "list",
    "users",
    "history",
    "stats",
    "pin",
    "unpin",
    "promote",
    "demote",
    "reactivate",
    "undo-consolidation",
    "invalidate",
    "forget",
    "backup",
    "forget-user",
    "feedback",
    "dream",
    "compact",
    "maintain",
    "tick",
    "import",
    "topics",
    "documents",
    "ingest-code",
    "reembed",
    "export",
    "mcp",
    "serve",
]


#: the cases that exit 0, and why that is right
ACCEPTED = {
    **{
        f"observe text[{i}]": "observe answers a message it cannot keep with SKIP and the reason, storing "
        "nothing (the observer's contract, as in the Python API)"
        for i in range(len(BAD_TEXT))
    },
    "list --layer[1]": "an empty --layer is no filter",
    "import path[1]": "an empty directory is a markdown tree with nothing in it: nothing is imported",
    "import path[5]": "a directory without memory files imports nothing",
}


class _Cases:
    """Collects the cases; each group below adds its own."""

    def __init__(self) -> None:
        self.out: list[CliCase] = []

    def __call__(
        self, name: str, *args: str, env: dict[str, str] | None = None, stdin: str | bytes | None = None
    ) -> None:
        self.out.append(CliCase(name, list(args), env or {}, stdin, ACCEPTED.get(name)))


DB = ("--db", "$DB")


def _text(case: _Cases) -> None:
    """Text arguments."""
    db = DB
    for i, v in enumerate(BAD_TEXT):
        case(f"add text[{i}]", "add", v, *db, "-u", "alice")
        case(f"observe text[{i}]", "observe", v, *db, "-u", "alice")
    for i, v in enumerate([*BAD_TEXT, "q" * 4001]):
        case(f"search query[{i}]", "search", v, *db, "-u", "alice")
        case(f"context query[{i}]", "context", v, *db, "-u", "alice")
    case("add stdin not utf-8", "add", "-", *db, "-u", "alice", stdin=b"\xff\xfe\x00bad")
    case("add stdin empty", "add", "-", *db, "-u", "alice", stdin="")
    case("observe stdin not utf-8", "observe", "-", *db, "-u", "alice", stdin=b"\xc3\x28")


def _scopes(case: _Cases) -> None:
    """Scope options."""
    db = DB
    for i, v in enumerate(BAD_SCOPE):
        for opt in ("-u", "-a", "-s"):
            case(f"add {opt}[{i}]", "add", "a valid memory", *db, "-u", "alice", opt, v)
        case(f"search -u[{i}]", "search", "bike", *db, "-u", v)
        case(f"list -u[{i}]", "list", *db, "-u", v)
        case(f"stats -u[{i}]", "stats", *db, "-u", v)
        case(f"forget-user[{i}]", "forget-user", v, *db, "--yes")
        case(f"topics -u[{i}]", "topics", *db, "-u", v)


def _ids(case: _Cases) -> None:
    """Ids."""
    db = DB
    for i, v in enumerate(BAD_ID):
        for cmd in ID_COMMANDS:
            case(f"{cmd} id[{i}]", cmd, v, *db)
        case(f"forget id[{i}]", "forget", v, *db, "--yes")
        case(f"invalidate id[{i}]", "invalidate", v, "--reason", "moved", *db)
        case(f"feedback id[{i}]", "feedback", v, "--useful", *db)
        case(f"update id[{i}]", "update", v, "new text", *db)


def _json_values(case: _Cases) -> None:
    """JSON metadata."""
    db = DB
    for i, v in enumerate(BAD_JSON):
        case(f"add -m[{i}]", "add", "a valid memory", *db, "-u", "alice", "-m", v)
        case(f"update -m[{i}]", "update", "$ID", *db, "-m", v)


def _values(case: _Cases) -> None:
    """Times, numbers, names."""
    db = DB
    for i, v in enumerate(BAD_WHEN):
        case(f"add --when[{i}]", "add", "a valid memory", *db, "-u", "alice", "--when", v)
    for i, v in enumerate(BAD_COUNT):
        case(f"search -k[{i}]", "search", "bike", *db, "-u", "alice", "-k", v)
        case(f"list --limit[{i}]", "list", *db, "-u", "alice", "--limit", v)
        case(f"context --budget[{i}]", "context", "bike", *db, "-u", "alice", "--budget", v)
    for i, v in enumerate(BAD_IMPORTANCE):
        case(f"update --importance[{i}]", "update", "$ID", *db, "--importance", v)
    for i, v in enumerate(["attic", "", UNDECODABLE]):
        case(f"promote --layer[{i}]", "promote", "$ID", *db, "--layer", v)
        case(f"list --layer[{i}]", "list", *db, "-u", "alice", "--layer", v)
        case(f"search --status[{i}]", "search", "bike", *db, "-u", "alice", "--status", v or "bogus")
        case(f"list --store[{i}]", "list", *db, "-u", "alice", "--store", v or "lukewarm")
        case(f"observe --role[{i}]", "observe", "hello there", *db, "-u", "alice", "--role", v or "system")
        case(f"add --source[{i}]", "add", "a valid memory", *db, "-u", "alice", "--source", v or "rumour")
    for i, v in enumerate(["", "c" * 65, UNDECODABLE]):
        case(f"update --category[{i}]", "update", "$ID", *db, "--category", v)
    case("invalidate empty reason", "invalidate", "$ID", "--reason", "", *db)
    case("invalidate reason too long", "invalidate", "$ID", "--reason", "r" * 5000, *db)
    for i, v in enumerate(["nap", ",", UNDECODABLE, "decay,nap"]):
        case(f"dream --steps[{i}]", "dream", *db, "--steps", v)
    for i, v in enumerate(["soon", "0s", "-1m", "1x", ""]):
        case(f"dream --every[{i}]", "dream", *db, "--every", v, "--max-runs", "1")
        case(f"maintain --cycle-every[{i}]", "maintain", *db, "--cycle-every", v)
    for i, v in enumerate(["0", "-1", "abc"]):
        case(f"dream --max-runs[{i}]", "dream", *db, "--every", "1h", "--max-runs", v)


def _servers(case: _Cases) -> None:
    """Servers: refused before anything listens."""
    db = DB
    for i, v in enumerate(["-1", "70000", "abc", "9" * 30]):
        case(f"serve --port[{i}]", "serve", *db, "--port", v)
        case(f"mcp --port[{i}]", "mcp", *db, "--http", "--port", v)
    for i, v in enumerate(["0", "-1", "abc", "2"]):  # 2 workers: SQLite takes one writer
        case(f"serve --workers[{i}]", "serve", *db, "--workers", v, "--port", "0")
    case("serve public bind without a credential", "serve", *db, "--host", "0.0.0.0", "--port", "0")
    case("serve short token", "serve", *db, "--port", "0", env={"REVERIE_API_TOKEN": "short"})
    case("serve bad --dream-every", "serve", *db, "--port", "0", "--dream-every", "soon")
    for i, v in enumerate(["bogus", " , ", "recall,nope", UNDECODABLE]):
        case(f"mcp --tools[{i}]", "mcp", *db, "--tools", v)
    for i, v in enumerate(BAD_SCOPE):
        case(f"mcp --user[{i}]", "mcp", *db, "--user", v)


def _paths(case: _Cases) -> None:
    """Paths."""
    db = DB
    case("export into /proc", "export", "/proc/self", "--markdown", *db)
    case("export into /dev/full", "export", "/dev/full", "--force", *db)
    case("export into a missing directory", "export", "$TMP/missing/out.jsonl", *db)
    case("export over a file", "export", "$TMP/existing.txt", *db)
    case("export markdown over a file", "export", "$TMP/existing.txt", "--markdown", *db)
    case("export markdown to stdout", "export", "-", "--markdown", *db)
    case("export undecodable path", "export", f"$TMP/{UNDECODABLE}/x.jsonl", *db)
    for i, v in enumerate(["$TMP/existing.txt", "$TMP/missing/b.db", "/proc/self/b.db", "$TMP", ""]):
        case(f"backup dest[{i}]", "backup", v, *db)
    for i, v in enumerate(
        ["$TMP/missing.jsonl", "$TMP/empty-dir", "/dev/zero", "$TMP/garbage.jsonl", "", "/proc/self"]
    ):
        case(f"import path[{i}]", "import", v, *db, "-u", "alice")
    case("import poisoned lines", "import", "$TMP/poisoned.jsonl", *db)
    for i, v in enumerate(["$TMP/missing", "", UNDECODABLE]):
        case(f"ingest-code path[{i}]", "ingest-code", v, *db, "-u", "alice")


def _database(case: _Cases) -> None:
    """The database."""
    for i, v in enumerate(
        ["$TMP/missing.db", "$TMP", "$TMP/missing/m.db", "$TMP/existing.txt", f"$TMP/{UNDECODABLE}.db"]
    ):
        case(f"list --db[{i}]", "list", "--db", v, "-u", "alice")
        case(f"get --db[{i}]", "get", "abc", "--db", v)
    case("add --db into a missing directory", "add", "a valid memory", "--db", "$TMP/missing/m.db", "-u", "alice")
    case("add --db a directory", "add", "a valid memory", "--db", "$TMP", "-u", "alice")


def _config(case: _Cases) -> None:
    """Configuration."""
    db = DB
    for i, (key, value) in enumerate(
        [
            ("REVERIE_CONFIG", "$TMP/bad.toml"),
            ("REVERIE_CONFIG", "$TMP/missing.toml"),
            ("REVERIE_CONFIG", "$TMP"),
            ("REVERIE_CONFIG", "$TMP/binary.toml"),
            ("REVERIE_CONFIG", "$TMP/wrong-values.toml"),
            ("REVERIE_LIMITS__MAX_CONTENT_BYTES", "abc"),
            ("REVERIE_LIMITS__MAX_CONTENT_BYTES", "-5"),
            ("REVERIE_READ__MMR", "maybe"),
            ("REVERIE_EMBEDDING__PROVIDER", "bogus"),
            ("REVERIE_DREAM__SCHEDULE__TICK_EVERY", "-1"),
        ]
    ):
        case(f"config[{i}] {key}", "list", *db, "-u", "alice", env={key: value})


def _keys(case: _Cases) -> None:
    """Keys."""
    db = DB
    case("keys create without a user", "keys", "create", "--name", "x", *db)
    case("keys create admin with a user", "keys", "create", "--name", "x", "--admin", "-u", "alice", *db)
    for i, v in enumerate(["", "n" * 65, UNDECODABLE]):
        case(f"keys create --name[{i}]", "keys", "create", "--name", v, "-u", "alice", *db)
    for i, v in enumerate(["", "000000000000", UNDECODABLE, "k" * 100]):
        case(f"keys revoke[{i}]", "keys", "revoke", v, *db)


def _parser(case: _Cases) -> None:
    """The parser: an unknown option and a missing argument, for every command."""
    db = DB
    for cmd in ALL_COMMANDS:
        case(f"{cmd} --bogus", cmd, "--bogus", *db)
    for cmd in [*ID_COMMANDS, "add", "observe", "search", "context", "invalidate", "backup", "import", "export"]:
        case(f"{cmd} missing argument", cmd, *db)
    case("unknown command", "remember-everything", *db)
    case("forget-user unconfirmed", "forget-user", "alice", *db, stdin="n\n")


def cli_cases() -> list[CliCase]:
    case = _Cases()
    for group in (_text, _scopes, _ids, _json_values, _values, _servers, _paths, _database, _config, _keys, _parser):
        group(case)
    return case.out


CLI_CASES = cli_cases()

__all__ = ["CLI_CASES", "UNDECODABLE", "CliCase", "cli_cases"]
