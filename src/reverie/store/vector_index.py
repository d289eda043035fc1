"""The in-process vector index of the SQLite backend.

Vectors are partitioned by user (``partition`` = ``user_id or ""``) and keyed by the integer
row id (``rid``) of their memory row. A partition is searched exactly (a float32 matrix,
``X @ q`` and ``argpartition``) while it holds at most ``exact_search_max`` vectors; above that an
hnswlib HNSW graph serves the rows it was built with and the exact matrix only holds the rows
changed since (the "delta"), which is folded into the graph with ``add_items`` once it exceeds
``ann_rebuild_delta``. Inserts therefore only append to a matrix; graph work happens lazily at
search time.

The index is derived data. The database is the truth:

* every vector change is appended to a change log (``VectorChange``) in the same transaction as
  the row change, and the index catches up from that log before each search, so writes of other
  processes become visible;
* HNSW graphs are persisted beside the database (a manifest names the files and the log
  position they reflect) and repaired on load by catching up from the log, or rebuilt from the
  rows when anything is missing or inconsistent.

The index knows no SQL: it reads rows through a :class:`VectorSource` the store implements.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from reverie._heap import return_freed_memory

try:  # POSIX advisory locks guard the persisted index between processes
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

Rids = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]

UPSERT = "upsert"
DELETE = "delete"
MANIFEST_FORMAT = 1
_STREAM_BATCH = 20_000
#: rows a partition's exact matrix grows by beyond 1.5x (few: see FlatVectors.add)
_SPARE_ROWS = 8
_MAX_WIDE_FETCH = 4_096


@dataclass(frozen=True, slots=True)
class VectorChange:
    """One entry of the vector change log: ``op`` is :data:`UPSERT` or :data:`DELETE`."""

    seq: int
    rid: int
    partition: str
    op: str


@dataclass(frozen=True, slots=True)
class IndexParams:
    """Tuning of the index (from ``StorageSettings``)."""

    dim: int
    exact_search_max: int
    hnsw_m: int
    hnsw_ef_construction: int
    hnsw_ef_search: int
    rebuild_delta: int


class VectorSource(Protocol):
    """What the index reads from the database (implemented by the SQLite store)."""

    def snapshot(self) -> AbstractContextManager[None]:
        """A consistent read view for the calls made inside it."""
        ...

    def max_seq(self) -> int: ...

    def changes_since(self, seq: int) -> list[VectorChange]: ...

    def current_vectors(self, rids: Sequence[int]) -> list[tuple[int, str, Matrix]]:
        """(rid, partition, embedding) of those rows that still exist and have an embedding."""
        ...

    def partition_size(self, partition: str) -> int: ...

    def partition_vectors(self, partition: str, batch_size: int) -> Iterator[tuple[Rids, Matrix]]: ...

    def partitions(self) -> list[str]: ...

    def log_floor(self) -> int:
        """The oldest log position still complete: changes up to it were trimmed (``compact``), so an
        index whose watermark is below it cannot catch up from the log and must reload."""
        ...

    def change_key(self, seq: int) -> str | None:
        """What identifies the log entry at ``seq`` (``None``: there is none). A saved index records the
        entry its watermark stands at: a database that lost the end of its log (a power cut before the
        log was synced) reuses those positions for other changes, and only the entry tells them apart."""
        ...


@dataclass(frozen=True, slots=True)
class PendingOp:
    """A vector change made by this process, applied to the index after its commit."""

    op: str
    rid: int
    partition: str
    vector: Matrix | None = None
    memory_id: str = ""


def normalise(vectors: Matrix) -> Matrix:
    """Rows scaled to unit length (zero rows stay zero), as a fresh float32 array."""
    out = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    norms = np.linalg.norm(out, axis=1)
    nonzero = norms > 0
    out[nonzero] /= norms[nonzero, None]
    return out


#: Quantised memories live in a partition of their own per user: the user's partition
#: name followed by this suffix (NUL never appears in a user id: the API refuses it). The hot
#: partition's graph never holds them, and a search that excludes the cold store skips them.
QUANTIZED_SUFFIX = "\x00q"


def quantized_partition(partition: str) -> str:
    """The index partition of the quantised memories of a user partition."""
    return partition + QUANTIZED_SUFFIX


def is_quantized_partition(name: str) -> bool:
    return name.endswith(QUANTIZED_SUFFIX)


def prepare(name: str, vectors: Matrix) -> Matrix:
    """The rows a partition keeps: unit vectors, except in quantised partitions, whose rows are
    the codec's search vectors (``reverie.vector_codec.search_vectors``), kept as they are so
    that their inner product with a unit query is the mixed-precision similarity."""
    if is_quantized_partition(name):
        return np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    return normalise(vectors)


def _top(rids: Rids, scores: npt.NDArray[np.float32], n: int) -> tuple[Rids, npt.NDArray[np.float32]]:
    """The ``n`` best (rid, score) pairs, best first (ties by rid for determinism)."""
    if n <= 0 or len(scores) == 0:
        return rids[:0], scores[:0]
    if n < len(scores):
        keep = np.argpartition(-scores, n - 1)[:n]
        rids, scores = rids[keep], scores[keep]
    order = np.lexsort((rids, -scores))
    return rids[order], scores[order]


class FlatVectors:
    """A growable matrix of unit vectors keyed by rid, searched exactly."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._rids: Rids = np.empty(0, dtype=np.int64)
        self._vecs: Matrix = np.empty((0, dim), dtype=np.float32)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    @property
    def rids(self) -> Rids:
        return self._rids[: self._n]

    @property
    def vectors(self) -> Matrix:
        return self._vecs[: self._n]

    def add(self, rids: Rids, vecs: Matrix) -> None:
        """Append rows (the caller removed any earlier copy of these rids)."""
        need = self._n + len(rids)
        if need > len(self._rids):
            # geometric growth with a small spare: a server holds one matrix per user it served, and most users'
            # are small (64 spare rows of 384 floats were 98 KB per user, 196 MB for 2,000 users)
            self._grow(max(need, int(len(self._rids) * 1.5) + _SPARE_ROWS))
        self._rids[self._n : need] = rids
        self._vecs[self._n : need] = vecs
        self._n = need

    def _grow(self, capacity: int) -> None:
        rids = np.empty(capacity, dtype=np.int64)
        vecs = np.empty((capacity, self.dim), dtype=np.float32)
        rids[: self._n] = self._rids[: self._n]
        vecs[: self._n] = self._vecs[: self._n]
        self._rids, self._vecs = rids, vecs

    def remove(self, rids: Rids) -> int:
        """Drop these rids (absent ones are ignored); each hole is filled by the last row."""
        if self._n == 0 or len(rids) == 0:
            return 0
        positions = np.flatnonzero(np.isin(self.rids, rids))
        for pos in positions[::-1]:
            last = self._n - 1
            if pos != last:
                self._rids[pos] = self._rids[last]
                self._vecs[pos] = self._vecs[last]
            self._n = last
        return len(positions)

    def clear(self) -> None:
        self._rids = np.empty(0, dtype=np.int64)
        self._vecs = np.empty((0, self.dim), dtype=np.float32)
        self._n = 0

    def search(self, query: Matrix, n: int) -> tuple[Rids, npt.NDArray[np.float32]]:
        if self._n == 0:
            return self._rids[:0], np.empty(0, dtype=np.float32)
        # einsum runs on one thread: multi-threaded BLAS matvec contends badly on busy hosts
        scores = np.einsum("ij,j->i", self.vectors, query)
        return _top(self.rids.copy(), scores, n)


@dataclass
class Partition:
    """One user's vectors: an optional HNSW graph plus an exact matrix (all rows, or the delta)."""

    flat: FlatVectors
    hnsw: Any | None = None
    hnsw_live: int = 0
    hnsw_max_label: int = -1
    file: str | None = None

    def size(self) -> int:
        return len(self.flat) + self.hnsw_live

    def remove(self, rids: Rids) -> None:
        self.flat.remove(rids)
        if self.hnsw is None:
            return
        for rid in rids[rids <= self.hnsw_max_label]:
            try:
                self.hnsw.mark_deleted(int(rid))
            except RuntimeError:  # not in the graph, or already deleted
                continue
            self.hnsw_live -= 1

    def upsert(self, rids: Rids, vecs: Matrix) -> None:
        self.remove(rids)
        self.flat.add(rids, vecs)

    def search(self, query: Matrix, n: int, ef: int) -> tuple[Rids, npt.NDArray[np.float32], bool]:
        rids, scores = self.flat.search(query, n)
        exhausted = n >= len(self.flat)
        if self.hnsw is not None and self.hnsw_live > 0:
            g_rids, g_scores, complete = self._graph_search(query, min(n, self.hnsw_live), ef)
            exhausted = exhausted and complete and n >= self.hnsw_live
            rids, scores = _top(np.concatenate([rids, g_rids]), np.concatenate([scores, g_scores]), n)
        return rids, scores, exhausted

    def _graph_search(self, query: Matrix, k: int, ef: int) -> tuple[Rids, npt.NDArray[np.float32], bool]:
        assert self.hnsw is not None
        asked = k
        while k > 0:
            self.hnsw.set_ef(max(ef, k))
            try:
                labels, dist = self.hnsw.knn_query(query, k=k, num_threads=1)
            except RuntimeError:  # too many deleted elements to fill k results
                k //= 2
                continue
            scores = (1.0 - dist[0]).astype(np.float32)
            return labels[0].astype(np.int64), scores, k == asked
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), False


@dataclass
class _SyncState:
    initialised: bool = False
    watermark: int = 0
    saved_watermark: int = -1
    dirty: set[str] = field(default_factory=set)


class VectorIndex:
    """All partitions of one database, kept in step with it through the change log."""

    def __init__(self, params: IndexParams, source: VectorSource, ann_dir: Path | None, instance: str) -> None:
        self.params = params
        self.source = source
        self.ann_dir = ann_dir
        self.instance = instance
        self._parts: dict[str, Partition] = {}
        self._state = _SyncState()

    # -- bookkeeping ---------------------------------------------------------------------
    @property
    def watermark(self) -> int:
        return self._state.watermark

    @property
    def initialised(self) -> bool:
        return self._state.initialised

    def loaded_partitions(self) -> list[str]:
        return list(self._parts)

    def reset(self) -> None:
        """Forget everything in memory (the next search reloads from disk and rows)."""
        self._parts.clear()
        self._state = _SyncState()

    def describe(self) -> dict[str, Any]:
        graphs = sum(1 for p in self._parts.values() if p.hnsw is not None)
        return {
            "loaded_partitions": len(self._parts),
            "hnsw_partitions": graphs,
            "indexed_vectors": sum(p.size() for p in self._parts.values()),
            "watermark": self._state.watermark,
        }

    # -- own writes ----------------------------------------------------------------------
    def apply_committed(self, ops: Sequence[PendingOp], seq_before: int, seq_after: int) -> None:
        """Apply this process's committed changes if the index was in step before them.

        Otherwise do nothing: the next :meth:`sync` replays them from the log.
        """
        if not self._state.initialised or seq_before != self._state.watermark:
            return
        self._apply_ops(ops)
        self._state.watermark = seq_after

    def _apply_ops(self, ops: Sequence[PendingOp]) -> None:
        removes: dict[str, list[int]] = {}
        upserts: dict[str, list[PendingOp]] = {}
        for op in ops:
            if op.partition not in self._parts:
                continue
            if op.op == DELETE or op.vector is None:
                removes.setdefault(op.partition, []).append(op.rid)
            else:
                upserts.setdefault(op.partition, []).append(op)
        for name, rids in removes.items():
            self._parts[name].remove(np.asarray(rids, dtype=np.int64))
        for name, group in upserts.items():
            latest = {op.rid: op for op in group}  # the last change of a rid wins
            rid_arr = np.fromiter(latest, dtype=np.int64, count=len(latest))
            vecs = prepare(name, np.stack([op.vector for op in latest.values() if op.vector is not None]))
            self._parts[name].upsert(rid_arr, vecs)

    # -- catching up ---------------------------------------------------------------------
    def sync(self, partitions: Sequence[str] | None) -> None:
        """Bring the index up to the database and load the partitions a search needs.

        ``None`` means every partition.
        """
        with self.source.snapshot():
            head = self.source.max_seq()
            if (
                self._state.initialised
                and head > self._state.watermark
                and self._state.watermark < self.source.log_floor()
            ):
                self.reset()  # the log was trimmed past this index: start again from the saved graphs or rows
            if not self._state.initialised:
                self._load_persisted()
                self._state.initialised = True
            if head > self._state.watermark and self._parts:
                self._catch_up(self.source.changes_since(self._state.watermark))
            self._state.watermark = head
            needed = self.source.partitions() if partitions is None else list(partitions)
            for name in needed:
                if name not in self._parts:
                    self._parts[name] = self._load_partition(name)
                self._maintain(name)
        if self._state.dirty:
            with contextlib.suppress(OSError, RuntimeError):  # persistence is optional: search goes on
                self.save()

    def _catch_up(self, changes: Sequence[VectorChange]) -> None:
        touched: dict[int, set[str]] = {}
        for change in changes:
            touched.setdefault(change.rid, set()).add(change.partition)
        removes: dict[str, list[int]] = {}
        for rid, names in touched.items():
            for name in names & self._parts.keys():
                removes.setdefault(name, []).append(rid)
        for name, rids in removes.items():
            self._parts[name].remove(np.asarray(rids, dtype=np.int64))
        rows = self.source.current_vectors(list(touched))
        ops = [PendingOp(UPSERT, rid, name, vec) for rid, name, vec in rows]
        self._apply_ops(ops)

    def _load_partition(self, name: str) -> Partition:
        part = Partition(FlatVectors(self.params.dim))
        if self.source.partition_size(name) > self.params.exact_search_max:
            self._build_graph(name, part)
            return part
        for rids, vecs in self.source.partition_vectors(name, _STREAM_BATCH):
            part.flat.add(rids, prepare(name, vecs))
        return part

    def _maintain(self, name: str) -> None:
        part = self._parts[name]
        if part.hnsw is not None and int(part.hnsw.get_current_count()) - part.hnsw_live > part.hnsw_live:
            # more entries marked deleted than live ones (the lifecycle moved most of the user's memories to the
            # cold store, say): a search walks the deleted entries too, and with few live ones left it visits
            # nearly the whole graph. The partition is loaded again from its rows: a graph without the deleted
            # entries, or the exact matrix when few rows are left
            self._parts[name] = self._load_partition(name)
            self._state.dirty.add(name)
            return_freed_memory()
            return
        delta = len(part.flat)
        if part.hnsw is None:
            if delta > self.params.exact_search_max:
                self._build_graph(name, part)
        elif delta > self.params.rebuild_delta:
            if delta > max(part.hnsw_live // 4, self.params.rebuild_delta * 4):
                self._build_graph(name, part)
            else:
                self._extend_graph(name, part)

    def _new_graph(self, capacity: int) -> Any:
        import hnswlib

        graph = hnswlib.Index(space="ip", dim=self.params.dim)
        graph.init_index(
            max_elements=max(capacity, 1024),
            ef_construction=self.params.hnsw_ef_construction,
            M=self.params.hnsw_m,
            random_seed=1234,
        )
        return graph

    def _build_graph(self, name: str, part: Partition) -> None:
        """(Re)build the partition's graph from the rows, streamed (one copy of the vectors)."""
        part.flat.clear()
        part.hnsw = None
        size = self.source.partition_size(name)
        graph = self._new_graph(int(size * 1.1) + self.params.rebuild_delta)
        live, top = 0, -1
        for rids, vecs in self.source.partition_vectors(name, _STREAM_BATCH):
            graph.add_items(prepare(name, vecs), rids)
            live += len(rids)
            top = max(top, int(rids.max()))
        part.hnsw, part.hnsw_live, part.hnsw_max_label = graph, live, top
        self._state.dirty.add(name)
        return_freed_memory()  # the streamed batches and the old graph

    def _extend_graph(self, name: str, part: Partition) -> None:
        assert part.hnsw is not None
        graph = part.hnsw
        need = graph.get_current_count() + len(part.flat)
        if need > graph.get_max_elements():
            graph.resize_index(int(need * 1.25))
        graph.add_items(part.flat.vectors, part.flat.rids)
        part.hnsw_live += len(part.flat)
        part.hnsw_max_label = max(part.hnsw_max_label, int(part.flat.rids.max()))
        part.flat.clear()
        self._state.dirty.add(name)

    # -- search --------------------------------------------------------------------------
    def search(self, partitions: Sequence[str], query: Matrix, n: int) -> tuple[Rids, npt.NDArray[np.float32], bool]:
        """The ``n`` best (rid, cosine) over these partitions and whether that was all of them."""
        q = normalise(query)[0]
        all_rids: list[Rids] = []
        all_scores: list[npt.NDArray[np.float32]] = []
        exhausted = True
        for name in partitions:
            part = self._parts.get(name)
            if part is None:
                continue
            rids, scores, done = part.search(q, n, self.params.hnsw_ef_search)
            all_rids.append(rids)
            all_scores.append(scores)
            exhausted = exhausted and done
        if not all_rids:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), True
        rids, scores = _top(np.concatenate(all_rids), np.concatenate(all_scores), n)
        return rids, scores, exhausted

    def entry_counts(self) -> dict[str, int]:
        """Entries of the loaded partitions: every vector held (graph entries marked deleted included),
        and the deleted marks alone (a graph keeps a deleted entry until it is rebuilt)."""
        held = deleted = 0
        for part in self._parts.values():
            held += len(part.flat)
            if part.hnsw is not None:
                count = int(part.hnsw.get_current_count())
                held += count
                deleted += max(0, count - part.hnsw_live)
        return {"vectors": held, "vector_deleted_marks": deleted}

    def rebuild(self) -> None:
        """Drop the saved graphs and every loaded partition, load all partitions again from the rows
        (graphs without deleted entries) and save them."""
        self.drop_persisted()
        self.reset()
        self.sync(None)
        self.save()

    @staticmethod
    def max_fetch() -> int:
        """The widest over-fetch worth asking the index for before scanning rows instead."""
        return _MAX_WIDE_FETCH

    # -- persistence ---------------------------------------------------------------------
    def save(self) -> None:
        """Write the graphs and a manifest atomically (no-op without an ``ann_dir``)."""
        self._state.dirty.clear()
        if self.ann_dir is None:
            return
        graphs = {name: part for name, part in self._parts.items() if part.hnsw is not None}
        if not graphs and not (self.ann_dir / "manifest.json").exists():
            return  # nothing to save; a saved manifest is rewritten (a partition may have dropped its graph)
        self.ann_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._locked(exclusive=True):
            old = self._read_manifest()
            entries = {name: self._save_partition(name, part) for name, part in graphs.items()}
            manifest = {
                "format": MANIFEST_FORMAT,
                "instance": self.instance,
                "dim": self.params.dim,
                "hnsw_m": self.params.hnsw_m,
                "watermark": self._state.watermark,
                "watermark_key": self.source.change_key(self._state.watermark),
                "partitions": entries,
            }
            tmp = self.ann_dir / f"manifest.{uuid.uuid4().hex}.tmp"
            _write_private(tmp, json.dumps(manifest).encode("utf-8"))
            os.replace(tmp, self.ann_dir / "manifest.json")
            self._remove_stale(old, entries)
        self._state.saved_watermark = self._state.watermark

    def save_if_stale(self) -> None:
        """Persist on close when the graphs moved on noticeably since the last save."""
        behind = self._state.watermark - self._state.saved_watermark
        if self._state.dirty or (self._state.saved_watermark >= 0 and behind >= self.params.rebuild_delta):
            self.save()

    def _save_partition(self, name: str, part: Partition) -> dict[str, Any]:
        assert self.ann_dir is not None and part.hnsw is not None
        fname = f"p-{uuid.uuid4().hex}.hnsw"
        path = self.ann_dir / fname
        part.hnsw.save_index(str(path))
        os.chmod(path, 0o600)
        part.file = fname
        return {
            "file": fname,
            "live": part.hnsw_live,
            "max_label": part.hnsw_max_label,
            "delta": [int(r) for r in part.flat.rids],
        }

    def _remove_stale(self, old: dict[str, Any] | None, entries: dict[str, dict[str, Any]]) -> None:
        assert self.ann_dir is not None
        if not old:
            return
        keep = {e["file"] for e in entries.values()}
        for entry in old.get("partitions", {}).values():
            fname = entry.get("file")
            if isinstance(fname, str) and fname not in keep and "/" not in fname:
                with contextlib.suppress(OSError):
                    (self.ann_dir / fname).unlink()

    @contextlib.contextmanager
    def _locked(self, *, exclusive: bool) -> Iterator[None]:
        assert self.ann_dir is not None
        if fcntl is None:  # pragma: no cover - Windows
            yield
            return
        fd = os.open(self.ann_dir / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    def _read_manifest(self) -> dict[str, Any] | None:
        assert self.ann_dir is not None
        try:
            data = json.loads((self.ann_dir / "manifest.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _load_persisted(self) -> None:
        """Load the saved graphs if they belong to this database; any doubt → rebuild later."""
        if self.ann_dir is None or not self.ann_dir.is_dir():
            return
        with self._locked(exclusive=False):
            manifest = self._read_manifest()
            if not self._manifest_fits(manifest):
                return
            assert manifest is not None
            try:
                parts = {name: self._load_graph(entry) for name, entry in manifest["partitions"].items()}
            except (OSError, RuntimeError, KeyError, TypeError, ValueError):
                return  # a partial or damaged index: the partitions load from the rows instead
        watermark = int(manifest["watermark"])
        if watermark > self.source.max_seq():
            return  # the index claims changes the database never saw: not ours
        if watermark < self.source.log_floor():
            return  # older than the trimmed change log: it cannot catch up, the partitions load from rows
        if "watermark_key" in manifest and manifest["watermark_key"] != self.source.change_key(watermark):
            return  # the log entry it was saved at is gone (lost in a power cut, its position reused): rebuild
        self._parts = parts
        self._state.watermark = watermark
        self._state.saved_watermark = watermark
        self._reload_deltas(manifest["partitions"])

    def _manifest_fits(self, manifest: dict[str, Any] | None) -> bool:
        return (
            manifest is not None
            and manifest.get("format") == MANIFEST_FORMAT
            and manifest.get("instance") == self.instance
            and manifest.get("dim") == self.params.dim
            and isinstance(manifest.get("partitions"), dict)
            and isinstance(manifest.get("watermark"), int)
        )

    def _load_graph(self, entry: dict[str, Any]) -> Partition:
        import hnswlib

        assert self.ann_dir is not None
        fname = str(entry["file"])
        if "/" in fname or fname.startswith("."):
            raise ValueError(fname)
        graph = hnswlib.Index(space="ip", dim=self.params.dim)
        graph.load_index(str(self.ann_dir / fname))
        part = Partition(FlatVectors(self.params.dim), graph, int(entry["live"]), int(entry["max_label"]))
        part.file = fname
        return part

    def _reload_deltas(self, entries: dict[str, Any]) -> None:
        for name, entry in entries.items():
            rids = [int(r) for r in entry.get("delta", [])]
            rows = self.source.current_vectors(rids)
            ops = [PendingOp(UPSERT, rid, part, vec) for rid, part, vec in rows if part == name]
            self._apply_ops(ops)

    def drop_persisted(self) -> None:
        if self.ann_dir is not None and self.ann_dir.exists():
            shutil.rmtree(self.ann_dir, ignore_errors=True)


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


__all__ = [
    "DELETE",
    "QUANTIZED_SUFFIX",
    "UPSERT",
    "FlatVectors",
    "IndexParams",
    "Partition",
    "PendingOp",
    "VectorChange",
    "VectorIndex",
    "VectorSource",
    "is_quantized_partition",
    "normalise",
    "prepare",
    "quantized_partition",
]
