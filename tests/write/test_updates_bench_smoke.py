"""Smoke test of ``bench/updates.py``: it runs end to end on a few items with the hash embedder and
writes JSON with the expected keys and sane values (the real numbers come from running it by hand with
the local model, see bench/README.md)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_updates_bench_smoke(tmp_path: Path) -> None:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    bench = importlib.import_module("updates")
    out = tmp_path / "updates.json"
    bench.main(
        [
            "--parts",
            "updates,compatible,notes,demo",
            "--embedder",
            "hash",
            "--limit",
            "3",
            "--notes-per-writer",
            "5",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    doc = json.loads(out.read_text(encoding="utf-8"))
    for mode in ("infer", "verbatim"):
        summary = doc[f"updates_{mode}"]["summary"]["all"]
        assert summary["n"] == 3 and 0.0 <= summary["newest_first"] <= 1.0
        assert doc[f"compatible_{mode}"]["summary"]["all"]["n"] == 3
    assert "missed_supersede" in doc["updates_infer"]["summary"]["all"]
    assert doc["notes"]["notes"] == 20 and doc["notes"]["errors"] == []
    assert doc["demo"]["questions"] == 9
    assert bench.split_of(2, {}) == "heldout" and bench.split_of(0, {"split": "sealed"}) == "sealed"
