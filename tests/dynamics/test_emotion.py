from __future__ import annotations

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import emotion


def test_flashbulb(cfg: DynamicsSettings) -> None:
    c = cfg.emotion
    assert emotion.is_flashbulb(arousal=0.8, cfg=c) and not emotion.is_flashbulb(arousal=0.79, cfg=c)
    upd = emotion.flashbulb_updates(arousal=0.9, importance=0.3, stability=2.0, cfg=c)
    assert upd == {"flashbulb": True, "pinned": True, "importance": 0.9, "stability": pytest.approx(3.0)}
    assert emotion.flashbulb_importance(importance=0.95, cfg=c) == 0.95
    assert emotion.flashbulb_updates(arousal=0.1, importance=0.3, stability=2.0, cfg=c) == {}


def test_mood_congruence(cfg: DynamicsSettings) -> None:
    c = cfg.emotion
    assert emotion.mood_multiplier(current_mood=0.5, memory_valence=0.2, cfg=c) == 1.1
    assert emotion.mood_multiplier(current_mood=-0.5, memory_valence=0.2, cfg=c) == 1.0
    assert emotion.mood_multiplier(current_mood=None, memory_valence=0.2, cfg=c) == 1.0
