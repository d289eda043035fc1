"""The ``reverie`` command line: a thin adapter over :class:`reverie.Memory`.

Every command opens the memory at ``--db`` (or ``REVERIE_TARGET``, or the default SQLite file
under the user's data directory), calls one method, prints the result for a person (``--json``
for programs), and turns reverie errors into a one-line message and exit code 1.

Only ``init``, ``add``, ``observe``, ``import`` create a database; every other command refuses a
database that does not exist — the servers (``serve``, ``mcp``) too, unless told ``--create`` — and a
``--db`` in a directory that does not exist is an error, never created. Ids are shown in a short form
that is unique among what is shown and in the store; every command that takes an id takes any unique
prefix of one.

The commands live in one module per group (:mod:`~reverie.cli.remember`, :mod:`~reverie.cli.recall`,
:mod:`~reverie.cli.change`, :mod:`~reverie.cli.maintenance`, :mod:`~reverie.cli.transfer`,
:mod:`~reverie.cli.mirror`, :mod:`~reverie.cli.demo`, :mod:`~reverie.cli.keys`,
:mod:`~reverie.cli.servers`), assembled in
:mod:`~reverie.cli.commands`. This module stays small and imports them on first use, so that
``reverie --version`` answers without loading the command line at all, and no command loads the
embedding model unless it embeds a text.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

#: the names ``reverie.cli`` has always offered, from the module that assembles the commands
_EXPORTS = frozenset(
    {
        "_add_with_progress",
        "_short",
        "app",
        "console",
        "conversation_items",
        "err_console",
        "format_explain",
        "print_hits",
        "why",
    }
)


def main() -> None:
    """The ``reverie`` command."""
    if sys.argv[1:] == ["--version"]:  # answered before the command line is built (a few milliseconds)
        from reverie import __version__

        sys.stdout.write(f"reverie {__version__}\n")
        return
    from reverie.cli.commands import app

    app()


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'reverie.cli' has no attribute {name!r}")
    return getattr(importlib.import_module("reverie.cli.commands"), name)


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
