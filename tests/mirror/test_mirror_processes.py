"""Two processes writing one mirror: two writer processes update the same memories of one store (SQLite file
or PostgreSQL) at the same time, each with the mirror on; meanwhile this process reads every mirror file over
and over. No read ever sees a partial file (each write is a whole file renamed into place, under the mirror's
lock), and when both are done every file says what the store says (the last writer read the newest state).

This file is also the worker program: ``python test_mirror_processes.py JSON``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"
MEMORIES = 8
ROUNDS = 5
#: a long text: a file written in pieces would be caught half written
PADDING = " ".join(f"word{i}" for i in range(400))
TEXT = re.compile(r"memory (\d+) by (start|worker [01]) round (\d+) " + re.escape(PADDING))


def text(i: int, who: str, round_no: int) -> str:
    return f"memory {i} by {who} round {round_no} {PADDING}"


def _memory(target: str, mirror: str) -> Any:
    from reverie import Memory
    from reverie.embed.testing import HashEmbedder

    return Memory(target, config={"mirror": {"dir": mirror}, "opslog": {"enabled": False}}, embedder=HashEmbedder(64))


def worker(args: dict[str, Any]) -> None:
    from reverie.errors import ConflictError

    with _memory(args["target"], args["mirror"]) as mem:
        who = f"worker {args['n']}"
        for round_no in range(ROUNDS):
            for i, memory_id in enumerate(args["ids"]):
                for _attempt in range(100):  # the other worker changed it first: read it again and retry
                    try:
                        mem.update(memory_id, text(i, who, round_no))
                        break
                    except ConflictError:
                        continue
            mem.add(text(100 + round_no, who, round_no), infer=False)


def _check_whole(path: Path) -> bool:
    """A mirror file read back is a whole memory file: front matter, one of the texts, a final line break."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:  # renamed away between listing and reading: not a partial file
        return False
    assert data.startswith(b"---\n") and data.endswith(b"\n"), (path, data[-200:])
    body = data[data.index(b"\n---\n", 4) + 5 :].decode("utf-8")
    assert TEXT.fullmatch(body.rstrip("\n")), (path, data[-200:])
    return True


def test_two_processes_write_one_mirror_and_no_file_is_torn(store_target: str, tmp_path: Path) -> None:
    from reverie import io

    mirror = tmp_path / "mirror"
    with _memory(store_target, str(mirror)) as mem:
        ids = [r.id for r in mem.add_many([text(i, "start", 0) for i in range(MEMORIES)], infer=False)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, json.dumps({"target": store_target, "mirror": str(mirror), "n": n, "ids": ids})],
            env=env,
            stderr=subprocess.PIPE,
        )
        for n in (0, 1)
    ]
    reads = 0
    deadline = time.monotonic() + 300
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        for path in sorted((mirror / "facts").rglob("*.md")):
            reads += _check_whole(path)
        time.sleep(0.02)  # leave the writers the CPU
    for p in procs:
        _out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err.decode()
    assert reads > MEMORIES  # the files were read while both wrote
    with _memory(store_target, str(mirror)) as mem:
        report = mem.sync_mirror()
        assert (report["conflicts"], report["errors"], report["written"]) == ([], [], 0)  # already in step
        stored = {r.id: r for r in mem.list(all_users=True, limit=1000)}
        assert len(stored) == MEMORIES + 2 * ROUNDS
        for rec in stored.values():
            path = mirror / io.markdown_path(rec)
            assert _check_whole(path)
            assert io.markdown_fields(path.read_text(encoding="utf-8"))["content"] == rec.content + "\n"
        for i in range(MEMORIES):  # each shared memory ends with one worker's last round
            assert stored[ids[i]].content in {text(i, f"worker {n}", ROUNDS - 1) for n in (0, 1)}


if __name__ == "__main__":
    sys.path.insert(0, str(SRC))
    worker(json.loads(sys.argv[1]))
