"""Smoke test of bench/mirror.py: it runs end to end at a tiny size with the hash embedder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_mirror_bench_smoke(tmp_path: Path) -> None:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    import mirror

    out = tmp_path / "mirror.json"
    mirror.main(["--n", "40", "--batch", "15", "--embedder", "hash", "--verbatim", "--out", str(out), "--quiet"])
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["benchmark"] == "mirror-write-cost" and saved["batches"] == 3
    assert saved["memories_stored"] == {"on": 40, "off": 40} and saved["files_written"] == 40
    assert saved["items_per_s"]["on"] > 0 and saved["items_per_s"]["off"] > 0
    assert saved["noop_sync_written"] == 0
