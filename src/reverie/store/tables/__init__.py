"""The tables both SQL backends share, written once over a small :class:`Dialect`.

Everything here is SQL that is the same on SQLite and PostgreSQL up to how values are bound (see
:mod:`reverie.store.tables.dialect`); a backend mixes :class:`SqlTables` into its store class and implements
the hooks of :class:`~reverie.store.tables.backend.SqlBackend`.

Modules: :mod:`.dialect` (what differs between the backends, and the session a shared query runs in),
:mod:`.backend` (the hooks), :mod:`.graph` (relations), :mod:`.session_state` (working memory, synaptic
tags, memory boxes, clusters), :mod:`.ledger` (history, access log, action telemetry, co-activations),
:mod:`.coordination` (claims, key/value state, API keys), and the backend-neutral halves of the memory and
search operations, :mod:`.memories` and :mod:`.search` (argument checks and the parts with no backend SQL).
"""

from __future__ import annotations

from reverie.store.tables.backend import DEPENDENT_TABLES, SqlBackend
from reverie.store.tables.coordination import CoordinationTables, KeyTables
from reverie.store.tables.dialect import Columns, Dialect, Session, dump_json
from reverie.store.tables.graph import GraphTables
from reverie.store.tables.ledger import AccessTables, HistoryTables
from reverie.store.tables.session_state import BoxTables, WorkingMemoryTables


class SqlTables(
    GraphTables, WorkingMemoryTables, BoxTables, HistoryTables, AccessTables, CoordinationTables, KeyTables
):
    """Every shared table: relations, session state, boxes and clusters, the ledger, claims, state, API keys."""


__all__ = ["DEPENDENT_TABLES", "Columns", "Dialect", "Session", "SqlBackend", "SqlTables", "dump_json"]
