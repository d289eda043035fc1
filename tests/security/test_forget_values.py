"""After ``forget`` / ``forget_user`` no file reverie writes quotes what the forgotten memories said: a
supersede's reason quotes the value it replaced ('4321' → '9876') in the successor's history and in the ops
log (and its rotated files); both are rewritten without the text — on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reverie import Memory
from reverie.editing import FORGOTTEN_NOTE
from reverie.results import Action
from tests.security.test_forget import _pg_rows_with, _sqlite_rows_with

OLD, NEW = "4321", "9876"


def _files_with(root: Path, needle: str) -> list[str]:
    """Every file under ``root`` (databases, write-ahead logs, ops logs, rotated logs) holding ``needle``."""
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()
    )


def _rows_with(target: str, needle: str) -> list[tuple[str, str]]:
    return (
        _pg_rows_with(target, needle) if target.startswith("postgresql://") else _sqlite_rows_with(Path(target), needle)
    )


def _supersede(mem: Memory, user: str = "u") -> tuple[str, str]:
    old = mem.add(f"My door code is {OLD}", user_id=user)
    new = mem.add(f"Actually my door code is {NEW} now", user_id=user)
    assert new.action is Action.SUPERSEDE and f"'{OLD}' → '{NEW}'" in new.reason, new.reason
    assert old.id is not None and new.id is not None
    return old.id, new.id


def test_forget_rewrites_what_other_memories_and_the_ops_log_quote_of_it(
    make_memory: Any, store_target: str, tmp_path: Path
) -> None:
    mem: Memory = make_memory(opslog={"path": str(tmp_path / "ops-log.jsonl"), "rotate_bytes": 1024})
    old, new = _supersede(mem)
    for i in range(12):  # enough lines that the quoting entry is in a rotated file
        mem.add(f"Filler fact number {i} about the garden", user_id="u", infer=False)
    mem.ops.flush()
    assert len(mem.ops.files()) > 1
    assert any(OLD in h.reason for h in mem.history(new))  # the successor's history quotes the old value
    assert _files_with(tmp_path, OLD) and _rows_with(store_target, OLD)

    mem.forget(old)
    mem.ops.flush()

    assert _rows_with(store_target, OLD) == []
    if not store_target.startswith("postgresql://"):
        assert _files_with(tmp_path, OLD) == []
    else:
        assert [f for f in _files_with(tmp_path, OLD) if "ops-log" in f] == []
    created = next(h for h in mem.history(new) if h.event == "created")
    assert created.reason == FORGOTTEN_NOTE and created.data == {"redacted": FORGOTTEN_NOTE}
    assert mem.get(new).content == f"Actually my door code is {NEW} now"  # the successor itself stays
    entries = [json.loads(x) for f in mem.ops.files() for x in f.read_text(encoding="utf-8").splitlines()]
    rewritten = next(e for e in entries if e.get("id") == new and e["op"] == "write")
    assert rewritten["redacted"] == "forgotten" and rewritten["action"] == "SUPERSEDE" and "reason" not in rewritten
    assert all(e["store"] == entries[0]["store"] for e in entries)
    kept = [e for e in entries if e["op"] == "add" and e.get("redacted") is None]
    assert len(kept) == 12 and all("reason" in e for e in kept)  # the other entries keep their text


def test_forget_user_leaves_no_value_of_the_user_in_any_file(
    make_memory: Any, store_target: str, tmp_path: Path
) -> None:
    log = {"path": str(tmp_path / "ops-log.jsonl"), "rotate_bytes": 1024, "log_text": True}
    mem: Memory = make_memory(opslog=log)
    _supersede(mem, "maya")
    mem.add("I live on Harbour Lane", user_id="maya")
    question = f"is my door code still {OLD}?"
    mem.search(question, user_id="maya")  # a query with the value, kept as text (log_text)
    _supersede(mem, "leo")
    mem.ops.flush()
    assert _files_with(tmp_path, question) and _rows_with(store_target, "harbour lane")

    report = mem.forget_user("maya")
    mem.ops.flush()

    assert report["memories"] == 3
    assert _rows_with(store_target, "harbour lane") == []
    assert _files_with(tmp_path, "Harbour Lane") == [] and _files_with(tmp_path, question) == []
    entries = [json.loads(x) for f in mem.ops.files() for x in f.read_text(encoding="utf-8").splitlines()]
    maya = [e for e in entries if e.get("user_id") == "maya" and e["op"] != "forget_user"]
    assert maya and all(e.get("redacted") == "forgotten" for e in maya)
    leo = [e for e in entries if e.get("user_id") == "leo"]
    assert leo and all("redacted" not in e for e in leo)  # another user's entries keep their text
    assert any(OLD in str(e.get("reason", "")) for e in leo)
