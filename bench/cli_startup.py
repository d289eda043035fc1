"""How long the ``reverie`` command takes to answer: ``--version``, ``--help``, and the commands that read a
store (``users``, ``list``, ``stats``: no embedding model loaded) against one that embeds (``search``).

Each command runs ``--repeat`` times in a fresh interpreter (the installed ``reverie`` script, as a user
runs it); the median and the best are reported. Target: ``--version`` and ``--help`` under 0.3 s.

    python bench/cli_startup.py                 # writes bench/results/cli_startup.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _benchlib import RESULTS_DIR, console, finish, fmt, load_average, machine_info, now_iso

TARGET_S = 0.3


def _command() -> list[str]:
    script = shutil.which("reverie")
    return [script] if script else [sys.executable, "-m", "reverie"]


def _time(cmd: list[str], repeat: int, env: dict[str, str]) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env, timeout=300)
        runs.append(time.perf_counter() - start)
    return {"median_s": round(statistics.median(runs), 3), "best_s": round(min(runs), 3), "n": repeat}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10, help="runs per command (default 10)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "cli_startup.json")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    base = _command()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "m.db")
        env = {**os.environ, "REVERIE_OPSLOG__PATH": str(Path(tmp) / "ops.jsonl")}
        subprocess.run([*base, "add", "Maya is allergic to penicillin", "-u", "maya", "--db", db], env=env, check=True)
        commands = {
            "--version": ["--version"],
            "--help": ["--help"],
            "users": ["users", "--db", db],
            "list": ["list", "-u", "maya", "--db", db],
            "stats": ["stats", "--db", db],
            "search (loads the model)": ["search", "penicillin", "-u", "maya", "--db", db],
        }
        results = {name: _time([*base, *cmd], args.repeat, env) for name, cmd in commands.items()}
    doc = {
        "benchmark": "cli_startup",
        "at": now_iso(),
        "machine": machine_info(),
        "load_average_after": load_average(),
        "command": base,
        "target_s": TARGET_S,
        "results": results,
        "meets_target": all(results[c]["median_s"] < TARGET_S for c in ("--version", "--help")),
    }
    return finish(doc, args.out, quiet=args.quiet, show=_show)


def _show(doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"reverie command start-up ({doc['results']['--version']['n']} runs each)")
    for col in ("command", "median s", "best s"):
        table.add_column(col)
    for name, res in doc["results"].items():
        table.add_row(name, fmt(res["median_s"]), fmt(res["best_s"]))
    console().print(table)
    console().print(f"--version and --help under {doc['target_s']} s: {doc['meets_target']}")


if __name__ == "__main__":
    main()
