"""reverie — a long-term memory engine for AI agents.

>>> from reverie import Memory
>>> with Memory("memory.db") as mem:                      # doctest: +SKIP
...     mem.add("Alice prefers green tea", user_id="alice")
...     hits = mem.search("what does Alice drink?", user_id="alice")

``AsyncMemory`` has the same methods, awaitable.

The public names are imported on first use (PEP 562), so that ``import reverie`` — and with it
``reverie --version`` and ``reverie --help`` — does not load the engine, its settings or numpy.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# reverie reports what degrades (an LLM that does not answer, a maintenance step skipped) on the
# standard ``reverie`` logger; a library shows nothing unless the application configures logging
logging.getLogger("reverie").addHandler(logging.NullHandler())

#: each public name and the module that defines it
_EXPORTS: dict[str, str] = {
    "AsyncMemory": "reverie.aio",
    "Credential": "reverie.auth",
    "SettableClock": "reverie.clock",
    "Settings": "reverie.config",
    "Memory": "reverie.memory",
    "ScopedMemory": "reverie.scoped",
    **dict.fromkeys(
        (
            "AmbiguousIdError",
            "ConfigError",
            "ConflictError",
            "ContentTooLargeError",
            "EmbedderMismatchError",
            "EmbeddingError",
            "ImmutableMemoryError",
            "InvalidInputError",
            "LLMError",
            "MigrationError",
            "MissingDependencyError",
            "NotFoundError",
            "PermissionDeniedError",
            "ReverieError",
            "StoreError",
        ),
        "reverie.errors",
    ),
    **dict.fromkeys(
        ("HistoryEvent", "Layer", "MemoryKind", "MemoryRecord", "Relation", "RelationType", "Status", "StoreTier"),
        "reverie.model",
    ),
    **dict.fromkeys(
        (
            "Action",
            "AddResult",
            "DreamReport",
            "DreamStepReport",
            "Hit",
            "SessionEndReport",
            "Stats",
            "UndoneConsolidation",
        ),
        "reverie.results",
    ),
}

if TYPE_CHECKING:
    from reverie.aio import AsyncMemory
    from reverie.auth import Credential
    from reverie.clock import SettableClock
    from reverie.config import Settings
    from reverie.errors import (
        AmbiguousIdError,
        ConfigError,
        ConflictError,
        ContentTooLargeError,
        EmbedderMismatchError,
        EmbeddingError,
        ImmutableMemoryError,
        InvalidInputError,
        LLMError,
        MigrationError,
        MissingDependencyError,
        NotFoundError,
        PermissionDeniedError,
        ReverieError,
        StoreError,
    )
    from reverie.memory import Memory
    from reverie.model import (
        HistoryEvent,
        Layer,
        MemoryKind,
        MemoryRecord,
        Relation,
        RelationType,
        Status,
        StoreTier,
    )
    from reverie.results import (
        Action,
        AddResult,
        DreamReport,
        DreamStepReport,
        Hit,
        SessionEndReport,
        Stats,
        UndoneConsolidation,
    )
    from reverie.scoped import ScopedMemory


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reverie' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "Action",
    "AddResult",
    "AmbiguousIdError",
    "AsyncMemory",
    "ConfigError",
    "ConflictError",
    "ContentTooLargeError",
    "Credential",
    "DreamReport",
    "DreamStepReport",
    "EmbedderMismatchError",
    "EmbeddingError",
    "HistoryEvent",
    "Hit",
    "ImmutableMemoryError",
    "InvalidInputError",
    "LLMError",
    "Layer",
    "Memory",
    "MemoryKind",
    "MemoryRecord",
    "MigrationError",
    "MissingDependencyError",
    "NotFoundError",
    "PermissionDeniedError",
    "Relation",
    "RelationType",
    "ReverieError",
    "ScopedMemory",
    "SessionEndReport",
    "SettableClock",
    "Settings",
    "Stats",
    "Status",
    "StoreError",
    "StoreTier",
    "UndoneConsolidation",
    "__version__",
]
