"""Pure layer-transition predicates (energy rules and the designs' promotion rule sets).

Each predicate returns the *reason* (a rule name) when the record is eligible, else ``None``.
The dream cycle applies them; nothing here changes a record.

Exemptions: only ``active`` memories move. Pinned (and flashbulb) memories
are protected from forgetting, demotion and archival but may still be promoted (this
overrides the Cognitive Memory design's "pinned are never promoted"); immutable memories are never promoted,
demoted or archived (truth anchors stay where they are).
"""

from __future__ import annotations

import re
from datetime import datetime

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import energy as energy_mod
from reverie.dynamics import importance as importance_mod
from reverie.dynamics import retention as retention_mod
from reverie.dynamics import strength
from reverie.dynamics._util import days_between, layer_name, seconds_between
from reverie.model import Layer, MemoryKind, MemoryRecord, Status


def _active(record: MemoryRecord) -> bool:
    return record.status == Status.ACTIVE


def _energy_now(record: MemoryRecord, now: datetime, cfg: DynamicsSettings) -> float:
    return energy_mod.energy_at(
        energy=record.energy,
        updated_at=record.energy_updated_at or record.created_at,
        now=now,
        layer=record.layer,
        cfg=cfg.energy,
    )


def working_to_episodic(record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings) -> str | None:
    """After 30 min or 2 accesses, or energy > 2.0."""
    if layer_name(record.layer) != "working" or not _active(record) or record.immutable:
        return None
    p = cfg.promotion
    if record.access_count >= p.working_accesses:
        return "working_accesses"
    if seconds_between(record.created_at, now) / 60.0 > p.working_after_minutes:
        return "working_age"
    if p.working_use_energy and _energy_now(record, now, cfg) > cfg.energy.promote_working:
        return "high_energy"
    return None


def session_end_promotion(record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings) -> str | None:
    """At session end a working memory with energy > 1.5 is promoted."""
    if layer_name(record.layer) != "working" or not _active(record) or record.immutable:
        return None
    if _energy_now(record, now, cfg) > cfg.energy.session_end_threshold:
        return "session_end_energy"
    return None


def working_expired(record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings) -> bool:
    """A working memory whose energy fell below 0.1 expires (pinned ones do not)."""
    if layer_name(record.layer) != "working" or not _active(record) or record.pinned:
        return False
    return energy_mod.is_working_expired(energy=_energy_now(record, now, cfg), cfg=cfg.energy)


def episodic_to_semantic(
    record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings, shared_entity_count: int = 0
) -> str | None:
    """Frequent use, sustained utility or a shared entity (the Cognitive Memory design's three rules),
    importance with accesses (the layered-memory design's rule), or energy > 5.0.

    ``shared_entity_count`` = how many episodic memories (this one included) share an entity with it.
    """
    if layer_name(record.layer) != "episodic" or not _active(record) or record.immutable:
        return None
    p = cfg.promotion
    if record.access_count >= p.episodic_accesses:
        return "access_frequency"
    if record.utility >= p.episodic_utility and days_between(record.created_at, now) >= p.episodic_utility_age_days:
        return "sustained_utility"
    if shared_entity_count >= p.episodic_entity_count:
        return "entity_cooccurrence"
    if record.importance >= p.episodic_importance and record.access_count >= p.episodic_importance_accesses:
        return "importance_and_accesses"
    if p.episodic_use_energy and _energy_now(record, now, cfg) > cfg.energy.promote_episodic:
        return "high_energy"
    return None


def core_eligible(record: MemoryRecord, *, distinct_sessions: int, cfg: DynamicsSettings) -> bool:
    """``access_count`` >= 10, normalised storage strength >= 0.85, >= 3 distinct sessions."""
    if record.core or not _active(record):
        return False
    p = cfg.promotion
    stab = strength.normalized_storage(storage=record.storage_strength, cfg=cfg.strength)
    return record.access_count >= p.core_accesses and stab >= p.core_stability and distinct_sessions >= p.core_sessions


def semantic_demotion(record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings) -> str | None:
    """Semantic → dormant when idle >= 60 days AND utility < 0.2.

    Pinned, immutable and flashbulb memories are exempt."""
    if layer_name(record.layer) != "semantic" or not _active(record):
        return None
    if record.pinned or record.immutable or record.flashbulb:
        return None
    p = cfg.promotion
    idle = days_between(record.last_accessed_at or record.created_at, now)
    if idle >= p.demote_idle_days and record.utility < p.demote_utility:
        return "idle_low_utility"
    return None


def archival_eligible(
    record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings, retention: float | None = None
) -> bool:
    """Age > 90 days, retention < 0.15, importance < 0.3, access_count < 3.

    Exempt: semantic/procedural/codebase layers, pinned, immutable, flashbulb, core, protected
    categories and memories still within the Cognitive Memory design's minimum retention. ``retention`` defaults to
    the retention of the configured mode.
    """
    if not _active(record) or record.pinned or record.immutable or record.flashbulb or record.core:
        return False
    p = cfg.promotion
    if layer_name(record.layer) in p.archive_exempt_layers or record.category in p.protected_categories:
        return False
    age = days_between(record.created_at, now)
    if retention_mod.within_min_retention(category=record.category, age_days=age, cfg=cfg.retention):
        return False
    if retention is None:
        hl = retention_mod.layer_half_life(layer=record.layer, trust=record.trust, cfg=cfg.retention)
        retention = retention_mod.retention(
            age_days=days_between(record.last_accessed_at or record.created_at, now),
            half_life_days=hl,
            access_count=record.access_count,
            cfg=cfg.retention,
        )
    if not (age > p.archive_age_days and retention < p.archive_retention and record.access_count < p.archive_accesses):
        return False
    return archival_importance(record, now=now, cfg=cfg) < p.archive_importance


def archival_importance(record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings) -> float:
    """The importance the archival rule compares with its threshold (``promotion.archive_importance_measure``)."""
    if cfg.promotion.archive_importance_measure == "stored":
        return record.importance
    return importance_mod.layered_importance(record, now=now, cfg=cfg)[0]


#: how-to instructions and standing rules (EN + TR): the procedural layer's "how-to" and "patterns".
#: Deliberately narrow: an imperative after a rule word, steps, "the way to" — not any "how" or "always".
_HOWTO = re.compile(
    r"(?:(?:^|[.!:;]\s+)how to \w+|\bstep \d+\b|\bthe (?:way|trick) to \w+[^.?!]* is\b"
    r"|\bto (?:deploy|build|release|install|configure|set up|fix|debug|test|run|restart|reset|migrate|update)\b"
    r"[^.?!]*?,\s*(?:first\s+)?(?:run|use|set|call|add|open|restart|install|configure|check|edit|type|go)\b"
    r"|\b(?:always|never|make sure to|remember to|be sure to)\s+(?:use|run|call|set|put|add|check|keep|pass|"
    r"restart|commit|push|test|write|read|open|close|lock|back up|update)\b"
    r"|\bnasıl (?:yapılır|kurulur|çalıştırılır|yapılacağı)\b|\badım adım\b|\b\d+\. adım\b"
    r"|\b(?:her zaman|asla)(?:\s+\w+){1,3}\s+(?:kullan|çalıştır|ekle|kontrol et|yap)\w*"
    r"|\bönce\b[^.?!]*\bsonra\b[^.?!]*\b(?:çalıştır|kur|kullan|yap)\w*)",
    re.IGNORECASE,
)


_HOWTO_VERBS = (
    "deploy",
    "build",
    "release",
    "install",
    "configure",
    "set up",
    "fix",
    "debug",
    "test",
    "run",
    "restart",
    "reset",
    "migrate",
    "update",
)
#: a text :data:`_HOWTO` can match contains one of these (lower case, dotless/dotted i folded to i): a cheap
#: test first, because the dream checks every semantic memory on every cycle (the full pattern is about ten
#: times slower than the test)
_HOWTO_KEYS = (
    "how to",
    "step ",
    "way to",
    "trick to",
    "always",
    "never",
    "make sure",
    "remember to",
    "be sure",
    "nasil",
    "adim",
    "her zaman",
    "asla",
    "önce",
    *("to " + v for v in _HOWTO_VERBS),
)


def _may_be_howto(text: str) -> bool:
    low = text.lower().replace("ı", "i").replace("\u0307", "")
    return any(key in low for key in _HOWTO_KEYS)


def procedural_reason(record: MemoryRecord, *, cfg: DynamicsSettings) -> str | None:
    """Why a memory is know-how for the procedural layer (``None``: it is not).

    A standing note of a procedural category (a decision, pattern, procedure, skill, how-to or principle
    that is not a dated episode), or a text that reads as an instruction or a standing rule (EN + TR).
    A question is never know-how."""
    p = cfg.promotion
    if not p.procedural_layer:
        return None
    if record.category in p.procedural_categories and record.memory_kind is MemoryKind.NOTE:
        return f"category {record.category}"
    text = record.content.strip()
    if text.endswith("?"):
        return None
    if _may_be_howto(text) and _HOWTO.search(text):
        return "how-to or rule"
    return None


def eligible_transition(
    record: MemoryRecord,
    *,
    now: datetime,
    cfg: DynamicsSettings,
    shared_entity_count: int = 0,
    session_end: bool = False,
) -> tuple[Layer, str] | None:
    """The layer a record may move to now and the rule that allows it (or ``None``)."""
    reason = working_to_episodic(record, now=now, cfg=cfg)
    if reason is None and session_end:
        reason = session_end_promotion(record, now=now, cfg=cfg)
    if reason is not None:
        return Layer.EPISODIC, reason
    reason = episodic_to_semantic(record, now=now, cfg=cfg, shared_entity_count=shared_entity_count)
    if reason is not None:
        why = procedural_reason(record, cfg=cfg)
        if why is not None:
            return Layer.PROCEDURAL, f"{reason}; procedural: {why}"
        return Layer.SEMANTIC, reason
    if layer_name(record.layer) == "semantic" and _active(record) and not record.immutable:
        why = procedural_reason(record, cfg=cfg)
        if why is not None:
            return Layer.PROCEDURAL, f"procedural: {why}"
    return None
