"""The ``reverie`` command line assembled: every command group registered on :data:`app`, in the order
``reverie --help`` lists them (see :mod:`reverie.cli`)."""

from __future__ import annotations

from typing import Any

import typer.core

# importing the groups registers their commands, in the order `reverie --help` lists them
# isort: off
from reverie.cli import remember, recall, change, maintenance, transfer, mirror, demo, keys, servers  # noqa: F401
# isort: on

from reverie.cli.common import _short, app, console, err_console
from reverie.cli.recall import format_explain, print_hits, why
from reverie.cli.transfer import _add_with_progress, conversation_items


class _Command(typer.core.TyperCommand):
    """Usage lines name arguments plainly (``reverie add [OPTIONS] TEXT``), without typer's braces."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in super().collect_usage_pieces(ctx)]


for _info in app.registered_commands:
    _info.cls = _Command


__all__ = [
    "_add_with_progress",
    "_short",
    "app",
    "console",
    "conversation_items",
    "err_console",
    "format_explain",
    "print_hits",
    "why",
]
