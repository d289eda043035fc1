"""The public surface is pinned: what ``from reverie import *`` gives, and the typed results of the engine's
operations. A name added or removed here is a change of the public API and is made on purpose."""

from __future__ import annotations

import inspect
import typing

import reverie
from reverie import Memory

PUBLIC = [
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


def test_the_public_names_are_pinned() -> None:
    assert sorted(reverie.__all__) == sorted(PUBLIC)
    assert all(hasattr(reverie, name) for name in reverie.__all__)


def test_engine_operations_return_typed_results() -> None:
    hints = {
        name: typing.get_type_hints(getattr(Memory, name))["return"]
        for name in ("dream", "tick", "stats", "end_session", "undo_consolidation")
    }
    assert hints == {
        "dream": reverie.DreamReport,
        "tick": reverie.DreamReport,
        "stats": reverie.Stats,
        "end_session": reverie.SessionEndReport,
        "undo_consolidation": reverie.UndoneConsolidation,
    }
    # the dream takes named options, not a bag of keywords
    params = inspect.signature(Memory.dream).parameters
    assert [(p.name, p.kind) for p in params.values()][1:] == [
        ("steps", inspect.Parameter.KEYWORD_ONLY),
        ("user_id", inspect.Parameter.KEYWORD_ONLY),
    ]


def test_a_report_has_the_keys_its_type_names(mem: Memory) -> None:
    mem.add("The team stand-up is at 9:30 every morning", user_id="u")
    report = mem.dream(steps=["decay"], user_id="u")
    assert set(reverie.DreamReport.__required_keys__) <= set(report)
    assert set(report) <= set(reverie.DreamReport.__required_keys__) | set(reverie.DreamReport.__optional_keys__)
    assert set(report["steps"][0]) == set(reverie.DreamStepReport.__required_keys__)
    stats = mem.stats(user_id="u")
    assert set(stats) == set(reverie.Stats.__required_keys__)
    ended = mem.end_session("s1", user_id="u")
    assert set(reverie.SessionEndReport.__required_keys__) <= set(ended)
    assert set(ended) <= set(reverie.SessionEndReport.__required_keys__) | set(
        reverie.SessionEndReport.__optional_keys__
    )
