"""The dashboard's ``/documents`` page: a user's readable documents kept by the consolidation pass — the
behavioural profile, entity profiles, reflections, compression guidelines — with the recent action
telemetry and verbatim artifacts. Reading it counts no access."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from reverie.errors import ReverieError

if TYPE_CHECKING:
    from reverie.memory import Memory

#: telemetry rows and artifacts shown on the page
SHOWN = 50


def mount(app: FastAPI, render: Callable[..., HTMLResponse]) -> None:
    @app.get("/documents", response_class=HTMLResponse, include_in_schema=False)
    def documents_page(request: Request) -> HTMLResponse:
        mem: Memory = request.app.state.memory
        shown: list[str] = []
        user_id = request.query_params.get("user_id", "").strip() or None
        docs: dict[str, Any] | None = None
        actions: list[dict[str, Any]] = []
        artifacts: list[dict[str, Any]] = []
        users: list[tuple[str | None, int]] = []
        error = None
        try:
            if user_id is None:
                users = [(u, n) for u, n in mem.users(limit=200) if u is not None]
            else:
                docs = found = mem.documents(user_id=user_id)
                actions = mem.action_telemetry(user_id=user_id, limit=SHOWN)
                artifacts = mem.verbatim_artifacts(user_id=user_id, limit=SHOWN)
                raw = found.get("profile")
                profile: dict[str, Any] = raw if isinstance(raw, dict) else {}
                shown = [
                    ln["ids"][0] for sec in profile.get("sections", []) for ln in sec.get("lines", []) if ln.get("ids")
                ] + [a["memory_id"] for a in actions if a.get("memory_id")]
        except ReverieError as exc:
            error = f"{type(exc).__name__}: {exc}"
        return render(
            request,
            "documents.html",
            user_id=user_id,
            docs=docs,
            actions=actions,
            artifacts=artifacts,
            user_counts=users,
            error=error,
            short=mem.short_ids(shown) if shown else {},
        )


__all__ = ["mount"]
