from __future__ import annotations

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import surprise as sp


def test_no_neighbours_is_maximal_surprise(cfg: DynamicsSettings) -> None:
    s = sp.surprise(neighbour_similarities=[], cfg=cfg.importance)
    assert (s.surprise, s.modifier, s.is_duplicate, s.nearest_similarity) == (1.0, 0.15, False, None)


def test_centre_gives_half(cfg: DynamicsSettings) -> None:
    s = sp.surprise(neighbour_similarities=[0.65] * 5, cfg=cfg.importance)
    assert s.mean_distance == pytest.approx(0.35)
    assert s.surprise == pytest.approx(0.5)
    assert s.modifier == pytest.approx(0.0)


def test_novel_and_redundant(cfg: DynamicsSettings) -> None:
    novel = sp.surprise(neighbour_similarities=[0.1, 0.05, 0.0], cfg=cfg.importance)
    assert novel.surprise == pytest.approx(1 / (1 + pytest.importorskip("math").exp(-10 * (0.95 - 0.35))))
    assert novel.modifier == pytest.approx((novel.surprise - 0.5) * 0.6)
    assert 0.29 < novel.modifier <= 0.3  # "boosted up to +0.3"
    dup = sp.surprise(neighbour_similarities=[0.95, 0.9, 0.9, 0.9, 0.9], cfg=cfg.importance)
    assert dup.is_duplicate and dup.modifier < 0
    assert not sp.surprise(neighbour_similarities=[0.919], cfg=cfg.importance).is_duplicate


def test_only_k_nearest_count_and_order_is_irrelevant(cfg: DynamicsSettings) -> None:
    sims = [0.9, 0.1, 0.8, 0.2, 0.7, 0.3, 0.6]
    a = sp.surprise(neighbour_similarities=sims, cfg=cfg.importance)
    b = sp.surprise(neighbour_similarities=sorted(sims), cfg=cfg.importance)
    assert a == b
    assert a.mean_distance == pytest.approx(1 - (0.9 + 0.8 + 0.7 + 0.6 + 0.3) / 5)


def test_adjust_importance_clamped(cfg: DynamicsSettings) -> None:
    assert sp.adjust_importance(importance=0.1, modifier=-0.3, cfg=cfg.importance) == 0.05
    assert sp.adjust_importance(importance=0.9, modifier=0.3, cfg=cfg.importance) == 1.0
    assert sp.adjust_importance(importance=0.5, modifier=0.1, cfg=cfg.importance) == pytest.approx(0.6)
