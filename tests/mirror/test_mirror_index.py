"""The mirror's journal of what it wrote, and its lock file."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from reverie.errors import ConflictError
from reverie.mirror.index import BOX, MEMORY, Entry, MirrorIndex, safe_relative
from reverie.mirror.lock import MirrorLock


def test_two_indexes_on_one_journal_replay_each_other(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    a, b = MirrorIndex(path), MirrorIndex(path)
    a.put(Entry("facts/d/a.md", MEMORY, "s1", "id-a", "box-1", "maya"))
    a.put(Entry("facts/d/b.md", MEMORY, "s2", "id-b", "box-1", "maya"))
    a.commit()
    b.refresh()
    assert b.find(MEMORY, "id-a") == Entry("facts/d/a.md", MEMORY, "s1", "id-a", "box-1", "maya")
    assert b.members("box-1") == ["id-a", "id-b"]
    b.put(Entry("facts/d/a.md", MEMORY, "s3", "id-a", "box-1", "maya", conflict="c3"))
    b.commit()
    with path.open("a", encoding="utf-8") as fh:  # a line still being written waits for its end
        fh.write('{"p":"facts/d/c.md","k":"memory","s":"s4","i":"id-c"')
    a.refresh()
    found = a.find(MEMORY, "id-a")
    assert found is not None and (found.sum, found.conflict) == ("s3", "c3") and a.find(MEMORY, "id-c") is None
    with path.open("a", encoding="utf-8") as fh:
        fh.write("}\n")
    a.refresh()
    assert a.find(MEMORY, "id-c") is not None


def test_hostile_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    lines = [
        {"p": "../../etc/passwd", "k": "memory", "s": "x", "i": "evil"},
        {"p": "/abs/path.md", "k": "memory", "s": "x", "i": "evil2"},
        {"p": "facts/ok.md", "k": "nonsense", "s": "x"},
        {"p": "facts/ok.md", "k": "memory", "s": 5},
        "not an object",
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n" + "[" * 100_000 + "\n")
    index = MirrorIndex(path)
    index.refresh()
    assert len(index) == 0
    assert [safe_relative(p) for p in ("a/b.md", "a/../b", "./a", "a\\b", "", "a//b")] == ["a/b.md", *[None] * 5]


def test_a_removed_memory_leaves_no_line_in_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    index = MirrorIndex(path)
    for n in range(5):
        index.put(Entry(f"facts/d/{n}.md", MEMORY, f"s{n}", f"id-{n}"))
        index.commit()
    index.put(Entry("boxes/d/box-1.md", BOX, "b", "box-1"))
    index.commit()
    index.remove("facts/d/3.md")
    index.commit()
    text = path.read_text(encoding="utf-8")
    assert "id-3" not in text and "3.md" not in text and len(text.splitlines()) == 5
    other = MirrorIndex(path)
    other.refresh()
    assert other.find(MEMORY, "id-3") is None and other.find(MEMORY, "id-4") is not None


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    lock_path = tmp_path / ".reverie" / "lock"
    first, second = MirrorLock(lock_path, timeout_s=0.2), MirrorLock(lock_path, timeout_s=0.2)
    with first.held(), first.held(), pytest.raises(ConflictError, match="locked"), second.held():  # re-entrant
        pass
    got = threading.Event()

    def take() -> None:
        with second.held():
            got.set()

    thread = threading.Thread(target=take)
    thread.start()
    thread.join(timeout=10)
    assert got.is_set()  # free again once the first let go
