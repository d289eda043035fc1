"""A process killed during a batch import loses nothing it acknowledged; the next open works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from reverie import Memory
from reverie.embed.testing import HashEmbedder

WRITER = r"""
import sys
from reverie import Memory
from reverie.embed.testing import HashEmbedder
mem = Memory(sys.argv[1], embedder=HashEmbedder(64), config={"opslog": {"enabled": False}})
i = 0
while True:
    batch = [f"imported fact number {i + j} about topic {(i + j) % 17}" for j in range(25)]
    results = mem.add_many(batch, user_id="u", infer=False)
    for r in results:
        print(r.id, flush=True)   # acknowledged
    i += 25
"""


def test_killed_batch_import_loses_nothing_acknowledged(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True, env=env)
    acked: list[str] = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while len(acked) < 300 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            acked.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    acked.extend(x.strip() for x in proc.stdout.read().splitlines() if x.strip())
    proc.stdout.close()
    assert len(acked) >= 300
    with Memory(db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        stored = mem.store.get(acked)
        assert len(stored) == len(acked)
        hits = mem.search("imported fact number 7 about topic 7", user_id="u", k=5)
        assert hits and hits[0].memory.content.startswith("imported fact number")
        mem.add("after the crash", user_id="u")
        assert mem.search("after the crash", user_id="u")[0].memory.content == "after the crash"
