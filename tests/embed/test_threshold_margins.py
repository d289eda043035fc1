"""Every calibrated similarity threshold of the default embedder keeps a margin of at least three times the
measured cross-kernel drift from the cosines it separates.

The drift is measured here, on the calibration texts themselves: the shipped int8 session against the exact
integer arithmetic (:meth:`E5Embedder.exact_vectors`), which is what a CPU with other int8 kernels computes
(``bench/embed_drift.py``: the earlier 8-bit weights moved a pair's cosine by up to 0.025 between AVX2 and
AVX-512 VNNI; the 7-bit weights with integer products as written give the same sums on both). Each margin
is computed from the calibration sets of the tests that own them (imported, not copied):

- the write gate (e5 profile): each pair's similarity to the nearest gate threshold at which the gate's
  decision for that pair changes (a pair whose decision no threshold changes is decided by its text);
- consolidation (dream ``consolidate``): the five related activities' best centre to its farthest member,
  above the threshold; unrelated memories, below;
- merge (dream ``merge``): each paraphrase set's best founder to its farthest member, above; no distinct
  set has a founder with ``group_size - 1`` members above;
- redundancy: every paraphrase above (the rest is decided by the text guards, not by the cosine);
- update reading: every correction of the update suite above the floor from which it is read.

A margin thinner than required fails with the pair that makes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reverie.config.dream_consolidation import ConsolidationSettings, for_profile
from reverie.config.dream_forgetting import ForgettingSettings
from reverie.config.write import GateSettings
from reverie.model import MemoryKind, MemoryRecord
from reverie.write import admission

pytestmark = [pytest.mark.model, pytest.mark.slow]

PROFILE = "e5"
#: the required margin, in multiples of the measured drift
FACTOR = 3.0
UPDATES = Path(__file__).resolve().parents[1] / "write" / "data" / "knowledge_updates.json"


@dataclass(frozen=True)
class Margin:
    threshold: str
    value: float
    margin: float
    where: str


class Cosines:
    """Cosines of text pairs with the shipped session and with the exact arithmetic; records the largest
    difference seen (the measured drift)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.drift = 0.0
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _vectors(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            shipped = self.embedder.embed(missing)
            exact = self.embedder.exact_vectors(missing)
            for t, a, b in zip(missing, shipped, exact, strict=True):
                self._cache[t] = (a.astype(np.float64), b.astype(np.float64))
        return (np.stack([self._cache[t][0] for t in texts]), np.stack([self._cache[t][1] for t in texts]))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        shipped, exact = self._vectors(texts)
        sims, ref = shipped @ shipped.T, exact @ exact.T
        self.drift = max(self.drift, float(np.max(np.abs(sims - ref))))
        return sims

    def pair(self, a: str, b: str) -> float:
        return float(self.matrix([a, b])[0, 1])


def _gate_margins(cos: Cosines) -> list[Margin]:
    from tests.write.test_write_calibration import CASES, CASES_TR, NOT_SUPERSEDED

    cfg = GateSettings()
    profile = cfg.profile(PROFILE)
    cuts = sorted(
        {
            profile.contradiction_min,
            profile.create_below,
            profile.update_min,
            profile.reinforce_min,
            profile.change_min,
            profile.update_candidate_min,
        }
    )

    def decide(old: str, new: str, sim: float) -> Any:
        stored = MemoryRecord(old, category="fact", memory_kind=MemoryKind.NOTE)
        return admission.decide(
            new, [admission.Neighbour(stored, sim)], importance=0.5, correction=False, profile=profile, cfg=cfg
        ).action

    out = []
    for old, new, *_ in [*CASES, *CASES_TR, *((a, b) for a, b in NOT_SUPERSEDED)]:
        sim = cos.pair(old, new)
        deciding = [t for t in cuts if decide(old, new, t - 1e-9) is not decide(old, new, t + 1e-9)]
        if deciding:
            t = min(deciding, key=lambda c: abs(sim - c))
            out.append(Margin(f"write gate {t}", sim, abs(sim - t), f"{old!r} / {new!r}"))
    return out


def _consolidation_margins(cos: Cosines) -> list[Margin]:
    from tests.dream.test_consolidate import SEED003, SEED003_TR, UNRELATED, UNRELATED_TR

    t = for_profile(ConsolidationSettings().consolidate.similarity, PROFILE)
    out = []
    for members, unrelated in ((SEED003, UNRELATED), (SEED003_TR, UNRELATED_TR)):
        sims = cos.matrix(members + unrelated)
        n = len(members)
        centre = max(float(np.delete(sims[i, :n], i).min()) for i in range(n))
        out.append(Margin(f"consolidation {t}", centre, centre - t, f"best centre of {members[0]!r}…"))
        far = float(sims[:n, n:].max())
        out.append(Margin(f"consolidation {t}", far, t - far, f"unrelated to {members[0]!r}…"))
    return out


def _merge_margins(cos: Cosines) -> list[Margin]:
    from tests.dream.test_merge import DISTINCT, PARAPHRASES, TRIP

    cfg = ConsolidationSettings()
    t = for_profile(cfg.merge.similarity, PROFILE)
    need = cfg.merge.group_size - 1
    out = []
    for name, texts in PARAPHRASES.items():
        sims = cos.matrix(texts)
        best = max(float(np.delete(sims[i], i).min()) for i in range(len(texts)))
        out.append(Margin(f"merge {t}", best, best - t, f"paraphrases {name!r}: best founder to its farthest"))
    for name, texts in {**DISTINCT, "trip": TRIP}.items():
        sims = cos.matrix(texts)
        # the cosine of each founder's need-th nearest member: a group forms when one reaches the threshold
        closest = max(float(np.sort(np.delete(sims[i], i))[::-1][need - 1]) for i in range(len(texts)))
        out.append(Margin(f"merge {t}", closest, t - closest, f"distinct {name!r}: founder's {need}th nearest"))
    return out


def _redundancy_margins(cos: Cosines) -> list[Margin]:
    from tests.dream.test_lifecycle_steps import PARAPHRASES, PARAPHRASES_TR

    t = ForgettingSettings().redundancy_threshold(PROFILE)
    out = []
    for kept, other in [*PARAPHRASES, *PARAPHRASES_TR]:
        sim = cos.pair(kept, other)
        out.append(Margin(f"redundancy {t}", sim, sim - t, f"{kept!r} / {other!r}"))
    return out


def _update_floor_margins(cos: Cosines) -> list[Margin]:
    floor = GateSettings().profile(PROFILE).update_candidate_min
    suite = json.loads(UPDATES.read_text("utf-8"))["updates"]
    out = []
    for item in suite:
        sim = cos.pair(item["old"], item["new"])
        out.append(Margin(f"update reading floor {floor}", sim, sim - floor, f"{item['id']}: {item['old']!r}"))
    return out


FAMILIES: dict[str, Callable[[Cosines], list[Margin]]] = {
    "write gate": _gate_margins,
    "consolidation": _consolidation_margins,
    "merge": _merge_margins,
    "redundancy": _redundancy_margins,
    "update reading": _update_floor_margins,
}


@pytest.fixture(scope="module")
def cosines() -> Cosines:
    from reverie.embed import E5Embedder

    return Cosines(E5Embedder())


@pytest.fixture(scope="module")
def margins(cosines: Cosines) -> dict[str, list[Margin]]:
    return {name: family(cosines) for name, family in FAMILIES.items()}


def test_the_drift_is_measured_on_the_calibration_texts(cosines: Cosines, margins: dict[str, list[Margin]]) -> None:
    """Every family contributed pairs, and the drift between the shipped kernels and the exact arithmetic is
    the size of float rounding, far below the earlier 8-bit weights' 0.025."""
    assert all(margins.values()), {k: len(v) for k, v in margins.items()}
    assert cosines.drift < 1e-4, cosines.drift


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_calibrated_threshold_keeps_three_times_the_drift(
    family: str, cosines: Cosines, margins: dict[str, list[Margin]]
) -> None:
    required = FACTOR * cosines.drift
    thin = [m for m in margins[family] if not m.margin > required]
    assert not thin, (f"required margin {required:.2e} (3 x drift {cosines.drift:.2e})", thin)
