"""Seed 004's markdown mirror: every field survives export → import, and paths are sanitised."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from reverie import Memory, io
from reverie.embed.testing import HashEmbedder
from reverie.model import Layer, MemoryRecord, Status
from reverie.store.base import MemoryFilter

T = datetime(2025, 3, 3, 9, 15, 7, 123456, tzinfo=UTC)


def export_all(mem: Memory, root: Path) -> int:
    def records():
        for batch in mem.store.scan(MemoryFilter.everything()):
            yield from batch

    return io.export_markdown(records(), root)


def test_round_trip_through_two_memories_loses_nothing(mem: Memory, tmp_path: Path) -> None:
    a = mem.add(
        "Maya is allergic to penicillin",
        user_id="maya",
        metadata={"turn": "S1:3", "n": [1, 2.5, None]},
        source="human",
        infer=False,
    )
    # the same content for two users in one batch: same instant, same content hash
    twins = mem.add_many(
        [{"content": "I like green tea", "user_id": "maya"}, {"content": "I like green tea", "user_id": "bob"}],
        infer=False,
    )
    crlf = mem.add("line one\r\nline two\rline three\n", user_id="maya", infer=False)
    mem.pin(a.id)
    mem.promote(a.id)
    mem.invalidate(crlf.id, "superseded by a cleaner note")
    mem.get(a.id)
    root = tmp_path / "mirror"
    assert export_all(mem, root) == 4
    before = {r.id: r.to_dict() for b in mem.store.scan(MemoryFilter.everything()) for r in b}
    assert len({twins[0].id, twins[1].id}) == 2

    with Memory(tmp_path / "copy.db", embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as copy:
        assert copy.restore(io.iter_markdown(root)) == {"restored": 4, "skipped": 0, "rejected": 0, "errors": []}
        after = {r.id: r.to_dict() for b in copy.store.scan(MemoryFilter.everything()) for r in b}
        assert after == before
        assert copy.restore(io.iter_markdown(root)) == {
            "restored": 0,
            "skipped": 4,
            "rejected": 0,
            "errors": [],
        }  # idempotent
        restored = copy.store.get([crlf.id])[crlf.id]
        assert restored.content == "line one\r\nline two\rline three\n" and restored.status is Status.INVALIDATED
        assert copy.store.get([a.id])[a.id].layer is Layer.EPISODIC
        assert copy.search("green tea", user_id="bob")[0].memory.id in {t.id for t in twins}


def test_yaml_line_breaks_and_separators_survive(tmp_path: Path) -> None:
    rec = MemoryRecord(
        content="  padded\n---\nnot front matter  \n\n",
        created_at=T,
        category="note",
        emotion_label="joy\n---\n",
        metadata={
            "nel": "x\x85y",
            "ls": "a\u2028b\u2029c",
            "cr": "p\rq",
            "tab": "\tlead",
            "date_like": "2025-03-03",
            "multi\nline key": "v",
            "yes": "no",
        },
    )
    io.export_markdown([rec], tmp_path)
    (back,) = io.iter_markdown(tmp_path)
    assert back.to_dict() == rec.to_dict()


def test_paths_are_sanitised(tmp_path: Path) -> None:
    hostile = [
        MemoryRecord(content="a", created_at=T, category="../../etc/passwd"),
        MemoryRecord(content="b", created_at=T, category="/abs/olute"),
        MemoryRecord(content="c", created_at=T, content_hash="../../../../tmp/pwned"),
        MemoryRecord(content="d", created_at=T, category="\x00nul\\back\\slash"),
        MemoryRecord(content="e", created_at=T, id="../../id-escape"),
    ]
    root = tmp_path / "out"
    assert io.export_markdown(hostile, root) == len(hostile)
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert len(files) == len(hostile)
    for f in files:
        rel = f.relative_to(root)
        assert rel.parts[:2] == ("facts", "2025-03-03") and len(rel.parts) == 3
        assert all(ch.isalnum() or ch in "_-." for ch in rel.name), rel.name
    assert {r.id for r in io.iter_markdown(root)} == {r.id for r in hostile}


def test_import_ignores_links_and_files_outside_the_layout(tmp_path: Path) -> None:
    root = tmp_path / "mirror"
    io.export_markdown([MemoryRecord(content="inside", created_at=T)], root)
    outside = tmp_path / "secret"
    outside.mkdir()
    io.export_markdown([MemoryRecord(content="outside", created_at=T)], outside)
    day = root / "facts" / "2025-03-03"
    (day / "linked.md").symlink_to(next((outside / "facts" / "2025-03-03").glob("*.md")))
    (root / "facts" / "2099-01-01").symlink_to(outside / "facts" / "2025-03-03", target_is_directory=True)
    (root / "stray.md").write_text((day / next(day.glob("fact-*.md")).name).read_text())
    assert [r.content for r in io.iter_markdown(root)] == ["inside"]
