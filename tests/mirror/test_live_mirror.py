"""The live markdown mirror on both backends: every change reaches the files as it happens, edits come back
through ``sync_mirror`` with history, a deleted file invalidates (never forgets), forget leaves no file and no
line quoting the memory, a conflict keeps both sides, hostile files are refused, and a sync that has nothing
to do leaves ``git status`` clean."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from reverie import Memory, SettableClock, io
from reverie.config import Settings
from reverie.mirror import FAILURE_KEY
from reverie.mirror.sync import DELETED, EDITED
from reverie.model import Status
from tests.dream.test_consolidate import CONSOLIDATE, SEED003, fade_days
from tests.interfaces.test_documents import converse


def _open(make_memory: Callable[..., Memory], tmp_path: Path, **mirror: Any) -> tuple[Memory, Path]:
    root = tmp_path / "mirror"
    return make_memory(mirror={"dir": str(root), **mirror}), root


def _file(root: Path, mem: Memory, memory_id: str) -> Path:
    return root / io.markdown_path(mem.peek(memory_id))


def _front(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n") and text.endswith("\n")
    front: dict[str, Any] = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    return front


def _body(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text[text.index("\n---\n", 4) + 5 :]


def _files(root: Path) -> dict[str, bytes]:
    """Every file under the mirror (its own state included), by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout


def test_every_change_is_written_as_it_happens(make_memory, tmp_path: Path) -> None:
    m, root = _open(make_memory, tmp_path)
    tea = m.add("Maya likes green tea", user_id="maya", infer=False).id
    path = _file(root, m, tea)
    assert _body(path) == "Maya likes green tea\n"
    front = _front(path)
    assert front["id"] == tea and front["user_id"] == "maya" and front["status"] == "active"
    assert path.parent.name == "2025-03-01" and path.name.startswith("fact-20250301T090000")

    m.update(tea, "Maya likes oolong tea")  # the text changes, the file keeps its name
    assert _body(path) == "Maya likes oolong tea\n"
    m.pin(tea)
    assert _front(path)["pinned"] is True

    porto = m.add("Maya lives in Porto", user_id="maya").id
    lyon = m.add("Maya lives in Lyon now", user_id="maya")
    assert lyon.action.value == "SUPERSEDE" and porto in lyon.ids
    old, new = _file(root, m, porto), _file(root, m, lyon.id)
    front = _front(old)
    assert front["status"] == "superseded" and front["superseded_by"] == lyon.id
    assert (old.parent / front["successor"]).resolve() == new.resolve()  # linked to its successor's file
    assert _body(new) == "Maya lives in Lyon now\n"

    m.invalidate(tea, "she stopped drinking tea")
    assert _front(path)["status"] == "invalidated" and _front(path)["valid_until"] is not None
    state = root / ".reverie"
    assert (state / ".gitignore").read_text().splitlines()[-1] == "*"  # the mirror's own state stays out of git
    for rel, data in _files(root).items():
        if rel.endswith(".md"):  # UTF-8, \n line ends, a final line break
            assert b"\r" not in data and data.endswith(b"\n"), rel


def test_a_search_rewrites_no_file(make_memory, tmp_path: Path, clock: SettableClock) -> None:
    m, root = _open(make_memory, tmp_path)
    m.add_many(["Maya likes green tea", "Maya plays the cello", "Maya's bike is blue"], user_id="maya", infer=False)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (root / "facts").rglob("*.md")}
    clock.advance(days=3)
    for _ in range(3):
        hits = m.search("what does Maya play", user_id="maya")
        assert hits
        m.get(hits[0].memory.id)
    m.close()  # the access updates are written
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (root / "facts").rglob("*.md")}
    assert after == before


def test_boxes_consolidation_and_dream_documents_are_written(make_memory, tmp_path: Path, clock: SettableClock) -> None:
    m, root = _open(make_memory, tmp_path)
    converse(m, clock)  # two sessions, each sealed into a memory box
    boxes = m.store.sealed_boxes("maya")
    assert len(boxes) == 2
    for box in boxes:
        path = root / "boxes" / box.sealed_at.strftime("%Y-%m-%d") / f"box-{box.id}.md"
        links = [line.rsplit("](", 1)[1].rstrip(")") for line in _body(path).splitlines() if line.startswith("- ")]
        assert links and all((path.parent / link).is_file() for link in links)  # each member links to its file

    ids = [r.id for r in m.add_many(SEED003, user_id="u", infer=False)]
    clock.advance(days=fade_days(Settings()))
    summary_id = next(s for s in m.dream(steps=CONSOLIDATE)["steps"] if s["name"] == "consolidate")["details"][
        "summaries"
    ][0]
    summary = _file(root, m, summary_id)
    assert "hiking" in _body(summary).lower() or "kayaking" in _body(summary).lower()
    for memory_id in ids:  # each original: marked and linked to the summary that holds it now
        front = _front(_file(root, m, memory_id))
        assert front["superseded_by"] == summary_id
        assert (_file(root, m, memory_id).parent / front["successor"]).resolve() == summary.resolve()

    pref = m.add("I like my coffee black without sugar", user_id="maya", infer=False).id
    m.update(pref, category="preference", importance=0.9)
    m.dream(user_id="maya", steps=["profile", "topics"])
    profile = root / "users" / "maya" / "profile.md"
    assert "I like my coffee black without sugar" in profile.read_text(encoding="utf-8")
    assert "hamburg" in (root / "topics.md").read_text(encoding="utf-8").lower()


def test_forget_leaves_no_file_and_no_line_quoting_it(make_memory, tmp_path: Path, clock: SettableClock) -> None:
    m, root = _open(make_memory, tmp_path)
    converse(m, clock)
    lena = next(r for r in m.list(user_id="maya", limit=50) if "nurse" in r.content)
    m.update(lena.id, category="preference", importance=0.95)
    m.dream(user_id="maya", steps=["profile"])
    path = _file(root, m, lena.id)
    words = "Hamburg clinic"
    quoting = [rel for rel, data in _files(root).items() if words.encode() in data or lena.id.encode() in data]
    assert len([rel for rel in quoting if rel.startswith("boxes/")]) == 1 and "users/maya/profile.md" in quoting
    m.forget(lena.id)
    assert not path.exists()
    left = [rel for rel, data in _files(root).items() if words.encode() in data or lena.id.encode() in data]
    assert left == []  # its file, its box's line, its profile line, the index's line: all gone
    assert m.sync_mirror()["written"] == 0  # nothing left to catch up


def test_an_edited_file_updates_its_memory_with_history(make_memory, tmp_path: Path) -> None:
    m, root = _open(make_memory, tmp_path)
    tea = m.add("Maya likes green tea", user_id="maya", infer=False).id
    path = _file(root, m, tea)
    text = path.read_text(encoding="utf-8").replace("green tea", "oolong tea")
    path.write_text(text.replace("category: fact", "category: preference").replace("pinned: false", "pinned: true"))
    report = m.sync_mirror()
    assert report["updated"] == [tea] and not report["conflicts"] and not report["errors"]
    rec = m.get(tea)
    assert (rec.content, rec.category, rec.pinned) == ("Maya likes oolong tea", "preference", True)
    edit = next(e for e in m.history(tea) if e.event == "updated")
    assert edit.reason == EDITED and edit.data["before"]["content"] == "Maya likes green tea"
    assert not path.exists() and _file(root, m, tea).name.startswith("preference-")  # the layout's name
    assert _body(_file(root, m, tea)) == "Maya likes oolong tea\n"

    new = _file(root, m, tea)  # a field a file may not change is reported, not applied
    new.write_text(new.read_text(encoding="utf-8").replace("user_id: maya", "user_id: bob"))
    report = m.sync_mirror()
    assert report["updated"] == [] and "user_id" in report["notes"][0]["note"]
    assert m.get(tea).user_id == "maya" and _front(new)["user_id"] == "maya"


def test_a_deleted_file_invalidates_and_never_forgets(make_memory, tmp_path: Path) -> None:
    m, root = _open(make_memory, tmp_path)
    cello = m.add("Maya plays the cello", user_id="maya", infer=False).id
    path = _file(root, m, cello)
    path.unlink()
    report = m.sync_mirror()
    assert report["invalidated"] == [cello] and not report["conflicts"]
    rec = m.get(cello)  # still there: only invalidated
    assert rec.status is Status.INVALIDATED and rec.content == "Maya plays the cello"
    assert m.history(cello)[-1].reason == DELETED
    m.update(cello, "Maya plays the cello and the viola")  # a later change does not bring the file back
    assert not path.exists() and m.sync_mirror()["written"] == 0 and not path.exists()


def test_a_new_file_is_added(make_memory, tmp_path: Path) -> None:
    m, root = _open(make_memory, tmp_path)
    m.add("Maya likes green tea", user_id="maya", infer=False)
    facts = root / "facts"
    (facts / "bike.md").write_text("Maya's bike is blue\n")
    day = facts / "2025-03-02"
    day.mkdir()
    (day / "note.md").write_text("---\ncategory: preference\nuser_id: maya\npinned: true\n---\nNo calls before 9 am\n")
    report = m.sync_mirror()
    assert len(report["added"]) == 2 and not report["errors"]
    added = {m.get(i).content: m.get(i) for i in report["added"]}
    note = added["No calls before 9 am"]
    assert (note.user_id, note.category, note.pinned) == ("maya", "preference", True)
    assert added["Maya's bike is blue"].user_id is None
    assert m.history(note.id)[0].event == "created"
    assert not (facts / "bike.md").exists() and not (day / "note.md").exists()  # each took the layout's name
    for rec in added.values():
        assert _body(_file(root, m, rec.id)) == rec.content + "\n"
    assert m.sync_mirror()["added"] == []


def test_a_moved_file_stays_its_memory(make_memory, tmp_path: Path) -> None:
    m, root = _open(make_memory, tmp_path)
    tea = m.add("Maya likes green tea", user_id="maya", infer=False).id
    path = _file(root, m, tea)
    moved = root / "facts" / "tea.md"
    path.rename(moved)  # as `git mv` does
    report = m.sync_mirror()
    assert report["invalidated"] == [] and report["added"] == []
    assert m.get(tea).status is Status.ACTIVE and path.is_file() and not moved.exists()


def test_a_conflict_keeps_both_and_is_reported(make_memory, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    m, root = _open(make_memory, tmp_path)
    cello = m.add("Maya plays the cello", user_id="maya", infer=False).id
    path = _file(root, m, cello)
    mine = path.read_text(encoding="utf-8").replace("cello", "viola")
    path.write_text(mine)
    with caplog.at_level(logging.WARNING, logger="reverie.mirror"):
        m.update(cello, "Maya plays the cello and the piano")  # the store changes too
    assert "conflict" in caplog.text
    copy = root / "conflicts" / path.relative_to(root)
    assert path.read_text(encoding="utf-8") == mine  # the person's edit is not overwritten
    assert _body(copy) == "Maya plays the cello and the piano\n"  # the store's version beside it
    report = m.sync_mirror()
    assert report["conflicts"] == [
        {"memory_id": cello, "file": path.relative_to(root).as_posix(), "store_copy": copy.relative_to(root).as_posix()}
    ]
    assert report["updated"] == [] and m.get(cello).content == "Maya plays the cello and the piano"
    assert path.read_text(encoding="utf-8") == mine and copy.is_file()  # changed neither
    copy.unlink()  # keep mine
    report = m.sync_mirror()
    assert report["updated"] == [cello] and report["conflicts"] == []
    assert m.get(cello).content == "Maya plays the viola" and not copy.exists()

    path.write_text(path.read_text(encoding="utf-8").replace("viola", "harp"))  # a second conflict
    m.update(cello, "Maya plays the double bass")
    shutil.copyfile(copy, path)  # take the store's version
    report = m.sync_mirror()
    assert report["conflicts"] == [] and report["updated"] == [] and not copy.exists()
    assert m.get(cello).content == "Maya plays the double bass"

    path.unlink()  # deleted in the mirror while the store changed: a conflict too, nothing invalidated
    m.update(cello, "Maya plays the double bass and sings")
    report = m.sync_mirror()
    assert report["conflicts"] and report["invalidated"] == [] and m.get(cello).status is Status.ACTIVE


def test_a_sync_with_nothing_to_do_leaves_git_status_clean(make_memory, tmp_path: Path, clock: SettableClock) -> None:
    m, root = _open(make_memory, tmp_path)
    converse(m, clock)
    m.add("Maya lives in Porto", user_id="maya")
    m.add("Maya lives in Lyon now", user_id="maya")
    pref = m.add("I like my coffee black without sugar", user_id="maya", infer=False).id
    m.update(pref, category="preference", importance=0.9)
    m.dream(user_id="maya", steps=["profile", "entity_profiles", "topics"])
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "memory")
    assert ".reverie" not in _git(root, "ls-files")
    clock.advance(hours=5)
    report = m.sync_mirror()
    assert (report["written"], report["removed"]) == (0, 0)
    m.search("where does Maya live", user_id="maya")
    m.dream(user_id="maya", steps=["topics"])  # rebuilt later with nothing new: the same files
    assert _git(root, "status", "--porcelain") == ""


def test_hostile_files_are_reported_and_change_nothing(make_memory, tmp_path: Path) -> None:
    m, root = _open(make_memory, tmp_path, max_file_bytes=4096)
    tea = m.add("Maya likes green tea", user_id="maya", infer=False).id
    path = _file(root, m, tea)
    day = path.parent
    bomb = "---\na: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n---\nhi\n"
    (day / "bomb.md").write_text(bomb)
    (day / "binary.md").write_bytes(b"\x00\xff\xfe binary \x00")
    (day / "big.md").write_text("x" * 5000)
    (day / "status.md").write_text("---\nstatus: gone\n---\nsomething\n")
    (day / "unknown.md").write_text("---\nowner: mallory\n---\nsomething\n")
    (day / "empty.md").write_text("\n\n")
    os.mkfifo(day / "fifo.md")
    outside = tmp_path / "outside.md"
    outside.write_text("a file outside the mirror\n")
    (day / "link.md").symlink_to(outside)
    edited = path.read_text(encoding="utf-8").replace("category: fact", "category: [1, 2]")
    path.write_text(edited)
    before = m.peek(tea).to_dict()
    report = m.sync_mirror()
    errors = {Path(e["file"]).name: e["error"] for e in report["errors"]}
    assert set(errors) == {
        "bomb.md",
        "binary.md",
        "big.md",
        "status.md",
        "unknown.md",
        "empty.md",
        "fifo.md",
        path.name,
    }
    assert "anchors and aliases" in errors["bomb.md"] and "not UTF-8" in errors["binary.md"]
    assert "4096" in errors["big.md"] and "owner" in errors["unknown.md"] and "regular file" in errors["fifo.md"]
    assert report["added"] == [] and report["updated"] == [] and m.count(user_id="maya", all_users=True) == 1
    assert m.peek(tea).to_dict() == before and path.read_text(encoding="utf-8") == edited  # left as they were
    assert (day / "link.md").is_symlink() and outside.read_text() == "a file outside the mirror\n"


def test_a_mirror_that_cannot_be_written_keeps_the_write_and_reports_it(
    make_memory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "mirror"
    blocked.write_text("a file where the mirror should be")
    with caplog.at_level(logging.WARNING, logger="reverie.mirror"):
        m = make_memory(mirror={"dir": str(blocked)})
        first = m.add("Maya likes green tea", user_id="maya", infer=False).id
        m.add("Maya plays the cello", user_id="maya", infer=False)
    assert m.get(first).content == "Maya likes green tea"  # the store's write stands
    assert "could not be written" in caplog.text
    failure = m.store.get_state(FAILURE_KEY)
    assert failure["dir"] == str(blocked) and "not a directory" in failure["error"].lower()
    blocked.unlink()
    report = m.sync_mirror()  # catches up and says what had failed
    assert report["written"] == 2 and report["failure"]["error"] == failure["error"]
    assert m.store.get_state(FAILURE_KEY) is None
    assert _body(_file(blocked, m, first)) == "Maya likes green tea\n"


def test_a_mirror_of_an_existing_store(make_memory, tmp_path: Path) -> None:
    m = make_memory()  # no mirror.dir: nothing is written as memories change
    ids = [r.id for r in m.add_many(["Maya likes green tea", "Maya plays the cello"], user_id="maya", infer=False)]
    vectors = np.eye(64, dtype=np.float32)[:2]
    m.add_many(["first vector", "second vector"], infer=False, vectors=vectors)
    root = tmp_path / "later"
    report = m.sync_mirror(root)
    assert report["written"] == 4 and (root / ".gitattributes").is_file()
    assert all(_file(root, m, i).is_file() for i in ids)
    assert m.sync_mirror(root)["written"] == 0
    m.update(ids[0], "Maya likes oolong tea")  # not live: the next sync writes it
    assert _body(_file(root, m, ids[0])) == "Maya likes green tea\n"
    assert m.sync_mirror(root)["written"] == 1 and _body(_file(root, m, ids[0])) == "Maya likes oolong tea\n"


def test_a_file_keeps_its_name_when_its_text_changes(make_memory) -> None:
    m = make_memory()
    rec = m.get(m.add("Maya likes green tea", infer=False).id)
    assert io.markdown_path(m.update(rec.id, "Maya likes oolong tea")) == io.markdown_path(rec)


def test_the_health_line_says_what_is_wrong(make_memory, tmp_path: Path) -> None:
    from reverie.mirror.health import check_mirror

    assert check_mirror(make_memory())["status"] == "ok"  # none configured
    blocked = tmp_path / "mirror"
    blocked.write_text("a file where the mirror should be")
    m = make_memory(mirror={"dir": str(blocked)})
    assert check_mirror(m)["status"] == "error"
    cello = m.add("Maya plays the cello", user_id="maya", infer=False).id
    found = check_mirror(m)
    assert found["status"] == "warn" and "reverie sync" in found["message"]
    blocked.unlink()
    m.sync_mirror()
    assert check_mirror(m)["status"] == "ok" and check_mirror(m)["details"]["memory_files"] == 1
    path = _file(blocked, m, cello)
    path.write_text(path.read_text(encoding="utf-8").replace("cello", "viola"), encoding="utf-8")
    m.update(cello, "Maya plays the cello and the piano")
    found = check_mirror(m)
    assert found["status"] == "warn" and found["details"]["conflicts"] == [path.relative_to(blocked).as_posix()]


def test_forget_user_takes_every_file_of_the_user(make_memory, tmp_path: Path, clock: SettableClock) -> None:
    m, root = _open(make_memory, tmp_path)
    converse(m, clock)
    pref = m.add("I like my coffee black without sugar", user_id="maya", infer=False).id
    m.update(pref, category="preference", importance=0.9)
    m.dream(user_id="maya", steps=["profile", "topics"])
    bob = m.add("Bob keeps bees", user_id="bob", infer=False).id
    assert (root / "users" / "maya" / "profile.md").is_file() and list((root / "boxes").rglob("*.md"))
    m.forget_user("maya")
    left = [rel for rel in _files(root) if not rel.startswith(".")]
    assert left == [io.markdown_path(m.peek(bob)).as_posix()]  # facts, boxes, profile, topic index: all gone
    assert b"maya" not in (root / ".reverie" / "index.jsonl").read_bytes()


def test_a_mirror_over_an_export_takes_its_files(make_memory, tmp_path: Path) -> None:
    m = make_memory()
    tea = m.add("Maya likes green tea", user_id="maya", infer=False).id
    cello = m.add("Maya plays the cello", user_id="maya", infer=False).id
    root = tmp_path / "notes"
    m.export_markdown(root)
    m.search("tea", user_id="maya")  # strengths and counts move after the export: not a difference
    exported = next(p for p in (root / "facts").rglob("*.md") if cello in p.read_text(encoding="utf-8"))
    exported.write_text(exported.read_text(encoding="utf-8").replace("cello", "viola"), encoding="utf-8")
    report = m.sync_mirror(root)
    assert report["added"] == [] and report["updated"] == []
    rel = exported.relative_to(root).as_posix()  # the export's name is the mirror's: both kept, reported
    assert report["conflicts"] == [{"memory_id": cello, "file": rel, "store_copy": f"conflicts/{rel}"}]
    assert _body(_file(root, m, tea)) == "Maya likes green tea\n" and m.peek(cello).content == "Maya plays the cello"
