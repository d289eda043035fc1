"""Which embedder wrote a store's vectors, and moving a store to another embedder.

A store records the identity of the embedder that wrote its vectors (model, dimension,
normalisation, query/passage prefixes; :func:`reverie.embed.base.identity_of`) in its key/value
state. Opening it with an embedder of another identity is an :class:`EmbedderMismatchError` that
names both: vectors of two models live in two unrelated spaces, and one search over both ranks
nonsense. :func:`reembed` moves a store to the current embedder: it embeds every memory's content
again, batch by batch in id order, and writes each batch's vectors together with the position
reached, in one transaction — so an interrupted run loses nothing, and the next run continues
where it stopped. Until it finishes, the store opens for nothing but finishing it.

A store written before identities were recorded is checked by evidence: a sample of its stored
vectors is compared with the current embedder's vectors of the same texts, and the identity is
recorded only when they agree.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reverie.embed import fingerprint
from reverie.embed.base import Embedder, describe_identity, identity_of
from reverie.errors import EmbedderMismatchError, InvalidInputError
from reverie.model import Precision
from reverie.store.base import MemoryFilter, Store

#: the store state key of the recorded identity, and of a re-embedding under way
IDENTITY_KEY = "embedder.identity"
REEMBED_KEY = "embedder.reembed"
#: how many stored vectors an unrecorded store is checked on, and the cosine they must reach
EVIDENCE_SAMPLE = 8
EVIDENCE_MIN_COSINE = 0.98
#: the fields a re-embedding pass reads (every other column is left unread)
_NEEDED = frozenset({"id", "version", "content", "content_hash", "embedding_precision"})

Progress = Callable[[int, int], None]
_log = logging.getLogger(__name__)


@dataclass
class ReembedReport:
    """What :func:`reembed` did: memories re-embedded (this run / in total), from which identity to
    which, and whether it only continued an interrupted run."""

    reembedded: int = 0
    total: int = 0
    source: dict[str, Any] | None = None
    target: dict[str, Any] = field(default_factory=dict)
    resumed: bool = False
    already_current: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "reembedded": self.reembedded,
            "total": self.total,
            "source": self.source,
            "target": self.target,
            "resumed": self.resumed,
            "already_current": self.already_current,
        }


def _mismatch(store: Store, recorded: dict[str, Any] | None, current: dict[str, Any], *, pending: bool) -> str:
    where = store.info().target
    now = describe_identity(current)
    if pending:
        return (
            f"{where}: a re-embedding is under way; its vectors are only partly moved to "
            f"{describe_identity(recorded or {})}. Finish it with `reverie reembed` (Memory(target, "
            f"reembed=True).reembed()) using that embedder; the current embedder is {now}"
        )
    was = describe_identity(recorded) if recorded else "an embedder that was not recorded (its vectors do not match)"
    return (
        f"{where} holds vectors written by {was}, but the current embedder is {now}. Configure the embedder "
        f"the store was written with (embedding.local_model / embedding.provider), or move the store to the "
        f"current one with `reverie reembed` (Python: Memory(target, reembed=True).reembed())"
    )


def check(store: Store, embedder: Embedder) -> str | None:
    """Record the embedder's identity in a store that has none, or compare it with the recorded one.

    Returns None when the embedder may use the store, else the message of the mismatch (the caller
    raises :class:`EmbedderMismatchError` with it, or defers it until :func:`reembed` ran)."""
    current = identity_of(embedder)
    pending = store.get_state(REEMBED_KEY)
    if pending:
        target = pending.get("target")
        return _mismatch(store, target, current, pending=True)
    recorded = store.get_state(IDENTITY_KEY)
    if recorded is None:
        if not _matches_stored_vectors(store, embedder):
            return _mismatch(store, None, current, pending=False)
        store.set_state(IDENTITY_KEY, current)
    elif recorded != current:
        return _mismatch(store, recorded, current, pending=False)
    check_fingerprint(store, embedder)
    return None


def check_fingerprint(store: Store, embedder: Embedder) -> fingerprint.Comparison | None:
    """Record the local embedder's fingerprint in a store that has none; otherwise, when this machine's
    runtime or CPU kernels differ from the recorded ones, compare the reference vectors and log a warning
    (the ``reverie`` logger) when they drift past the tolerance. Returns the comparison made, if any (None:
    a remote embedder, a new record, or the same runtime and kernels, which give the same vectors)."""
    if not fingerprint.is_local(embedder):
        return None
    recorded = fingerprint.Fingerprint.from_state(store.get_state(fingerprint.STATE_KEY) or {})
    if recorded is None or recorded.embedder != embedder.name:
        return _first_fingerprint(store, embedder)
    if (recorded.runtime, recorded.kernel) == (fingerprint.runtime_of(embedder), fingerprint.cpu_kernel()):
        return None
    here = fingerprint.take(embedder)
    comparison = fingerprint.check_recorded(here, recorded)
    if comparison is not None and not comparison.ok:
        _log.warning("%s: %s", store.info().target, fingerprint.drift_message(here, recorded, comparison))
    return comparison


def _first_fingerprint(store: Store, embedder: Embedder) -> fingerprint.Comparison | None:
    """Record this machine's fingerprint in a store that has none, when the store's vectors are what this machine
    makes of their texts; otherwise (vectors written before fingerprints were recorded, by other weights or
    kernels: no reference vectors of theirs are known) mark the store as drifted until it is re-embedded."""
    here = fingerprint.take(embedder)
    gap = _stored_vector_gap(store, embedder)
    tolerance = fingerprint.tolerance_of(embedder.name)
    if gap <= tolerance:
        store.set_state(fingerprint.STATE_KEY, here.as_state())
        return None
    earlier = fingerprint.Fingerprint(embedder.name, fingerprint.UNKNOWN_RUNTIME, "unknown", [])
    store.set_state(fingerprint.STATE_KEY, earlier.as_state())
    comparison = fingerprint.Comparison(gap, tolerance)
    _log.warning("%s: %s", store.info().target, fingerprint.drift_message(here, earlier, comparison))
    return comparison


def _drifted(store: Store, embedder: Embedder) -> bool:
    """Whether the store's vectors were made by this embedder on a machine whose vectors drift past the
    fingerprint's tolerance from this one's (then re-embedding the same identity is not a no-op)."""
    if not fingerprint.is_local(embedder):
        return False
    recorded = fingerprint.Fingerprint.from_state(store.get_state(fingerprint.STATE_KEY) or {})
    if recorded is None:
        return False
    comparison = fingerprint.check_recorded(fingerprint.take(embedder), recorded)
    return comparison is not None and not comparison.ok


def _matches_stored_vectors(store: Store, embedder: Embedder) -> bool:
    """Whether the store is empty of vectors or its stored float32 vectors are (nearly) what the
    embedder makes of their texts (a store written before identities were recorded)."""
    cosines = _stored_cosines(store, embedder)
    return cosines is None or bool(cosines.size and np.median(cosines) >= EVIDENCE_MIN_COSINE)


def _stored_vector_gap(store: Store, embedder: Embedder) -> float:
    """The largest ``1 - cosine`` between a sample of the store's float32 vectors and what the embedder
    makes of their texts now (0 for a store without vectors)."""
    cosines = _stored_cosines(store, embedder)
    if cosines is None:
        return 0.0
    return float(np.max(1.0 - cosines)) if cosines.size else float("inf")


def _stored_cosines(store: Store, embedder: Embedder) -> np.ndarray | None:
    """Cosines between a sample of stored float32 vectors and the embedder's vectors of their texts (None: no
    stored vector; empty: vectors of another dimension)."""
    sample: builtins.list[tuple[str, np.ndarray]] = []
    for batch in store.scan(
        MemoryFilter.everything(),
        batch_size=64,
        omit=frozenset({"inputs", "metadata", "entities", "importance_channels"}),
    ):
        for rec in batch:
            if rec.embedding is not None and rec.embedding_precision is Precision.FLOAT32 and rec.content:
                sample.append((rec.content, np.asarray(rec.embedding, dtype=np.float32)))
        if len(sample) >= EVIDENCE_SAMPLE:
            break
    if not sample:
        return None
    sample = sample[:EVIDENCE_SAMPLE]
    if sample[0][1].shape != (embedder.dim,):
        return np.zeros(0)
    fresh = np.asarray(embedder.embed([text for text, _ in sample]), dtype=np.float64)
    stored = np.stack([vec for _, vec in sample]).astype(np.float64)
    return np.sum(fresh * stored, axis=1) / np.maximum(  # type: ignore[no-any-return]
        np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1), 1e-12
    )


def reembed(
    store: Store, embedder: Embedder, *, batch_size: int = 128, progress: Progress | None = None
) -> ReembedReport:
    """Embed every memory of the store again with ``embedder`` (all users, statuses and tiers).

    Resumable: each batch's vectors and the last id reached are written in one transaction, and a
    run continues an interrupted one (for the same embedder identity; a run for another identity
    starts over). Each memory keeps its stored precision (a quantised memory is re-quantised).
    ``progress(done, total)`` is called after every batch. The derived vector indexes are rebuilt at
    the end.
    Moving between embedders of different dimensions is not supported here: export the memories
    and import them into a new store (``reverie export`` / ``reverie import`` re-embed on import)."""
    if batch_size < 1:
        raise InvalidInputError(f"batch_size must be >= 1, got {batch_size}")
    target = identity_of(embedder)
    recorded = store.get_state(IDENTITY_KEY)
    state = store.get_state(REEMBED_KEY)
    total = store.count(MemoryFilter.everything())
    report = ReembedReport(total=total, source=recorded, target=target)
    if not state and recorded == target and not _drifted(store, embedder):
        report.already_current = True
        return report
    stored_dim = int(recorded["dim"]) if recorded and "dim" in recorded else int(getattr(store, "dim", embedder.dim))
    if stored_dim != embedder.dim:
        raise EmbedderMismatchError(
            f"{store.info().target} stores {stored_dim}-dimensional vectors and {describe_identity(target)} makes "
            f"{embedder.dim}-dimensional ones; re-embedding in place keeps the dimension. Move the memories to a "
            f"new store instead: `reverie export out.jsonl` with the old embedder, then `reverie import out.jsonl` "
            f"into a new database with the new one (the import embeds every memory again)"
        )
    if state and state.get("target") == target:
        report.resumed = True
        report.source = state.get("source")
    else:
        state = {"target": target, "source": recorded, "after": "", "done": 0}
        store.set_state(REEMBED_KEY, state)
    done = int(state["done"])
    if progress is not None:
        progress(done, total)
    omit = frozenset({"inputs", "metadata", "entities", "importance_channels", "embedding"})
    for batch in store.scan(MemoryFilter.everything(), batch_size=batch_size, omit=omit, after=str(state["after"])):
        texts = [rec.content for rec in batch]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        with store.transaction():
            for rec, vec in zip(batch, vectors, strict=True):
                store.update_fields(rec.id, {"embedding": vec})
            done += len(batch)
            state = {**state, "after": batch[-1].id, "done": done}
            store.set_state(REEMBED_KEY, state)
        report.reembedded += len(batch)
        if progress is not None:
            progress(done, total)
    with store.transaction():
        store.set_state(IDENTITY_KEY, target)
        store.set_state(REEMBED_KEY, None)
        if fingerprint.is_local(embedder):
            store.set_state(fingerprint.STATE_KEY, fingerprint.take(embedder).as_state())
    store.rebuild_indexes()
    return report


__all__ = ["EVIDENCE_MIN_COSINE", "IDENTITY_KEY", "REEMBED_KEY", "ReembedReport", "check", "reembed"]
