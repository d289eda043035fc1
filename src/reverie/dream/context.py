"""The dream cycle's core types: the services a run is given, the context every step gets, a step's report,
a batched write, and the memory of rejected LLM answers.

A step is ``step(ctx) -> StepReport``. Steps read and write only through the store contract, claim the
memories they work on before changing them (the earlier claim wins, the later dreamer skips them this run),
write with optimistic versions, and record every transition in the memory's history. Whatever a run keeps
between its steps lives in its context (:attr:`DreamContext.scratch`), never in a module.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from reverie.errors import ConflictError, InvalidInputError
from reverie.model import HistoryEvent, MemoryRecord
from reverie.results import DreamStepReport
from reverie.store._common import SCAN_ALWAYS_READ
from reverie.store.base import MemoryFilter, Store

if TYPE_CHECKING:
    from reverie.config import Settings
    from reverie.llm.client import ChatJSON


@dataclass(frozen=True, slots=True)
class DreamServices:
    """What the dream cycle works with, handed over by the engine (``Memory.dream_services``): the store, the
    settings, the clock, the ops log, the embedder and the optional LLM. Steps never see the engine itself."""

    store: Store
    settings: Settings
    #: the engine's clock: ``() -> datetime`` (a run's ``now`` comes from it)
    clock: Callable[[], datetime]
    ops_log: Callable[..., None] | None = None
    #: the engine's embedder as ``texts -> (n, dim) float32`` (summaries get fresh embeddings)
    embed: Callable[[Sequence[str]], Any] | None = None
    #: the embedder's profile ("minilm", "openai", "hash"): similarity thresholds depend on it
    profile: str = "minilm"
    #: the optional LLM (:class:`reverie.llm.client.ChatJSON`); ``None`` means the heuristic paths
    llm: ChatJSON | None = None


@dataclass(slots=True)
class StepReport:
    """What one step changed."""

    name: str
    changed: int = 0
    examined: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> DreamStepReport:
        return {
            "name": self.name,
            "changed": self.changed,
            "examined": self.examined,
            "details": self.details,
            "seconds": round(self.seconds, 4),
        }


@dataclass(slots=True)
class DreamContext:
    """What a step gets: the store, the settings, the run's ``now`` and its claim owner."""

    store: Store
    settings: Settings
    now: datetime
    owner: str
    user_id: str | None = None
    all_users: bool = True
    ops_log: Callable[..., None] | None = None
    #: the engine's embedder as ``texts -> (n, dim) float32`` (summaries get fresh embeddings)
    embed: Callable[[Sequence[str]], Any] | None = None
    #: the embedder's profile ("minilm", "openai", "hash"): similarity thresholds depend on it
    profile: str = "minilm"
    #: the optional LLM (:class:`reverie.llm.client.ChatJSON`); ``None`` means the heuristic paths
    llm: ChatJSON | None = None
    #: per-run state shared by steps (the shared pass, a step's budget left, a read snapshot); dies with the run
    scratch: dict[str, Any] = field(default_factory=dict)
    #: this run's own writes per memory: (version before the first of an unbroken series of them,
    #: version after the last, the fields' final values); see :meth:`brought_up_to`
    written: dict[str, tuple[int, int, dict[str, Any]]] = field(default_factory=dict)
    #: monotonic time the run started (claims are stamped with the run's time plus what has elapsed)
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def for_run(
        cls,
        services: DreamServices,
        *,
        settings: Settings,
        now: datetime,
        owner: str,
        user_id: str | None,
        all_users: bool,
    ) -> DreamContext:
        """The context of one run over the engine's ``services`` (``settings``: the run's own copy)."""
        return cls(
            store=services.store,
            settings=settings,
            now=now,
            owner=owner,
            user_id=user_id,
            all_users=all_users,
            ops_log=services.ops_log,
            embed=services.embed,
            profile=services.profile,
            llm=services.llm,
        )

    def claim_now(self) -> datetime:
        """The instant a claim made now is stamped with: the run's ``now`` plus the time elapsed since it
        started, so that a claim taken late in a long run does not start out expired."""
        return self.now + timedelta(seconds=time.monotonic() - self.started)

    def scope(self, **kw: Any) -> MemoryFilter:
        kw.setdefault("user_id", self.user_id)
        kw.setdefault("all_users", self.all_users)
        return MemoryFilter(**kw)

    def claimed_batches(
        self, flt: MemoryFilter, phase: str, *, omit: frozenset[str] = frozenset()
    ) -> Iterator[list[MemoryRecord]]:
        """Walk ``flt`` in batches; yield only the memories this run could claim.

        The records are those the scan read (``omit`` skips heavy columns); they are not read a
        second time after the claim: every write is a compare-and-set on the version scanned, so a
        memory changed in between is skipped by the write and looked at again on the next run.
        """
        cfg = self.settings.dream
        for batch in self.store.scan(flt, batch_size=cfg.batch_size, omit=omit):
            held = set(
                self.store.claim(
                    [r.id for r in batch],
                    owner=self.owner,
                    phase=phase,
                    now=self.claim_now(),
                    ttl_seconds=cfg.claim_ttl_s,
                )
            )
            if not held:
                continue
            try:
                yield [r for r in batch if r.id in held]
            finally:
                self.store.release(self.owner, list(held))

    def write(
        self,
        rec: MemoryRecord,
        changes: dict[str, Any],
        event: str | None,
        reason: str,
        data: dict[str, Any] | None = None,
    ) -> bool:
        """Apply ``changes`` if nobody changed the memory since it was read; record history."""
        try:
            with self.store.transaction():
                self.store.update_fields(rec.id, changes, expected_version=rec.version)
                if event is not None:
                    self.store.add_history(
                        [HistoryEvent(rec.id, event, self.now, reason=reason, actor="dream", data=data or {})]
                    )
        except ConflictError:
            return False  # a concurrent writer won; the next run looks again
        self._note_written(rec, changes)
        if event is not None and self.ops_log is not None:
            self.ops_log("dream." + event, id=rec.id, reason=reason)
        return True

    def write_many(self, items: Sequence[Write]) -> list[str]:
        """Batched :meth:`write`: one transaction and one round trip for many memories.

        Each change is still a compare-and-set against the version read (a memory a concurrent
        writer changed meanwhile is skipped, as in :meth:`write`); every applied change with an
        event gets its history row in the same transaction. Returns the ids written. Plain fields
        only (no content, embedding or user): use :meth:`write` for those.
        """
        if not items:
            return []
        with self.store.transaction():
            done = set(self.store.update_fields_many([(w.rec.id, w.changes, w.rec.version) for w in items]))
            events = [
                HistoryEvent(w.rec.id, w.event, self.now, reason=w.reason, actor="dream", data=w.data or {})
                for w in items
                if w.event is not None and w.rec.id in done
            ]
            self.store.add_history(events)
        for w in items:
            if w.rec.id in done:
                self._note_written(w.rec, w.changes)
        self.log_events(events)
        return [w.rec.id for w in items if w.rec.id in done]

    def log_events(self, events: Sequence[HistoryEvent]) -> None:
        """One ops-log line per kind of event in a batch (its ids and the count of each reason), not one
        per memory: a large cycle makes several changes per memory, and a line each would flood the log.
        Each memory's own record of the transition is its history row."""
        if self.ops_log is None or not events:
            return
        grouped: dict[str, list[HistoryEvent]] = {}
        for ev in events:
            grouped.setdefault(ev.event, []).append(ev)
        for event, evs in grouped.items():
            reasons = Counter(ev.reason for ev in evs)
            self.ops_log("dream." + event, count=len(evs), ids=[ev.memory_id for ev in evs], reasons=dict(reasons))

    def _note_written(self, rec: MemoryRecord, changes: dict[str, Any]) -> None:
        """Remember a compare-and-set write of ``changes`` on ``rec`` (at ``rec.version``) by this run."""
        before = self.written.get(rec.id)
        if before is not None and before[1] == rec.version:  # continues this run's unbroken series
            self.written[rec.id] = (before[0], rec.version + 1, {**before[2], **changes})
        else:
            self.written[rec.id] = (rec.version, rec.version + 1, dict(changes))

    def brought_up_to(self, rec: MemoryRecord, version: int) -> MemoryRecord | None:
        """``rec`` brought (in place) to the stored ``version`` without reading it again, or ``None``.

        Possible when every write between ``rec.version`` and ``version`` was this run's own (an
        unbroken series of compare-and-set writes, each adding one to the version): the fields'
        final values applied to ``rec`` give the stored record. A record a step read before an
        earlier step of the same run wrote it is so kept current; a foreign write breaks the series
        and the caller reads the memory again.
        """
        if rec.version == version:
            return rec
        series = self.written.get(rec.id)
        if series is None or not series[0] <= rec.version < series[1] or series[1] != version:
            return None
        for name, value in series[2].items():  # in place: the caller's snapshot stays current too
            setattr(rec, name, value)
        rec.version = version
        return rec


@dataclass(slots=True)
class Write:
    """One change for :meth:`DreamContext.write_many`: the record as read, its changes, the history event."""

    rec: MemoryRecord
    changes: dict[str, Any]
    event: str | None = None
    reason: str = ""
    data: dict[str, Any] | None = None


class Rejections:
    """Groups whose LLM-written text a step rejected, kept in the store's state so that the same group
    is not sent to the LLM again until it changes (a new member set, or a new ``fingerprint``).

    One state entry per step (newest ``dream.llm_rejections_kept`` kept). Two dreamers saving at
    once may lose one's entries: the group is then asked once more, nothing worse.
    """

    def __init__(self, ctx: DreamContext, step: str) -> None:
        self._ctx = ctx
        self._key = f"dream:{step}:llm_rejected"
        saved = ctx.store.get_state(self._key)
        self._seen: dict[str, str] = dict(saved) if isinstance(saved, dict) else {}
        self._dirty = False

    def seen(self, key: str, fingerprint: str = "") -> bool:
        return self._seen.get(key) == fingerprint

    def add(self, key: str, fingerprint: str = "") -> None:
        self._seen.pop(key, None)
        self._seen[key] = fingerprint  # newest last
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        kept = self._ctx.settings.dream.llm_rejections_kept
        items = list(self._seen.items())[-kept:] if kept > 0 else []
        self._ctx.store.set_state(self._key, dict(items))
        self._dirty = False


Step = Callable[[DreamContext], StepReport]

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Collector(Generic[S]):
    """What a step gathers in the run's shared read-only pass over its scope (:mod:`reverie.dream.scope_pass`):
    a fresh state per run (``start``) and a look at every memory the pass reads (``visit``). Steps that
    declare the same collector share its state: the first of them to act on a candidate consumes it."""

    name: str
    start: Callable[[], S]
    visit: Callable[[DreamContext, S, MemoryRecord], None]


@dataclass(frozen=True, slots=True)
class DreamStep:
    """A registered step: its name (what ``dream.steps`` lists), the step itself, and the collectors it needs
    in the shared pass (the pass runs every registered step's collectors)."""

    name: str
    run: Step
    collects: tuple[Collector[Any], ...] = ()


#: state key prefix: when each dream step last ran over a scope (``*`` = every user)
STEP_RUNS_KEY = "dream:step_runs:"


def step_runs_key(user_id: str | None, *, all_users: bool) -> str:
    """The state key of the step run times of a scope: every user's (``*``) or one user partition's."""
    return STEP_RUNS_KEY + ("*" if all_users else "u:" + (user_id or ""))


_ALL_FIELDS = frozenset(f.name for f in dataclasses.fields(MemoryRecord))


def omit_except(*reads: str) -> frozenset[str]:
    """The scan ``omit`` of a step that reads only ``reads`` (besides the id, version and content every
    scan reads): a pass over a large scope decodes a few columns instead of sixty.
    ``tests/dream/test_dream.py`` checks that the narrow steps decide exactly as with full records."""
    unknown = set(reads) - _ALL_FIELDS
    if unknown:
        raise InvalidInputError(f"not record fields: {sorted(unknown)}")
    return _ALL_FIELDS - frozenset(reads) - SCAN_ALWAYS_READ


def cutoff(now: datetime, days: float) -> datetime:
    return now - timedelta(days=days)


__all__ = [
    "STEP_RUNS_KEY",
    "Collector",
    "DreamContext",
    "DreamServices",
    "DreamStep",
    "Rejections",
    "Step",
    "StepReport",
    "Write",
    "cutoff",
    "omit_except",
    "step_runs_key",
]
