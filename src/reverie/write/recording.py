"""The write pipeline's collaborators (store, settings, embedder, LLM, ops log, buffers) and its records: each
decision in the memory's history and the ops log, the LLM-primary call with its fallback, and the action
telemetry of every write."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from reverie import action_policy
from reverie.config import Settings
from reverie.model import (
    ActionEvent,
    HistoryEvent,
    MemoryRecord,
)
from reverie.opslog import OpsLog
from reverie.results import Action, AddResult
from reverie.store.base import Store
from reverie.write.boxes import BoxBuilder
from reverie.write.items import PendingFact
from reverie.write.signals.buffer import SmartBuffer
from reverie.write.working_memory import WorkingMemory

if TYPE_CHECKING:
    from reverie.llm.client import ChatJSON


Embed = Callable[[Sequence[str]], np.ndarray]
log = logging.getLogger("reverie.write")
_T = TypeVar("_T")


class WriteBase:
    """What every part of the write pipeline shares: its collaborators, the LLM-primary call and the records."""

    def __init__(
        self,
        *,
        store: Store,
        settings: Settings,
        embed: Embed,
        profile: str,
        clock: Callable[[], datetime],
        ops: OpsLog,
        llm: ChatJSON | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.cfg = settings.write
        self.embed = embed
        self.profile = settings.write.gate.profile(profile)
        self.now = clock
        self.ops = ops
        self.llm = llm if settings.write.use_llm else None
        self._stages = frozenset(settings.write.llm_stages)
        self._limit = settings.write.llm_input_chars
        self.buffer = SmartBuffer(store, self.cfg.buffer)
        self.boxes = BoxBuilder(store, self.cfg.boxes)
        self.working = WorkingMemory(store, settings.dynamics.working)

    def _ask(self, stage: str, call: Callable[[ChatJSON], _T | None], fallbacks: list[str]) -> tuple[_T | None, str]:
        """Ask the LLM for one stage (LLM-primary): ``(answer, "llm")``; ``(None, "heuristic")`` when
        no LLM serves the stage, or when it gave no valid answer (breaker open, timeout, invalid JSON, wrong
        types or ranges) — then ``stage`` joins ``fallbacks`` and the ops log records the fallback."""
        if self.llm is None or stage not in self._stages:
            return None, "heuristic"
        answer = call(self.llm)
        if answer is None:
            fallbacks.append(stage)
            self.ops.log("llm_fallback", stage=stage, path="heuristic", reason="no valid LLM answer")
            log.info("write stage %r: rules decided (no valid LLM answer)", stage)
            return None, "heuristic"
        return answer, "llm"

    def _history(self, memory_id: str, event: str, reason: str, cand: PendingFact, **data: Any) -> None:
        payload = {"path": cand.path, **{k: v for k, v in cand.decisions.items() if v is not None and v != []}, **data}
        self.store.add_history([HistoryEvent(memory_id, event, self.now(), reason=reason, actor="write", data=payload)])

    def _discarded(self, user_id: str | None, agent_id: str | None, source: str) -> None:
        """Telemetry of a message the observer's filter dropped before any fact was formed."""
        if self.cfg.policy.telemetry:
            self.store.log_actions(
                [
                    ActionEvent(
                        action_policy.PolicyAction.DISCARD.value,
                        "SKIP",
                        self.now(),
                        user_id=user_id,
                        agent_id=agent_id,
                        source=source,
                    )
                ]
            )

    def _log(self, result: AddResult, cand: PendingFact, rec: MemoryRecord | None = None) -> AddResult:
        fallbacks = cand.decisions.get("fallbacks")
        if fallbacks:  # the result says that rules decided where the LLM was asked
            result = dataclasses.replace(result, reason=f"{result.reason} {rules_decided(fallbacks)}".strip())
        self.ops.log(
            "write",
            action=result.action.value,
            id=result.id,
            user_id=cand.user_id,
            reason=result.reason,
            path=cand.path,
            decisions=cand.decisions,
            fallback=bool(cand.decisions.get("fallbacks")),
        )
        if self.cfg.policy.telemetry:
            self.store.log_actions(action_events(result, cand, rec, self.now()))
        return result


def rules_decided(stages: Sequence[str]) -> str:
    """What a write result adds to its reason when the LLM gave no answer for some stages."""
    return f"(rules decided {', '.join(dict.fromkeys(stages))}: the LLM gave no valid answer)"


def action_events(result: AddResult, cand: PendingFact, rec: MemoryRecord | None, now: datetime) -> list[ActionEvent]:
    """The action telemetry of one write decision: its policy action with the eligibility context (the
    memory it stored or acted on: its kind and lifecycle state; the fact's confidence, importance, source),
    and a ``create_artifact`` beside a new memory that kept its verbatim words."""
    action = action_policy.action_for(result.action, rec.memory_kind.value if rec is not None else None)
    if action is None:
        return []
    created = rec is not None and result.action in (Action.CREATE, Action.SUPERSEDE)
    ctx = action_policy.eligibility(
        confidence=cand.confidence,
        lifecycle_state=rec.lifecycle_state if rec is not None else "candidate",
        importance=cand.importance,
        write_source=cand.write_source,
    )
    events = [
        ActionEvent(
            action.value,
            result.action.value,
            now,
            user_id=cand.user_id,
            agent_id=cand.agent_id,
            memory_id=result.id,
            **ctx.to_dict(),
        )
    ]
    if created and rec is not None and cand.decisions.get("artifact"):
        events.append(
            ActionEvent(
                action_policy.PolicyAction.CREATE_ARTIFACT.value,
                "KEPT",
                now,
                user_id=cand.user_id,
                agent_id=cand.agent_id,
                memory_id=rec.id,
                **ctx.to_dict(),
            )
        )
    return events


def verbatim_actions(records: Sequence[MemoryRecord], results: Sequence[AddResult], now: datetime) -> list[ActionEvent]:
    """The action telemetry of writes outside the write gate: ``add(infer=False)`` — each item stored as given
    (``store_episode`` or ``store_note`` by its kind) or skipped because its id was stored before (``discard``)
    — and ``update`` (``update_note``)."""
    events: list[ActionEvent] = []
    for rec, result in zip(records, results, strict=True):
        action = action_policy.action_for(result.action, rec.memory_kind.value)
        if action is None:
            continue
        ctx = action_policy.eligibility(
            confidence=rec.source_confidence,
            lifecycle_state=rec.lifecycle_state,
            importance=rec.importance,
            write_source=rec.write_source,
        )
        events.append(
            ActionEvent(
                action.value,
                result.action.value,
                now,
                user_id=rec.user_id,
                agent_id=rec.agent_id,
                memory_id=rec.id,
                **ctx.to_dict(),
            )
        )
    return events


def action_input(cand: PendingFact, action: str, now: datetime) -> dict[str, Any]:
    """Provenance of one write into a memory: what arrived, when, and what it did (nothing is lost)."""
    return {"action": action, "at": now.isoformat(), "text": cand.text[:500], "metadata": cand.metadata}
