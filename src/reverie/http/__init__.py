"""reverie's REST API and the server behind ``reverie serve`` (FastAPI; extra ``reverie[server]``)."""

from __future__ import annotations

from reverie.http.app import create_app
from reverie.http.server import serve

__all__ = ["create_app", "serve"]
