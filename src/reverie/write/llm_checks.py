"""The LLM-primary write stages with their heuristic fallbacks: observer classification, box topics, and the
LLM-checked knowledge update."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from reverie.model import (
    MemoryRecord,
)
from reverie.results import Action
from reverie.text import llm_update, updates
from reverie.write import admission, llm_stages
from reverie.write.boxes import topic_words
from reverie.write.items import PendingFact, fallbacks_of
from reverie.write.observer import Classification, Observation

if TYPE_CHECKING:
    from reverie.llm.client import ChatJSON

from reverie.write.recording import WriteBase


class LLMChecks(WriteBase):
    """The write stages an LLM answers first (see :mod:`reverie.write.pipeline`)."""

    def _classify(self, text: str, heuristic: Classification, fallbacks: list[str]) -> tuple[Classification, str]:
        """Observer classification: the LLM's type and confidence, else the pattern scoring."""
        answer, path = self._ask(
            "observer", lambda llm: llm_stages.classify_message(llm, text, limit=self._limit), fallbacks
        )
        if answer is None:
            return heuristic, path
        kind, confidence = answer
        return Classification(kind, confidence, heuristic.matches), path

    def _classify_observation(self, text: str, obs: Observation, fallbacks: list[str]) -> tuple[Observation, str]:
        cls, path = self._classify(text, obs.classification, fallbacks)
        if path == "heuristic":
            return obs, path
        return dataclasses.replace(obs, classification=cls, reason=f"{cls.kind} (llm; density {obs.density})"), path

    def _topic(self, rec: MemoryRecord, cand: PendingFact) -> list[str]:
        """Box topic: entity names plus the LLM's topic words, else the longest informative words."""
        limit = self.cfg.boxes.max_topics
        words, cand.decisions["box_topics"] = self._ask(
            "topics",
            lambda llm: llm_stages.box_topics(llm, rec.content, max_topics=limit, limit=self._limit),
            fallbacks_of(cand),
        )
        if words is None:
            return topic_words(rec.content, entities=rec.entities, limit=limit)
        names = [e.rsplit("/", 1)[-1] for e in rec.entities]
        return list(dict.fromkeys([*names, *words]))[:limit]

    def _llm_update(
        self,
        cand: PendingFact,
        neighbours: list[admission.Neighbour],
        importance: float,
        decision: admission.GateDecision,
        speaker: str | None,
    ) -> admission.GateDecision:
        """LLM-checked knowledge update: the LLM reads the memory the heuristic would supersede — or, when
        it found none, the nearest candidates with any evidence — against the new text, and its verdict
        (with its reason) wins. Without a valid answer the heuristic decision stands."""
        order = self._llm_update_order(neighbours, decision)
        for n in order:
            target = n.record

            def ask(llm: ChatJSON, old: str = target.content) -> tuple[bool, str] | None:
                return llm_update.updates(llm, old, cand.text, limit=self._limit)

            answer, _ = self._ask("contradiction", ask, fallbacks_of(cand))
            if answer is None:
                return decision  # no valid answer: the heuristic verdict stands
            updates_it, why = answer
            cand.decisions.setdefault("llm_verdicts", []).append(
                {"id": target.id, "updates": updates_it, "reason": why[:300]}
            )
            if updates_it:
                return _llm_updates(n, why, speaker, decision)
        return self._llm_no_update(cand, neighbours, importance, decision, speaker, asked=bool(order))

    def _llm_update_order(
        self, neighbours: list[admission.Neighbour], decision: admission.GateDecision
    ) -> list[admission.Neighbour]:
        """The memories the LLM reads against the new text: the one the heuristic would supersede, else the
        nearest checked ones with any evidence (at most ``gate.llm_update_candidates``)."""
        by_id = {n.record.id: n for n in neighbours}
        if decision.action is Action.SUPERSEDE and decision.target is not None:
            return [by_id[decision.target.id]] if decision.target.id in by_id else []
        ranked = sorted(decision.checked, key=lambda c: (-c.score, -c.similarity))
        return [
            by_id[c.id] for c in ranked if c.id in by_id and (c.score > 0 or c.similarity >= self.profile.change_min)
        ][: self.cfg.gate.llm_update_candidates]

    def _llm_no_update(
        self,
        cand: PendingFact,
        neighbours: list[admission.Neighbour],
        importance: float,
        decision: admission.GateDecision,
        speaker: str | None,
        *,
        asked: bool,
    ) -> admission.GateDecision:
        """The decision when the LLM found no update: a heuristic supersede (or a contradiction created
        beside) is decided again on similarity alone; any other decision stands, marked as the LLM's."""
        if decision.action is Action.SUPERSEDE or (
            decision.action is Action.CREATE and decision.target is not None and "contradicts" in decision.reason
        ):
            # the LLM's verdict wins: decide again on similarity alone
            fallback = admission.decide(
                cand.text,
                neighbours,
                importance=importance,
                correction=False,
                profile=self.profile,
                cfg=self.cfg.gate,
                contradiction=False,
                speaker=speaker,
            )
            return admission.GateDecision(
                fallback.action,
                fallback.target,
                fallback.similarity,
                fallback.reason + " (llm: no update)",
                "llm",
                decision.checked,
            )
        return admission.GateDecision(
            decision.action,
            decision.target,
            decision.similarity,
            decision.reason + (" (llm: no update)" if asked else ""),
            "llm",
            decision.checked,
        )


def _llm_updates(
    n: admission.Neighbour, why: str, speaker: str | None, decision: admission.GateDecision
) -> admission.GateDecision:
    """The decision when the LLM says the new text updates ``n``: SUPERSEDE, unless the memory is immutable
    or another speaker's (then the new memory is created beside it)."""
    target = n.record
    reason = f"updates {target.id} (llm, similarity {n.similarity:.3f}): {why}"
    if target.immutable:
        return admission.GateDecision(
            Action.CREATE,
            target,
            n.similarity,
            f"contradicts an immutable memory: created beside it; {reason}",
            "llm",
        )
    if updates.other_speaker(target, speaker):
        return admission.GateDecision(
            Action.CREATE,
            target,
            n.similarity,
            f"contradicts {target.id}, said by another speaker (llm): created beside it; {reason}",
            "llm",
        )
    return admission.GateDecision(Action.SUPERSEDE, target, n.similarity, reason, "llm", decision.checked)
