"""``reverie sync --watch``: edits are read back as they are saved (the watchfiles package, reverie[mirror])."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from reverie import Memory, io
from reverie.mirror import SyncReport, mirror_of, watch


def test_watching_reads_edits_as_they_are_saved(make_memory, tmp_path: Path) -> None:
    pytest.importorskip("watchfiles", reason="needs reverie[mirror]")
    root = tmp_path / "mirror"
    m: Memory = make_memory(mirror={"dir": str(root), "watch_debounce_ms": 50})
    tea = m.add("Maya likes green tea", user_id="maya", infer=False).id
    path = root / io.markdown_path(m.peek(tea))
    reports: list[SyncReport] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch, args=(m, mirror_of(m, None)), kwargs={"on_report": reports.append, "stop_event": stop}
    )
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not reports and time.monotonic() < deadline:  # the first, whole sync
            time.sleep(0.05)
        path.write_text(path.read_text(encoding="utf-8").replace("green tea", "oolong tea"), encoding="utf-8")
        (root / "facts" / "new.md").write_text("Maya's bike is blue\n", encoding="utf-8")
        while time.monotonic() < deadline:
            if m.peek(tea).content == "Maya likes oolong tea" and any(r.added for r in reports):
                break
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert m.peek(tea).content == "Maya likes oolong tea"
    assert [e.event for e in m.history(tea)][-1] == "updated"
    added = next(r.added for r in reports if r.added)
    assert m.peek(added[0]).content == "Maya's bike is blue" and not (root / "facts" / "new.md").exists()
