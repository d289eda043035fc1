"""reverie — a long-term memory engine for AI agents.

>>> from reverie import Memory
>>> with Memory("memory.db") as mem:                      # doctest: +SKIP
...     mem.add("Alice prefers green tea", user_id="alice")
...     hits = mem.search("what does Alice drink?", user_id="alice")

``AsyncMemory`` has the same methods, awaitable.
"""

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

__version__ = "0.1.0"

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
