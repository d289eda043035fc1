"""The codebase layer: Memory.ingest_code / `reverie ingest-code` (the layered-memory design's "compressed
code knowledge — file trees, function signatures"), re-ingestion, drift, and bad input — both backends."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reverie import Memory, SettableClock
from reverie.cli import app
from reverie.errors import InvalidInputError, NotFoundError
from reverie.model import Layer, Status
from reverie.store.base import MemoryFilter

MATH = '''"""Small arithmetic helpers for the billing service."""

from decimal import Decimal


def multiply_amounts(a: Decimal, b: Decimal, *, rounding: str = "half-even") -> Decimal:
    """Multiply two money amounts and round the product."""
    return a * b


def _private_helper(x):
    return x


class Invoice:
    """An invoice with line items."""

    def __init__(self, customer: str, currency: str = "EUR") -> None:
        self.customer = customer

    def total(self) -> Decimal:
        """Sum of every line item."""
        return Decimal(0)

    @property
    def is_paid(self) -> bool:
        return False

    def _recalculate(self) -> None:
        pass
'''

DEEP = '''def parse_csv_row(line: str, sep: str = ",") -> list[str]:
    """Split one CSV line into its fields."""
    return line.split(sep)


async def fetch_rates(url: str) -> dict[str, float]:
    """Download the current exchange rates."""
    return {}
'''


def make_tree(root: Path) -> Path:
    pkg = root / "billing"
    (pkg / "io").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""The billing package."""\n')
    (pkg / "math_utils.py").write_text(MATH)
    (pkg / "io" / "csvfile.py").write_text(DEEP)
    (pkg / "README.md").write_text("# billing\n")
    (pkg / "broken.py").write_text("def oops(:\n    pass\n")
    (pkg / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (pkg / "latin.py").write_bytes("name = 'caf\xe9'\n".encode("latin-1"))
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "math_utils.cpython-311.pyc").write_bytes(b"\x00pyc")
    (pkg / ".hidden").mkdir()
    (pkg / ".hidden" / "secret.py").write_text("def hidden(): pass\n")
    os.symlink(pkg, pkg / "io" / "loop")  # a link back up into the tree
    return pkg


def code(m: Memory, user: str = "dev", *, statuses: Any = frozenset({Status.ACTIVE})) -> dict[tuple[str, str], Any]:
    recs = [
        r
        for b in m.store.scan(
            MemoryFilter(user_id=user, layers=frozenset({Layer.CODEBASE}), statuses=statuses, stores=None)
        )
        for r in b
    ]
    return {(r.metadata["path"], r.metadata["qualname"] or r.metadata["kind"]): r for r in recs}


def test_ingest_makes_codebase_memories_with_paths(make_memory, tmp_path: Path) -> None:
    m: Memory = make_memory()
    pkg = make_tree(tmp_path)
    report = m.ingest_code(pkg, user_id="dev")
    mems = code(m)
    assert set(mems) == {
        (".", "directory"),
        ("io", "directory"),
        ("__init__.py", "module"),
        ("math_utils.py", "module"),
        ("io/csvfile.py", "module"),
        ("math_utils.py", "multiply_amounts"),
        ("math_utils.py", "Invoice"),
        ("math_utils.py", "Invoice.total"),
        ("math_utils.py", "Invoice.is_paid"),
        ("io/csvfile.py", "parse_csv_row"),
        ("io/csvfile.py", "fetch_rates"),
    }
    assert report["created"] == len(mems) and report["files_parsed"] == 3
    fn = mems[("math_utils.py", "multiply_amounts")]
    assert fn.layer is Layer.CODEBASE and fn.source == "code_scan" and fn.trust == pytest.approx(0.5)
    assert fn.content.startswith(
        "function multiply_amounts(a: Decimal, b: Decimal, *, rounding: str='half-even') "
        "-> Decimal — Multiply two money amounts and round the product."
    )
    assert fn.metadata["kind"] == "function" and fn.metadata["line"] == 6
    assert fn.metadata["code_root"] == str(pkg.resolve()) and len(fn.metadata["file_hash"]) == 64
    assert "class Invoice(customer: str, currency: str='EUR')" in mems[("math_utils.py", "Invoice")].content
    assert "Methods: total, is_paid" in mems[("math_utils.py", "Invoice")].content
    assert mems[("math_utils.py", "Invoice.is_paid")].content.startswith("@property method Invoice.is_paid() -> bool")
    assert mems[("io/csvfile.py", "fetch_rates")].content.startswith("async function fetch_rates(url: str)")
    assert "module billing.math_utils" not in mems[("math_utils.py", "module")].content  # relative to the root
    assert "Defines classes Invoice; functions multiply_amounts." in mems[("math_utils.py", "module")].content
    listing = mems[(".", "directory")].content
    assert "README.md" in listing and "math_utils.py" in listing and "io" in listing
    assert "__pycache__" not in listing and ".hidden" not in listing
    skipped = report["skipped"]
    assert skipped["broken.py"].startswith("does not parse (line 1")
    assert skipped["blob.py"] == "binary file (NUL bytes)"
    assert skipped["latin.py"].startswith("not UTF-8")
    assert skipped["io/loop"].startswith("symbolic link")
    # a search finds the signature; filters by path work
    hit = m.search("multiply money amounts", user_id="dev", k=3)[0]
    assert hit.memory.id == fn.id
    only = m.list(user_id="dev", filters={"layer": "codebase", "metadata": {"path": "io/csvfile.py"}})
    assert {r.metadata["qualname"] for r in only} == {"", "parse_csv_row", "fetch_rates"}


def test_reingest_updates_exactly_what_changed(make_memory, tmp_path: Path, clock: SettableClock) -> None:
    m: Memory = make_memory()
    pkg = make_tree(tmp_path)
    m.ingest_code(pkg, user_id="dev")
    before = code(m)
    again = m.ingest_code(pkg, user_id="dev")
    assert (again["created"], again["updated"], again["invalidated"]) == (0, 0, 0)
    assert again["files_unchanged"] == 3 and again["files_parsed"] == 0
    assert {k: r.version for k, r in code(m).items()} == {k: r.version for k, r in before.items()}

    clock.advance(days=1)
    changed = MATH.replace('rounding: str = "half-even"', 'rounding: str = "up"').replace(
        '    def total(self) -> Decimal:\n        """Sum of every line item."""\n        return Decimal(0)\n\n', ""
    )
    changed += (
        '\n\ndef add_tax(amount: Decimal, rate: Decimal) -> Decimal:\n    """Add VAT to an amount."""\n'
        "    return amount\n"
    )
    (pkg / "math_utils.py").write_text(changed)
    report = m.ingest_code(pkg, user_id="dev")
    assert report["changed_files"] == ["math_utils.py"]
    after = code(m)
    assert report["created"] == 1 and ("math_utils.py", "add_tax") in after
    assert report["invalidated"] == 1 and ("math_utils.py", "Invoice.total") not in after
    updated = {k for k in before if k in after and after[k].version != before[k].version}
    assert updated == {
        ("math_utils.py", "multiply_amounts"),
        ("math_utils.py", "Invoice"),
        ("math_utils.py", "module"),
        ("math_utils.py", "Invoice.is_paid"),
    }
    # the property only moved up a few lines: same text, so no re-embedding, only its line and file hash
    assert after[("math_utils.py", "Invoice.is_paid")].content == before[("math_utils.py", "Invoice.is_paid")].content
    assert report["updated"] == 3
    assert "rounding: str='up'" in after[("math_utils.py", "multiply_amounts")].content
    assert [e.event for e in m.history(after[("math_utils.py", "multiply_amounts")].id)][-1] == "updated"
    total = before[("math_utils.py", "Invoice.total")]
    assert m.store.get([total.id])[total.id].status is Status.INVALIDATED
    assert "no longer in the file" in m.history(total.id)[-1].reason
    # the other files' memories were not touched
    assert all(after[k].version == before[k].version for k in before if k[0] != "math_utils.py")

    # a file that stops parsing keeps the memories of its last good version
    (pkg / "math_utils.py").write_text(changed + "\ndef broken(:\n")
    broken = m.ingest_code(pkg, user_id="dev")
    assert broken["skipped"]["math_utils.py"].startswith("does not parse") and broken["invalidated"] == 0
    assert ("math_utils.py", "add_tax") in code(m)

    # a deleted file: its memories are invalidated, the directory's listing updated
    (pkg / "io" / "csvfile.py").unlink()
    gone = m.ingest_code(pkg, user_id="dev")
    assert gone["invalidated"] == 3 and ("io/csvfile.py", "parse_csv_row") not in code(m)
    assert "csvfile.py" not in code(m)[("io", "directory")].content
    # it comes back: the same memories are reactivated, not duplicated
    (pkg / "io" / "csvfile.py").write_text(DEEP)
    back = m.ingest_code(pkg, user_id="dev")
    assert back["reactivated"] == 3 and back["created"] == 0
    assert code(m)[("io/csvfile.py", "parse_csv_row")].id == before[("io/csvfile.py", "parse_csv_row")].id


def test_drift_detection_invalidates_memories_of_deleted_files(make_memory, tmp_path: Path) -> None:
    m: Memory = make_memory()
    pkg = make_tree(tmp_path)
    m.ingest_code(pkg, user_id="dev")
    assert m.dream(steps=["drift"])["steps"][0]["changed"] == 0  # every file is there
    shutil.rmtree(pkg / "io")
    report = m.dream(steps=["drift"])["steps"][0]
    assert report["details"]["invalidated"] == 4  # io/, its module and its two functions
    assert not [k for k in code(m) if k[0].startswith("io")]
    assert m.history(code(m, statuses=None)[("io/csvfile.py", "parse_csv_row")].id)[-1].event == "invalidated"


def test_forgetting_leaves_code_memories_alone(make_memory, tmp_path: Path, clock: SettableClock) -> None:
    m: Memory = make_memory(dream={"forgetting": {"capacity_max": 2, "capacity_target": 1}})
    m.ingest_code(make_tree(tmp_path), user_id="dev")
    clock.advance(days=200)
    m.dream()
    assert all(r.status is Status.ACTIVE and r.layer is Layer.CODEBASE for r in code(m).values())
    assert len(code(m)) == 11


def test_bad_input(make_memory, tmp_path: Path) -> None:
    m: Memory = make_memory(codebase={"max_files": 3, "max_file_bytes": 200})
    with pytest.raises(NotFoundError, match="no such file"):
        m.ingest_code(tmp_path / "nope")
    with pytest.raises(InvalidInputError):
        m.ingest_code("bad\x00path")
    with pytest.raises(InvalidInputError):
        m.ingest_code(b"bytes")  # type: ignore[arg-type]
    pkg = make_tree(tmp_path)
    with pytest.raises(InvalidInputError, match="max_files"):
        m.ingest_code(pkg)
    assert m.list(filters={"layer": "codebase"}) == []  # nothing written
    one = m.ingest_code(pkg / "math_utils.py")  # one file; over max_file_bytes = 200
    assert one["skipped"] == {"math_utils.py": f"too large ({len(MATH)} bytes > codebase.max_file_bytes = 200)"}
    small = tmp_path / "small.py"
    small.write_text("def tiny(x: int) -> int:\n    return x\n")
    assert m.ingest_code(small)["created"] == 2  # its module and function, no directory listing


def test_following_links_stays_inside_the_tree(make_memory, tmp_path: Path) -> None:
    m: Memory = make_memory(codebase={"follow_symlinks": True})
    pkg = make_tree(tmp_path)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def far_away(): pass\n")
    os.symlink(outside, pkg / "linked_out.py")
    os.symlink(pkg / "io" / "csvfile.py", pkg / "alias.py")
    report = m.ingest_code(pkg, user_id="dev")
    assert report["skipped"]["io/loop"] == "symbolic link loop (the directory is already being read)"
    assert report["skipped"]["linked_out.py"].startswith("symbolic link out of the tree")
    assert ("alias.py", "parse_csv_row") in code(m)


def test_cli_ingest_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    runner = CliRunner()
    db = str(tmp_path / "c.db")
    pkg = make_tree(tmp_path)
    res = runner.invoke(app, ["ingest-code", str(pkg), "--db", db, "-u", "dev", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["created"] == 11 and "broken.py" in data["skipped"]
    text = runner.invoke(app, ["ingest-code", str(pkg), "--db", db, "-u", "dev"])
    assert text.exit_code == 0 and "0 new" in text.output and "broken.py" in text.output
    missing = runner.invoke(app, ["ingest-code", str(tmp_path / "nope"), "--db", db])
    assert missing.exit_code == 1 and "no such file" in missing.output


@pytest.mark.model
@pytest.mark.slow
def test_reveries_own_source_with_the_local_model(tmp_path: Path) -> None:
    """The proof: ingesting reverie's own source, "function that computes FSRS retrievability" finds the
    FSRS retrievability signature first; changing one file and re-ingesting changes exactly its memories."""
    src = Path(__file__).resolve().parents[2] / "src" / "reverie"
    tree = tmp_path / "reverie"
    shutil.copytree(src, tree, ignore=shutil.ignore_patterns("__pycache__"))
    with Memory(tmp_path / "code.db", config={"opslog": {"enabled": False}}) as m:
        first = m.ingest_code(tree, user_id="dev")
        assert first["created"] > 800 and not first["skipped"]
        hits = m.search("function that computes FSRS retrievability", user_id="dev", k=5)
        top = hits[0].memory
        assert top.metadata["path"] == "dynamics/fsrs.py" and top.metadata["qualname"].startswith("retrievability")
        assert top.content.startswith("function retrievability")
        before = {r.id: r for b in m.store.scan(MemoryFilter(user_id="dev")) for r in b}
        fsrs = tree / "dynamics" / "fsrs.py"
        fsrs.write_text(
            fsrs.read_text().replace(
                '"""Canonical FSRS-6 retrievability."""', '"""Canonical FSRS-6 retrievability R(t) of a memory."""'
            )
        )
        second = m.ingest_code(tree, user_id="dev")
        assert second["changed_files"] == ["dynamics/fsrs.py"]
        assert (second["created"], second["updated"], second["invalidated"]) == (0, 1, 0)
        after = {r.id: r for b in m.store.scan(MemoryFilter(user_id="dev")) for r in b}
        moved = {i for i in before if after[i].version != before[i].version}
        # only the memories of fsrs.py were written (its new file hash), and one of them has a new text
        assert moved and {after[i].metadata["path"] for i in moved} == {"dynamics/fsrs.py"}
        (changed,) = [after[i] for i in moved if after[i].content != before[i].content]
        assert changed.metadata["qualname"] == "retrievability_fsrs6" and "R(t) of a memory" in changed.content
