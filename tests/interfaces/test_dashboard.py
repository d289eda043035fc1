"""The web dashboard end to end in headless Chromium (Debian's ``chromium`` driven by Playwright)
against a real ``reverie`` server process, plus server-side rendering checks with TestClient.

Screenshots of the main pages are written to ``$REVERIE_SCREENSHOT_DIR`` (default: the test's
temporary directory) and checked to be real renderings (size, visible chart elements).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.embed.testing import HashEmbedder
from reverie.http import create_app
from reverie.model import Relation, RelationType

CHROMIUM = os.environ.get("REVERIE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# server-side rendering (no browser) ------------------------------------------------------------


def seed(mem: Memory) -> dict[str, str]:
    ids = {
        "allergy": mem.add("Maya is allergic to penicillin", user_id="maya", infer=False, source="human").id,
        "move": mem.add("Maya moved to Lisbon in March", user_id="maya", infer=False).id,
        "old": mem.add("Maya lives in Porto", user_id="maya", infer=False).id,
        "bob": mem.add("Bob prefers aisle seats <b>bold</b>", user_id="bob", infer=False).id,
    }
    mem.store.add_relations(
        [
            Relation(ids["move"], ids["old"], RelationType.SUPERSEDES, confidence=0.9),
            Relation(ids["move"], ids["allergy"], RelationType.SAME_ENTITY, confidence=0.6),
        ]
    )
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
        for part in (
            "Will it be forgotten?",
            "polyline",
            "archive line",
            "supersedes",
            "same entity",
            "retrievability",
            "E0·exp",
            "History",
            "created",
            "Recalls",
        ):
            assert part in page, part
        missing = client.get("/memories/does-not-exist")
        assert missing.status_code == 404 and "NotFoundError" in missing.text
        assert client.get("/dream").status_code == 200
        assert "aisle seats" in client.get(f"/memories/{ids['bob']}").text
        assert (
            client.get("/static/app.js")
            .headers["content-type"]
            .startswith(("text/javascript", "application/javascript"))
        )
    # looking at a memory is not an access (bob's memory was only ever looked at)
    assert mem.store.get([ids["bob"]])[ids["bob"]].access_count == 0


def test_dream_page_lists_a_consolidation_and_its_originals(make_memory: Any, clock: Any) -> None:
    mem: Memory = make_memory()
    texts = [
        "User went hiking at Mount Rainier on March 12, 2024",
        "User went kayaking at Lake Washington on March 15, 2024",
        "User ran a 5K in Fremont on March 20, 2024",
        "User went rock climbing at Stone Gardens on March 25, 2024",
        "User joined a cycling club on March 28, 2024",
    ]
    originals = [r.id for r in mem.add_many(texts, user_id="u", infer=False)]
    clock.advance(days=365)
    report = mem.dream(steps=["promote", "consolidate"])
    summary = next(s for s in report["steps"] if s["name"] == "consolidate")["details"]["summaries"][0]
    with TestClient(create_app(mem)) as client:
        page = client.get("/dream").text
    changed = page[page.index('id="dream-changes"') : page.index("Every step")]
    assert f'/memories/{summary}"' in changed and "created — dream consolidate: 5 memories → 1" in changed
    for mid in originals:  # each original: linked, with what happened to it
        assert f'/memories/{mid}"' in changed
    assert changed.count(f"consolidated into {summary}") == 5


def test_every_dashboard_link_carries_the_proxy_root_path(mem: Memory) -> None:
    ids = seed(mem)
    with TestClient(create_app(mem), root_path="/memory") as client:
        for path in ("/", "/memories", f"/memories/{ids['move']}", "/dream", "/agents", "/keys"):
            page = client.get(path)
            assert page.status_code == 200, path
            links = re.findall(r'(?:href|src|action)="(/[^"]*)"', page.text)
            assert links and all(link.startswith("/memory/") for link in links), (path, links)
            assert 'data-root="/memory"' in page.text
    from reverie.auth import create_key

    create_key(mem.store, name="ops", admin=True, now=mem.now())
    with TestClient(create_app(mem), root_path="/memory") as client:
        res = client.get("/memories", headers={"Accept": "text/html"}, follow_redirects=False)
        assert res.status_code == 303 and res.headers["location"] == "/memory/login"


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
    page.fill("form.filters input[name=user_id]", "maya")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**q=penicillin**")
    assert "allergic to penicillin" in page.locator("#memory-list tbody tr").first.inner_text()
    shoot(page, shots / "memories.png")
    assert not errors


@pytest.mark.browser
def test_memory_page_buttons_in_chromium(browser: Any, live: tuple[str, dict[str, str], Path], tmp_path: Path) -> None:
    url, ids, _db = live
    shots = screenshots_dir(tmp_path)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    mid = ids["move"]
    page.goto(f"{url}/memories/{mid}")
    assert page.locator("#content").inner_text() == "Maya moved to Lisbon in March"
    assert page.locator("svg.plot polyline").count() == 1  # the one curve that decides its forgetting
    summary = page.locator("#forgetting-summary").inner_text()
    assert "Its retention is" in summary and "%" in summary
    assert not re.search(r"\d\.\d{6,}", page.locator("#forgetting").inner_text())  # no long floats in words
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
    assert "decay" in (page.locator("#dream-report").text_content() or "")
    shoot(page, screenshots_dir(tmp_path) / "dream.png")


# the dashboard for a person looking after an agent's memory ------------------------------------------


@pytest.fixture
def rich(tmp_path: Path, spawn: Any) -> tuple[str, dict[str, Any], Path]:
    """A served store with two users, two agents, recalled memories (the access log) and twelve notes."""
    db = tmp_path / "rich.db"
    with Memory(db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        ids: dict[str, Any] = seed(mem)
        ids["notes"] = [
            mem.add(
                f"working note {i:02d} about the quarterly report",
                user_id="maya",
                agent_id="planner" if i % 2 else "writer",
                infer=False,
                when=f"2024-0{1 + i % 9}-1{i % 9}T10:00:00+00:00",
            ).id
            for i in range(12)
        ]
        for _ in range(2):
            mem.get(ids["notes"][0])  # two recalls: the dream cycle promotes it out of working memory
        mem.search("quarterly report", user_id="maya")
    server = spawn("rest", str(db))
    return server.url, ids, db


def _page(browser: Any) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, errors


@pytest.mark.browser
def test_create_and_edit_a_memory_in_chromium(
    browser: Any, rich: tuple[str, dict[str, Any], Path], tmp_path: Path
) -> None:
    url, _ids, db = rich
    page, errors = _page(browser)
    page.goto(url + "/memories?user_id=maya")
    page.click("#new-memory summary")
    page.fill("#create-form textarea[name=content]", "Maya's passport expires in June 2027")
    assert page.input_value("#create-form input[name=user_id]") == "maya"  # the list's user is the default
    page.fill("#create-form input[name=agent_id]", "writer")
    page.fill("#create-form input[name=when]", "2025-01-15T09:30")
    with page.expect_navigation(url=re.compile(r".*/memories/[0-9a-f-]{36}$")):
        page.click("#create-form button[type=submit]")
    assert page.locator("#content").inner_text() == "Maya's passport expires in June 2027"
    assert "happened 2025-01-15" in page.locator("#when").inner_text()  # the event's time, not the import's
    mid = page.url.rsplit("/", 1)[1]

    page.click("button[data-action=edit]")
    page.fill("#edit-form textarea[name=content]", "Maya's passport expires in July 2027")
    page.fill("#edit-form input[name=category]", "travel")
    page.fill("#edit-form input[name=reason]", "she checked it")
    with page.expect_navigation():
        page.click("#edit-form button[type=submit]")
    assert page.locator("#content").inner_text() == "Maya's passport expires in July 2027"
    assert "she checked it" in page.locator("#history").inner_text()
    assert "category travel" in page.locator("#when").inner_text()
    shoot(page, screenshots_dir(tmp_path) / "memory-edited.png")
    assert not errors
    with Memory(db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        rec = mem.peek(mid)
        assert (rec.content, rec.user_id, rec.agent_id, rec.category) == (
            "Maya's passport expires in July 2027",
            "maya",
            "writer",
            "travel",
        )


@pytest.mark.browser
def test_paging_sorting_and_bulk_forget_in_chromium(
    browser: Any, rich: tuple[str, dict[str, Any], Path], tmp_path: Path
) -> None:
    url, ids, db = rich
    page, errors = _page(browser)
    page.goto(url + "/memories?user_id=maya&limit=5")
    assert "14 memories · page 1 of 3" in page.locator("#result-summary").inner_text()  # 2 seeded + 12 notes
    first = page.locator("#memory-list tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
    with page.expect_navigation():
        page.click("#next-page")
    second = page.locator("#memory-list tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert len(first) == len(second) == 5 and not set(first) & set(second)
    with page.expect_navigation():
        page.click("a.sort:has-text('recalls')")
    top = page.locator("#memory-list tbody tr").first
    assert top.get_attribute("data-id") == ids["notes"][0]  # recalled three times: the most
    with page.expect_navigation():
        page.click("a.sort:has-text('happened')")  # twice: oldest event first
    with page.expect_navigation():
        page.click("a.sort:has-text('happened')")
    shoot(page, screenshots_dir(tmp_path) / "memories-sorted.png")

    page.goto(url + "/memories?user_id=maya&limit=50")
    doomed = ids["notes"][3:6]
    for mid in doomed:
        page.check(f"input.pick[value='{mid}']")
    assert page.locator("#selected-count").inner_text() == "3 selected"
    page.once("dialog", lambda d: d.accept())
    with page.expect_navigation():
        page.click("button[data-bulk=forget]")
    left = page.locator("#memory-list tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert len(left) == 11 and not set(doomed) & set(left)

    page.check(f"input.pick[value='{ids['notes'][7]}']")
    page.check(f"input.pick[value='{ids['notes'][8]}']")
    with page.expect_navigation():
        page.click("button[data-bulk=pin]")
    assert page.locator(f"tr[data-id='{ids['notes'][7]}']").inner_text().count("📌") == 1
    page.check("#select-all")
    assert page.locator("#selected-count").inner_text() == "11 selected"
    page.uncheck("#select-all")
    page.check(f"input.pick[value='{ids['notes'][9]}']")
    page.once("dialog", lambda d: d.accept("superseded by the annual report"))
    with page.expect_navigation():
        page.click("button[data-bulk=invalidate]")
    assert ids["notes"][9] not in page.content()  # active only by default
    assert not errors
    with Memory(db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        assert mem.store.get(doomed) == {}
        assert mem.peek(ids["notes"][9]).status.value == "invalidated"


@pytest.mark.browser
def test_access_log_agents_users_and_search_in_chromium(
    browser: Any, rich: tuple[str, dict[str, Any], Path], tmp_path: Path
) -> None:
    url, ids, _db = rich
    page, errors = _page(browser)
    page.goto(f"{url}/memories/{ids['notes'][0]}")
    log = page.locator("#access-log tbody tr")
    assert log.count() == 3
    kinds = page.locator("#access-log").inner_text()
    assert kinds.count("get") == 2 and "search" in kinds
    page.goto(f"{url}/memories/{ids['bob']}")
    assert page.locator("#access-log-empty").is_visible()

    page.goto(url + "/agents")
    rows = page.locator("#agents tbody tr")
    assert rows.count() == 4  # maya/planner, maya/writer, maya (no agent), bob (no agent)
    text = page.locator("#agents").inner_text()
    assert "planner" in text and "writer" in text
    with page.expect_navigation():
        page.click("#agents a:text-is('6') >> nth=0")
    assert "agent_id=" in page.url and page.locator("#memory-list tbody tr").count() == 6
    shoot(page, screenshots_dir(tmp_path) / "agents.png")

    page.goto(url + "/memories")
    with page.expect_navigation(url="**user_id=bob**"):
        page.select_option("#user-switcher", "bob")
    assert page.locator("#memory-list tbody tr").count() == 1 and "aisle" in page.locator("#memory-list").inner_text()

    page.goto(url + "/memories?user_id=maya&q=quarterly+report+note&limit=20")
    scores = [float(s) for s in page.locator("#memory-list tbody td:nth-child(2)").all_inner_texts()]
    assert scores and scores == sorted(scores, reverse=True)
    assert min(scores) >= 0.5 * max(scores)  # the relevance cut-off: weaker hits are behind "show all"
    assert not errors


@pytest.mark.browser
def test_dream_report_links_the_memories_it_changed_in_chromium(
    browser: Any, rich: tuple[str, dict[str, Any], Path], tmp_path: Path
) -> None:
    url, ids, _db = rich
    page, errors = _page(browser)
    page.goto(url + "/dream")
    with page.expect_navigation(url="**/dream"):
        page.click("button[data-action=dream]")
    changes = page.locator("#dream-changes tbody tr")
    assert changes.count() >= 1
    row = page.locator(f"#dream-changes tr:has(a[href$='{ids['notes'][0]}'])")
    assert "promoted" in row.inner_text()  # what happened to it, and why
    shoot(page, screenshots_dir(tmp_path) / "dream-report.png")
    with page.expect_navigation():
        row.locator("a").click()
    assert page.url.endswith(ids["notes"][0])
    assert "dream" in page.locator("#history").inner_text()
    assert not errors


@pytest.mark.browser
def test_api_keys_created_and_revoked_in_chromium(
    browser: Any, rich: tuple[str, dict[str, Any], Path], tmp_path: Path
) -> None:
    url, _ids, _db = rich
    page, errors = _page(browser)
    page.goto(url + "/keys")
    assert "no API keys yet" in page.locator("#keys").inner_text()
    page.fill("#key-form input[name=name]", "ops console")
    page.check("#key-form input[name=admin]")
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#new-key:not([hidden])")
    admin_key = page.locator("#new-key-value").inner_text()
    assert admin_key.startswith("rvk_")
    page.goto(url + "/keys")  # a key is active now: the dashboard asks for an admin credential
    assert page.url.endswith("/login")
    page.fill("input[name=token]", admin_key)
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.goto(url + "/keys")
    page.fill("#key-form input[name=name]", "maya's travel agent")
    page.fill("#key-form input[name=users]", "maya")
    page.fill("#key-form input[name=agents]", "planner")
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#new-key:not([hidden])")
    maya_key = page.locator("#new-key-value").inner_text()
    with httpx.Client(base_url=url) as http:
        assert http.get("/v1/memories", params={"user_id": "maya"}).status_code == 401  # keys are active
        mine = http.get("/v1/memories", params={"user_id": "maya"}, headers={"Authorization": f"Bearer {maya_key}"})
        assert mine.status_code == 200 and mine.json()["total"] == 6  # the planner's memories only
    page.goto(url + "/keys")
    text = page.locator("#keys").inner_text()
    assert "ops console" in text and "users maya; agents planner" in text and admin_key not in page.content()
    shoot(page, screenshots_dir(tmp_path) / "keys.png")
    maya_id = maya_key.split("_")[1]
    page.once("dialog", lambda d: d.accept())
    with page.expect_navigation():
        page.click(f"button[data-revoke='{maya_id}']")
    assert "revoked" in page.locator(f"tr[data-key='{maya_id}']").inner_text()
    with httpx.Client(base_url=url) as http:
        refused = http.get("/v1/memories", params={"user_id": "maya"}, headers={"Authorization": f"Bearer {maya_key}"})
        assert refused.status_code == 401  # at once on this server
    assert not errors


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
