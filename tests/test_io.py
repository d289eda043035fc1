"""Import/export formats: conversation JSON, LoCoMo, JSONL, seed 004's markdown tree."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reverie import io
from reverie.errors import InvalidInputError
from reverie.model import Layer, MemoryRecord, Status

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev5.json"


def test_locomo_date() -> None:
    assert io.parse_locomo_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert io.parse_locomo_date("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9, tzinfo=UTC)
    assert io.parse_locomo_date("sometime") is None


def test_sample_conversation_parses() -> None:
    import importlib.resources

    data = json.loads(importlib.resources.files("reverie").joinpath("sample/conversation.json").read_text())
    conv = io.load_conversation(data)
    assert len(conv.turns) == 35 and conv.user_id == "maya"
    ids = {t.turn_id for t in conv.turns}
    assert all(set(q["evidence"]) <= ids for q in conv.questions)
    assert conv.turns[0].when == datetime(2025, 3, 3, 9, 15, tzinfo=UTC)


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the checkout")
def test_locomo_conversation_parses() -> None:
    data = json.loads(LOCOMO.read_text())
    conv = io.load_conversation(data[0])
    assert len(conv.turns) > 100 and conv.turns[0].turn_id == "D1:1"
    assert all(t.when is not None for t in conv.turns)


@pytest.mark.parametrize("bad", [42, [], [1, 2], {"foo": 1}, {"sessions": [{"turns": [{"x": 1}]}]}])
def test_bad_conversations(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        io.load_conversation(bad)


def _record(**kw: Any) -> MemoryRecord:
    base: dict[str, Any] = dict(
        content="Maya prefers window seats\n---\nwith a second paragraph",
        user_id="maya",
        category="preference",
        layer=Layer.SEMANTIC,
        status=Status.SUPERSEDED,
        entities=["entity://x/y"],
        metadata={"turn": "S1:8", "nested": {"a": [1, 2.5, None]}},
        importance=0.83,
        created_at=datetime(2025, 3, 3, 9, 15, 7, 123456, tzinfo=UTC),
        valid_until=datetime(2025, 4, 1, tzinfo=UTC),
    )
    base.update(kw)
    return MemoryRecord(**base)


def test_markdown_round_trip_loses_nothing(tmp_path: Path) -> None:
    recs = [_record(), _record(content="second: ümlauts and emoji 🎉", category="../../etc/passwd")]
    assert io.export_markdown(recs, tmp_path) == 2
    files = sorted(tmp_path.rglob("*.md"))
    assert len(files) == 2
    for f in files:
        rel = f.relative_to(tmp_path)
        assert rel.parts[0] == "facts" and rel.parts[1] == "2025-03-03"
        assert ".." not in rel.parts
    assert {f.name.split("-")[0] for f in files} == {"preference", "etc_passwd"}
    back = {r.id: r for r in io.iter_markdown(tmp_path)}
    for rec in recs:
        assert back[rec.id].to_dict() == rec.to_dict()


def test_markdown_rejects_malformed(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError):
        io.from_markdown("no front matter")
    with pytest.raises(InvalidInputError):
        io.from_markdown("---\n: : :\n---\nx")
    with pytest.raises(InvalidInputError):
        io.from_markdown("---\ncolour: red\ncontent_hash: x\n---\nx")  # unknown field


def test_jsonl_round_trip_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    rec = _record()
    assert io.dump_jsonl([rec], path) == 1
    (row,) = list(io.read_jsonl(path))
    assert MemoryRecord.from_dict(row).to_dict() == rec.to_dict()
    path.write_text('{"content": "ok"}\n{not json\n')
    with pytest.raises(InvalidInputError, match=r"m\.jsonl:2"):
        list(io.read_jsonl(path))
