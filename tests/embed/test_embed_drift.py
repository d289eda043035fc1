"""The same vectors on every machine: the default int8 encoder computes its integer products exactly (so every
CPU family gives the same vectors), reproduces the expected vectors shipped with reverie, and a store warns
when the machine it is opened on drifts from the one that wrote it."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from reverie import Memory, SettableClock
from reverie.embed import fingerprint, space
from reverie.embed.e5 import E5Embedder
from reverie.store.base import MemoryFilter

pytestmark = pytest.mark.model

#: short and long (windows of 510 tokens), English and Turkish, numbers, emoji, other scripts
TEXTS = [
    "Maya is allergic to penicillin and prefers window seats.",
    "Kullanıcı İzmir'de yaşıyor ve her sabah kahve içiyor ☕",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful!!! 🏳️‍🌈",
    "The deploy pipeline runs on GitHub Actions (3 jobs, ~12 min), 14:30 every Friday.",
    "日本語のテキストとРусский текст и عربي",
    " ".join(f"Line {i}: the quarterly report lists {i * 7} units shipped to Porto." for i in range(120)),
]


@pytest.fixture(scope="module")
def int8() -> E5Embedder:
    return E5Embedder()


def _worst(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(1.0 - np.sum(a.astype(np.float64) * b, axis=1)))


def test_int8_vectors_are_the_exact_integer_arithmetic(int8: E5Embedder) -> None:
    """Passages and queries, one text (the query session) and a batch (every core): the shipped session equals
    the exact sums of its integer products, which is what any CPU's int8 kernel gives when it does not saturate.
    With the earlier 8-bit weights and onnxruntime's fused kernels this was 0.004 (0.01 at worst) on AVX2."""
    assert _worst(int8.embed(TEXTS), int8.exact_vectors(TEXTS)) < 1e-6
    assert _worst(int8.embed_query(TEXTS), int8.exact_vectors(TEXTS, query=True)) < 1e-6
    for text in TEXTS[:3]:
        assert _worst(int8.embed_query([text]), int8.exact_vectors([text], query=True)) < 1e-6


def test_the_shipped_reference_vectors_are_reproduced(int8: E5Embedder) -> None:
    """The fingerprint's reference texts give the vectors shipped with reverie, within the stated tolerance."""
    fp = fingerprint.take(int8)
    assert fp.embedder == "multilingual-e5-small-int8"
    comparison = fingerprint.check_expected(fp)
    assert comparison is not None and comparison.ok, comparison
    assert comparison.tolerance == fingerprint.TOLERANCE["multilingual-e5-small-int8"]


def test_the_fingerprint_names_model_runtime_and_kernel(int8: E5Embedder) -> None:
    fp = fingerprint.take(int8)
    assert fp.runtime.startswith("onnxruntime ")
    assert fp.kernel.split()[0] in {"x86_64", "aarch64", "arm64", "AMD64"} or fp.kernel
    assert len(fp.vectors) == len(fingerprint.REFERENCE_TEXTS) and len(fp.vectors[0]) == int8.dim
    again = fingerprint.Fingerprint.from_state(fp.as_state())
    assert again == fp
    assert fingerprint.Fingerprint.from_state({"embedder": "x"}) is None  # damaged state: no fingerprint


def test_exact_vectors_exist_for_int8_only() -> None:
    from reverie.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="int8"):
        E5Embedder(precision="q4").exact_vectors(["x"])


def _memory(target: Path, embedder: E5Embedder) -> Memory:
    return Memory(
        target,
        config={"opslog": {"path": str(target.with_suffix(".ops.jsonl"))}},
        embedder=embedder,
        clock=SettableClock(datetime(2025, 3, 1, tzinfo=UTC)),
    )


def test_a_store_records_the_fingerprint_and_warns_when_this_machine_drifts(
    int8: E5Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A new store records the fingerprint; opened where the runtime or kernels differ, the reference vectors
    are compared: equal ones pass silently, drifted ones are a warning in the ``reverie`` logger naming both
    machines, and ``reembed`` then makes the vectors again instead of reporting the store current."""
    db = tmp_path / "m.db"
    with _memory(db, int8) as m:
        m.add("Maya is allergic to penicillin", user_id="u", infer=False)
        recorded = fingerprint.Fingerprint.from_state(m.store.get_state(fingerprint.STATE_KEY) or {})
    assert recorded is not None and recorded == fingerprint.take(int8)

    # the store was written on another machine whose vectors are the same: no warning
    with _memory(db, int8) as m:
        m.store.set_state(fingerprint.STATE_KEY, {**recorded.as_state(), "kernel": "x86_64 avx512_vnni"})
    with caplog.at_level(logging.WARNING, logger="reverie"), _memory(db, int8):
        pass
    assert not [r for r in caplog.records if r.name.startswith("reverie")]

    # … and on a machine whose kernels saturated: vectors 0.004 away
    rng = np.random.default_rng(3)
    moved = np.asarray(recorded.vectors) + rng.normal(0, 0.004, size=(len(recorded.vectors), int8.dim))
    drifted = {**recorded.as_state(), "kernel": "x86_64 avx2", "runtime": "onnxruntime 1.17.0"}
    drifted["vectors"] = moved.tolist()
    with _memory(db, int8) as m:
        m.store.set_state(fingerprint.STATE_KEY, drifted)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="reverie"), _memory(db, int8) as m:
        comparison = space.check_fingerprint(m.store, int8)
        assert comparison is not None and not comparison.ok
        check = m.health(checks=["embedder"])["embedder"]  # reverie doctor says it too
        assert check.status == "warn" and "onnxruntime 1.17.0" in check.message, check
        assert check.details["fingerprint"]["drift_from_shipped"] <= fingerprint.tolerance_of(int8.name)
        report = m.reembed()
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("reverie")]
    assert warnings and "onnxruntime 1.17.0" in warnings[0] and "reverie reembed" in warnings[0]
    assert report["reembedded"] == 1 and not report["already_current"]
    with _memory(db, int8) as m:  # re-embedded here: the store now records this machine
        assert fingerprint.Fingerprint.from_state(m.store.get_state(fingerprint.STATE_KEY) or {}) == recorded
        assert m.reembed()["already_current"]
        ok = m.health(checks=["embedder"])["embedder"]
        assert ok.status == "ok" and fingerprint.cpu_kernel() in ok.message and "onnxruntime" in ok.message, ok


def test_a_store_written_before_fingerprints_is_checked_against_its_vectors(
    int8: E5Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store that recorded no fingerprint (written by an earlier reverie) is checked once, by embedding a
    sample of its texts again: vectors this machine reproduces are recorded as this machine's; vectors of other
    weights (here moved as the earlier full-range int8 weights moved them, ~0.004 in 1 - cosine) keep the store
    marked as drifted (a warning now and at every open, doctor's warning) until reembed makes them again."""
    same, moved = tmp_path / "same.db", tmp_path / "moved.db"
    rng = np.random.default_rng(5)
    for db in (same, moved):
        with _memory(db, int8) as m:
            for text in ("Maya is allergic to penicillin", "Leo plays the cello on Sundays"):
                m.add(text, user_id="u", infer=False)
            if db == moved:
                for rec in m.store.list(MemoryFilter.everything(), limit=10):
                    assert rec.embedding is not None
                    vec = np.asarray(rec.embedding, dtype=np.float64) + rng.normal(0, 0.006, size=int8.dim)
                    m.store.update_fields(rec.id, {"embedding": (vec / np.linalg.norm(vec)).astype(np.float32)})
            m.store.delete_state([fingerprint.STATE_KEY])
    with caplog.at_level(logging.WARNING, logger="reverie"), _memory(same, int8) as m:
        assert fingerprint.Fingerprint.from_state(m.store.get_state(fingerprint.STATE_KEY) or {}) == fingerprint.take(
            int8
        )
        assert m.reembed()["already_current"]
    assert not [r for r in caplog.records if r.name.startswith("reverie")]
    for _ in range(2):  # warned when first checked, and at every open after it
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="reverie"), _memory(moved, int8) as m:
            check = m.health(checks=["embedder"])["embedder"]
        warnings = [r.getMessage() for r in caplog.records if r.name.startswith("reverie")]
        assert warnings and fingerprint.UNKNOWN_RUNTIME in warnings[0] and "reverie reembed" in warnings[0]
        assert check.status == "warn" and fingerprint.UNKNOWN_RUNTIME in check.message
    with _memory(moved, int8) as m:
        report = m.reembed()
        assert report["reembedded"] == 2 and not report["already_current"]
    with _memory(moved, int8) as m:
        assert m.health(checks=["embedder"])["embedder"].status == "ok"
        assert m.reembed()["already_current"]
