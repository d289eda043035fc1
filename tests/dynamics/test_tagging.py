from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from reverie.config.dynamics import DynamicsSettings, TaggingSettings
from reverie.dynamics import tagging

from .conftest import T0


def test_tag_and_capture(cfg: DynamicsSettings) -> None:
    c = cfg.tagging
    assert tagging.should_tag(importance=0.49, cfg=c) and not tagging.should_tag(importance=0.5, cfg=c)
    assert tagging.tag_expires_at(tagged_at=T0, cfg=c) == T0 + timedelta(hours=4)
    kw: dict[str, Any] = {"tagged_at": T0, "strong_importance": 0.7, "same_session": True, "cfg": c}
    assert tagging.captures(strong_at=T0 + timedelta(hours=4), **kw)
    assert not tagging.captures(strong_at=T0 + timedelta(hours=4, seconds=1), **kw)
    assert not tagging.captures(strong_at=T0 + timedelta(hours=1), **{**kw, "same_session": False})
    assert not tagging.captures(strong_at=T0 + timedelta(hours=1), **{**kw, "strong_importance": 0.69})
    assert tagging.captured_stability(stability=2.0, cfg=c) == pytest.approx(2.6)


def test_hebbian_and_coactivation(cfg: DynamicsSettings) -> None:
    c = cfg.tagging
    assert tagging.hebbian_stability(stability=10.0, cfg=c) == pytest.approx(10.2)
    assert tagging.spreading_stability(stability=10.0, cfg=c) == pytest.approx(10.2)
    assert tagging.coactivation_bonus(count=3, cfg=c) == 0.05
    assert tagging.coactivation_bonus(count=2, cfg=c) == 0.0
    assert tagging.pair_key("b", "a") == ("a", "b") == tagging.pair_key("a", "b")
    with pytest.raises(ValueError):
        tagging.pair_key("a", "a")


def test_cluster_threshold_exclusive_by_default(cfg: DynamicsSettings) -> None:
    assert not tagging.forms_cluster(weight=3, cfg=cfg.tagging)
    assert tagging.forms_cluster(weight=4, cfg=cfg.tagging)
    assert tagging.forms_cluster(weight=3, cfg=TaggingSettings(cluster_exclusive=False))
