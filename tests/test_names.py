"""Names say what they mean: no design-document citations in the source, and former names still read."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from reverie import Memory
from reverie.config import SOURCES
from reverie.legacy import RENAMED_RULES, current_reason
from reverie.model import HistoryEvent

SRC = Path(__file__).resolve().parents[1] / "src" / "reverie"
CITATION = re.compile(r"seed ?00[0-4]|SEED-NOTES|FACTS\.md|DESIGN\.md", re.IGNORECASE)
# the one module that keeps former names, for one release
NOT_YET = ("legacy.py",)


def test_source_names_concepts_not_design_documents() -> None:
    found = []
    for path in sorted(SRC.rglob("*")):
        rel = path.relative_to(SRC).as_posix()
        if not path.is_file() or path.suffix not in {".py", ".html", ".js", ".css", ".txt", ".md", ".toml"}:
            continue
        if rel.startswith(NOT_YET):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CITATION.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []


def test_history_written_with_former_rule_ids_reads_in_current_names(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory()
    mid = mem.add("The deploy key rotates every Monday.", infer=False).id
    assert mid is not None
    at = mem.now()
    old = HistoryEvent(mid, "promoted", at, actor="dream")
    # as the dream cycle wrote it before the rename (constructing the event would translate it)
    old.reason = "working → episodic (seed002_age)"
    old.data = {"from": "working", "to": "episodic", "rule": "seed002_age"}
    archived = HistoryEvent(mid, "archived", at, actor="dream")
    archived.reason = "seed 002 archival: > 90 days, retention < 0.15, importance < 0.3, < 3 accesses"
    archived.data = {"rule": "seed002"}
    mem.store.add_history([old, archived])

    events = {e.event: e for e in mem.history(mid)}
    assert events["promoted"].reason == "working → episodic (working_age)"
    assert events["promoted"].data["rule"] == "working_age"
    assert events["archived"].reason.startswith("archival: > 90 days")
    assert events["archived"].data["rule"] == "faded"


def test_every_former_rule_id_has_a_plain_current_name() -> None:
    for old, new in RENAMED_RULES.items():
        assert not CITATION.search(new) and not new.startswith("seed"), new
        assert current_reason(f"semantic → dormant ({old})") == f"semantic → dormant ({new})"


def test_every_setting_source_is_explained_in_the_design_notes() -> None:
    notes = (SRC.parents[1] / "docs" / "design-notes.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### (.+)$", notes, re.MULTILINE))
    assert set(SOURCES) <= headings, sorted(set(SOURCES) - headings)
    assert not CITATION.search(notes)
