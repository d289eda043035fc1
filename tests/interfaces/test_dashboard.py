"""The web dashboard end to end in headless Chromium (Debian's ``chromium`` driven by Playwright)
against a real ``reverie`` server process, plus server-side rendering checks with TestClient.

Screenshots of the main pages are written to ``$REVERIE_SCREENSHOT_DIR`` (default: the test's
temporary directory) and checked to be real renderings (size, visible chart elements).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.embed.testing import HashEmbedder
from reverie.http import create_app
from reverie.model import Relation, RelationType

CHROMIUM = os.environ.get("REVERIE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


# server-side rendering (no browser) ------------------------------------------------------------

def seed(mem: Memory) -> dict[str, str]:
    ids = {
        "allergy": mem.add("Maya is allergic to penicillin", user_id="maya", infer=False, source="human").id,
        "move": mem.add("Maya moved to Lisbon in March", user_id="maya", infer=False).id,
        "old": mem.add("Maya lives in Porto", user_id="maya", infer=False).id,
        "bob": mem.add("Bob prefers aisle seats <b>bold</b>", user_id="bob", infer=False).id,
    }
    mem.store.add_relations([Relation(ids["move"], ids["old"], RelationType.SUPERSEDES, confidence=0.9),
                             Relation(ids["move"], ids["allergy"], RelationType.SAME_ENTITY, confidence=0.6)])
    mem.invalidate(ids["old"], "moved away")
    assert all(ids.values())
    return {k: str(v) for k, v in ids.items()}


def test_pages_render_server_side(mem: Memory) -> None:
    ids = seed(mem)
    with TestClient(create_app(mem)) as client:
        home = client.get("/").text
        assert "Memory health" in home and "<svg" in home and "memories per layer and status" in home
        listing = client.get("/memories").text
        assert ids["allergy"] in listing and ids["bob"] in listing and ids["old"] not in listing  # active only
        assert "&lt;b&gt;bold&lt;/b&gt;" in listing and "<b>bold</b>" not in listing  # escaped
        assert ids["old"] in client.get("/memories", params={"status": "invalidated"}).text
        assert ids["bob"] not in client.get("/memories", params={"user_id": "maya"}).text
        assert ids["allergy"] in client.get("/memories", params={"q": "penicillin", "user_id": "maya"}).text
        page = client.get(f"/memories/{ids['move']}").text
        for part in ("Retention over time", "polyline", "supersedes", "same_entity", "retrievability", "E0·exp",
                     "History", "created"):
            assert part in page, part
        missing = client.get("/memories/does-not-exist")
        assert missing.status_code == 404 and "NotFoundError" in missing.text
        assert client.get("/dream").status_code == 200
        assert "aisle seats" in client.get(f"/memories/{ids['bob']}").text
        assert client.get("/static/app.js").headers["content-type"].startswith(("text/javascript",
                                                                                "application/javascript"))
    # looking at a memory is not an access (bob's memory was only ever looked at)
    assert mem.store.get([ids["bob"]])[ids["bob"]].access_count == 0


# headless Chromium ------------------------------------------------------------------------------

@pytest.fixture
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def live(tmp_path: Path, spawn: Any) -> tuple[str, dict[str, str], Path]:
    db = tmp_path / "dash.db"
    with Memory(db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        ids = seed(mem)
        for i in range(6):
            mem.add(f"working note {i} about the quarterly report", user_id="maya", infer=False)
    server = spawn("rest", str(db))
    return server.url, ids, db


def screenshots_dir(tmp_path: Path) -> Path:
    out = Path(os.environ.get("REVERIE_SCREENSHOT_DIR") or tmp_path / "screens")
    out.mkdir(parents=True, exist_ok=True)
    return out


def shoot(page: Any, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 15_000, f"{path.name} looks blank ({len(data)} bytes)"


@pytest.mark.browser
def test_overview_and_list_in_chromium(browser: Any, live: tuple[str, dict[str, str], Path], tmp_path: Path) -> None:
    url, _ids, _db = live
    shots = screenshots_dir(tmp_path)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + "/")
    chart = page.locator("svg.chart").first
    assert chart.is_visible() and chart.bounding_box()["width"] > 300
    assert page.locator("svg.chart rect[fill]").count() >= 3  # legend and bars
    assert "working" in page.locator("#health-table").inner_text()
    shoot(page, shots / "overview.png")

    page.goto(url + "/memories")
    assert page.locator("#memory-list tbody tr").count() == 9  # 3 active seeded + 6 notes
    page.select_option("select[name=status]", "invalidated")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**status=invalidated**")
    rows = page.locator("#memory-list tbody tr")
    assert rows.count() == 1 and "Porto" in rows.first.inner_text()
    page.goto(url + "/memories")
    page.fill("input[name=q]", "penicillin")
    page.fill("input[name=user_id]", "maya")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**q=penicillin**")
    assert "allergic to penicillin" in page.locator("#memory-list tbody tr").first.inner_text()
    shoot(page, shots / "memories.png")
    assert not errors


@pytest.mark.browser
def test_memory_page_buttons_in_chromium(browser: Any, live: tuple[str, dict[str, str], Path],
                                         tmp_path: Path) -> None:
    url, ids, _db = live
    shots = screenshots_dir(tmp_path)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    mid = ids["move"]
    page.goto(f"{url}/memories/{mid}")
    assert page.locator("#content").inner_text() == "Maya moved to Lisbon in March"
    assert page.locator("svg.plot polyline").count() == 2
    assert page.locator("svg.graph circle").count() == 3  # the memory and its two relations
    assert page.locator("#strengths tbody tr").count() > 10
    shoot(page, shots / "memory.png")

    def click_and_reload(action: str) -> None:
        with page.expect_navigation():
            page.click(f"button[data-action={action}]")

    click_and_reload("pin")
    assert page.locator(".badge.pinned").is_visible() and page.locator("button[data-action=unpin]").is_visible()
    click_and_reload("promote")
    assert page.locator(".badge").first.inner_text() == "episodic"
    page.click("button[data-action=demote]")  # pinned: refused, the error is shown
    page.wait_for_selector("#flash.error")
    assert "pinned" in page.locator("#flash").inner_text()
    click_and_reload("unpin")
    click_and_reload("demote")
    assert page.locator(".badge").first.inner_text() == "working"

    page.once("dialog", lambda d: d.accept("turned out wrong"))
    click_and_reload("invalidate")
    assert page.locator(".badge.status-invalidated").is_visible()
    history = page.locator("#history").inner_text()
    for event in ("pinned", "promoted", "unpinned", "demoted", "invalidated", "turned out wrong"):
        assert event in history

    page.once("dialog", lambda d: d.dismiss())  # forget asks first; dismissing keeps it
    page.click("button[data-action=forget]")
    page.wait_for_timeout(300)
    assert page.url.endswith(mid)
    page.once("dialog", lambda d: d.accept())
    with page.expect_navigation(url="**/memories"):
        page.click("button[data-action=forget]")
    assert page.goto(f"{url}/memories/{mid}").status == 404
    assert not errors


@pytest.mark.browser
def test_dream_button_in_chromium(browser: Any, live: tuple[str, dict[str, str], Path], tmp_path: Path) -> None:
    url, _ids, _db = live
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(url + "/dream")
    assert "No dream cycle has run yet" in page.locator("#dream-summary").inner_text()
    page.goto(url + "/")
    with page.expect_navigation(url="**/dream"):
        page.click("button[data-action=dream]")
    steps = page.locator("#dream-report tbody tr")
    assert steps.count() >= 3
    assert "decay" in page.locator("#dream-report").inner_text()
    shoot(page, screenshots_dir(tmp_path) / "dream.png")


def test_topics_and_schedule_pages(mem: Memory) -> None:
    for text in ("My sister Lena lives in Hamburg with her two dogs.", "Lena works at the <i>Hamburg</i> clinic."):
        mem.observe(text, user_id="maya", session_id="s1")
    mem.end_session("s1", user_id="maya")
    with TestClient(create_app(mem)) as client:
        users = client.get("/topics").text
        assert 'href="/topics?user_id=maya"' in users
        page = client.get("/topics", params={"user_id": "maya"}).text
        assert 'id="topic-index"' in page and "hamburg" in page and 'id="boxes"' in page
        assert "<i>Hamburg</i>" not in page  # escaped
        bad = client.get("/topics", params={"user_id": "x\x00"})
        assert bad.status_code == 200 and "InvalidInputError" in bad.text
        dream = client.get("/dream").text
        assert 'id="schedule"' in dream and "promotion" in dream and "10m" in dream
