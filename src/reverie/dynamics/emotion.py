"""Emotional memory: flashbulb memories and mood-congruent retrieval."""

from __future__ import annotations

from reverie.config.dynamics import EmotionSettings


def is_flashbulb(*, arousal: float, cfg: EmotionSettings) -> bool:
    """Arousal >= 0.8 makes a flashbulb memory."""
    return arousal >= cfg.flashbulb_arousal


def flashbulb_importance(*, importance: float, cfg: EmotionSettings) -> float:
    """Flashbulb importance is at least 0.9."""
    return max(importance, cfg.flashbulb_importance)


def flashbulb_stability(*, stability: float, cfg: EmotionSettings) -> float:
    """Flashbulb encoding multiplies stability by 1.5."""
    return stability * cfg.flashbulb_stability


def flashbulb_updates(
    *, arousal: float, importance: float, stability: float, cfg: EmotionSettings
) -> dict[str, object]:
    """Field updates for a memory at encoding: flashbulb, pinned, importance floor, stability boost."""
    if not is_flashbulb(arousal=arousal, cfg=cfg):
        return {}
    return {
        "flashbulb": True,
        "pinned": True,
        "importance": flashbulb_importance(importance=importance, cfg=cfg),
        "stability": flashbulb_stability(stability=stability, cfg=cfg),
    }


def same_valence(a: float, b: float) -> bool:
    """Both positive or both negative (neutral 0 matches nothing)."""
    return (a > 0 and b > 0) or (a < 0 and b < 0)


def mood_multiplier(*, current_mood: float | None, memory_valence: float, cfg: EmotionSettings) -> float:
    """×1.1 for mood-congruent memories, else ×1."""
    if current_mood is None or not same_valence(current_mood, memory_valence):
        return 1.0
    return cfg.mood_congruence
