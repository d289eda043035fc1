"""Synaptic tagging & capture, Hebbian co-activation; co-activation clusters."""

from __future__ import annotations

from datetime import datetime, timedelta

from reverie.config.dynamics import TaggingSettings


def should_tag(*, importance: float, cfg: TaggingSettings) -> bool:
    """A weak memory (importance < 0.5) receives a synaptic tag."""
    return importance < cfg.weak_importance


def is_strong(*, importance: float, cfg: TaggingSettings) -> bool:
    """A strong memory (importance >= 0.7) captures the tags of its session."""
    return importance >= cfg.strong_importance


def tag_expires_at(*, tagged_at: datetime, cfg: TaggingSettings) -> datetime:
    """Tag time + 4 hours."""
    return tagged_at + timedelta(hours=cfg.tag_ttl_hours)


def tag_active(*, tagged_at: datetime, now: datetime, cfg: TaggingSettings) -> bool:
    """The tag lives from ``tagged_at`` up to and including its TTL."""
    return tagged_at <= now <= tag_expires_at(tagged_at=tagged_at, cfg=cfg)


def captures(
    *,
    tagged_at: datetime,
    strong_at: datetime,
    strong_importance: float,
    same_session: bool,
    cfg: TaggingSettings,
) -> bool:
    """A strong memory stored within a tag's TTL in the same session captures the tagged memory."""
    return (
        same_session
        and is_strong(importance=strong_importance, cfg=cfg)
        and tag_active(tagged_at=tagged_at, now=strong_at, cfg=cfg)
    )


def captured_stability(*, stability: float, cfg: TaggingSettings) -> float:
    """Capture multiplies stability by 1.3."""
    return stability * cfg.capture_boost


def hebbian_stability(*, stability: float, cfg: TaggingSettings) -> float:
    """Co-retrieved memories: stability +2% (their access count also +1, done by the caller)."""
    return stability * (1.0 + cfg.hebbian_boost)


def spreading_stability(*, stability: float, cfg: TaggingSettings) -> float:
    """A-MEM spreading activation: neighbours of an accessed memory get +2% stability."""
    return stability * (1.0 + cfg.spreading_boost)


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The canonical (smaller, larger) id pair of a co-activation edge (``m1.id < m2.id``)."""
    if a == b:
        raise ValueError("a memory cannot be co-activated with itself")
    return (a, b) if a < b else (b, a)


def coactivation_bonus(*, count: int, cfg: TaggingSettings) -> float:
    """+0.05 retrieval boost for pairs co-retrieved >= 3 times."""
    return cfg.coactivation_bonus if count >= cfg.coactivation_threshold else 0.0


def forms_cluster(*, weight: int, cfg: TaggingSettings) -> bool:
    """A co-activation edge forms a cluster when weight > 3 (exclusive; configurable)."""
    return weight > cfg.cluster_weight if cfg.cluster_exclusive else weight >= cfg.cluster_weight
