"""The ``reverie`` command line: a thin adapter over :class:`reverie.Memory`.

Every command opens the memory at ``--db`` (or ``REVERIE_TARGET``, or the default SQLite file
under the user's data directory), calls one method, prints the result for a person (``--json``
for programs), and turns reverie errors into a one-line message and exit code 1.

Only ``init``, ``add``, ``observe``, ``import`` (and the servers) create a database; every other
command refuses a database that does not exist, and a ``--db`` in a directory that does not exist
is an error, never created. Ids are shown in a short form that is unique among what is shown and in
the store; every command that takes an id takes any unique prefix of one.

The commands live in one module per group (:mod:`~reverie.cli.remember`, :mod:`~reverie.cli.recall`,
:mod:`~reverie.cli.change`, :mod:`~reverie.cli.maintenance`, :mod:`~reverie.cli.transfer`,
:mod:`~reverie.cli.mirror`, :mod:`~reverie.cli.demo`, :mod:`~reverie.cli.keys`, :mod:`~reverie.cli.servers`);
importing them, in this order, registers them on :data:`app` in the order ``reverie --help`` lists them.
"""

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


def main() -> None:
    app()


__all__ = [
    "_add_with_progress",
    "_short",
    "app",
    "console",
    "conversation_items",
    "err_console",
    "format_explain",
    "main",
    "print_hits",
    "why",
]
