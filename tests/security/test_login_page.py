"""The dashboard's sign-in page, to a visitor who is not signed in: the form and nothing else (no user id,
no navigation), the credential it takes named truly (an admin API key; the API token only when one is set),
and a valid key without the admin right told exactly that."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.http import create_app
from reverie.web import NOT_ADMIN, NOT_RIGHT

TOKEN = "t" * 32


def _page_text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.mark.parametrize("token", [None, TOKEN])
def test_the_login_page_shows_the_form_and_nothing_else(mem: Memory, token: str | None) -> None:
    for user in ("maya-secret-user", "bob-secret-user"):
        mem.add(f"{user} likes tea", user_id=user, infer=False)
    mem.create_api_key(name="ops", admin=True)
    with TestClient(create_app(mem, token=token)) as client:
        page = client.get("/login")
        assert page.status_code == 200
        html = page.text
        assert "secret-user" not in html  # no user id (the switcher is not there)
        assert 'id="user-switcher"' not in html and "<nav>" not in html
        assert re.findall(r"<form[^>]*>", html) == ['<form method="post" action="/login">']
        text = _page_text(html)
        assert "admin API key" in text
        assert ("REVERIE_API_TOKEN" in text) is (token is not None)  # named only when one is set
        assert "requires its API token" not in text
        refused = client.post("/login", data={"token": "wrong"}, follow_redirects=False)
        assert refused.status_code == 401 and NOT_RIGHT in refused.text and "secret-user" not in refused.text


def test_a_valid_key_without_the_admin_right_is_told_exactly_that(mem: Memory) -> None:
    mem.add("maya likes tea", user_id="maya", infer=False)
    _, maya = mem.create_api_key(name="maya", users=["maya"])
    _, admin = mem.create_api_key(name="ops", admin=True)
    with TestClient(create_app(mem)) as client:
        res = client.post("/login", data={"token": maya}, follow_redirects=False)
        assert res.status_code == 403 and NOT_ADMIN in _page_text(res.text).replace("&#39;", "'")
        assert "reverie_session" not in res.cookies and ">maya<" not in res.text
        assert client.get("/", headers={"Accept": "text/html"}, follow_redirects=False).status_code == 303
        ok = client.post("/login", data={"token": admin}, follow_redirects=False)
        assert ok.status_code == 303 and "reverie_session" in ok.cookies
