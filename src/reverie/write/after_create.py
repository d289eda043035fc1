"""What follows a create: synaptic tagging and capture, relations (and disputed edges), retroactive
strengthening of the neighbours, and working memory."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from reverie import action_policy, edges
from reverie.dynamics import energy as energy_mod
from reverie.dynamics.tagging import captured_stability, captures, is_strong, should_tag, tag_expires_at
from reverie.model import (
    ActionEvent,
    HistoryEvent,
    MemoryRecord,
    Relation,
    RelationType,
    Status,
)
from reverie.store.base import SynapticTag
from reverie.write import admission, llm_stages, relations
from reverie.write.items import PendingFact, fallbacks_of
from reverie.write.working_memory import session_key

if TYPE_CHECKING:
    pass

from reverie.write.recording import WriteBase


class AfterCreate(WriteBase):
    """The stages run after a new memory is stored (see :mod:`reverie.write.pipeline`)."""

    def _after_create(self, rec: MemoryRecord, cand: PendingFact, neighbours: list[admission.Neighbour]) -> None:
        self._tagging(rec)
        self._relations(rec, [n.record for n in neighbours if n.record.id != rec.id], fallbacks_of(cand))
        self._retroactive(rec, neighbours)
        if rec.session_id is not None:
            gone = self.working.add(
                session_key(rec.user_id, rec.session_id), rec.id, importance=rec.importance, now=rec.created_at
            )
            if gone:
                self.ops.log("working_memory", evicted=gone, session_id=rec.session_id)

    def _tagging(self, rec: MemoryRecord) -> None:
        if rec.session_id is None:
            return
        tcfg = self.settings.dynamics.tagging
        key = session_key(rec.user_id, rec.session_id)
        now = rec.created_at
        if is_strong(importance=rec.importance, cfg=tcfg):
            self._capture(key, rec, now)
        if should_tag(importance=rec.importance, cfg=tcfg):
            self.store.put_tags([SynapticTag(rec.id, key, now, tag_expires_at(tagged_at=now, cfg=tcfg))])

    def _capture(self, key: str, strong: MemoryRecord, now: datetime) -> None:
        tcfg = self.settings.dynamics.tagging
        tags = [
            t
            for t in self.store.active_tags(key, now)
            if captures(
                tagged_at=t.tagged_at, strong_at=now, strong_importance=strong.importance, same_session=True, cfg=tcfg
            )
        ]
        if not tags:
            return
        records = self.store.get([t.memory_id for t in tags])
        for rec in records.values():
            self.store.update_fields(rec.id, {"stability": captured_stability(stability=rec.stability, cfg=tcfg)})
        self.store.capture_tags(key, list(records))
        self.store.add_history(
            [
                HistoryEvent(
                    mid,
                    "captured",
                    now,
                    reason=f"captured by strong memory {strong.id}",
                    actor="write",
                    data={"path": "heuristic", "by": strong.id},
                )
                for mid in records
            ]
        )
        self.ops.log("synaptic_capture", by=strong.id, captured=list(records))

    def _relations(self, rec: MemoryRecord, others: list[MemoryRecord], fallbacks: list[str]) -> None:
        """Relations from ``rec`` to ``others`` (LLM-primary, heuristic rules as fallback): a new edge is stored
        (``unverified`` from the rules, ``system_inferred`` from the LLM); an edge stored already (either
        direction for a symmetric type) is observed again and strengthened (the lifecycle design's edge
        reinforcement) instead of being dropped as a duplicate."""
        if not others:
            return
        answer, path = self._ask(
            "relations",
            lambda llm: llm_stages.relations(llm, rec.content, [o.content for o in others], limit=self._limit),
            fallbacks,
        )
        found = None
        if answer is not None:
            found = [
                Relation(
                    rec.id,
                    others[i].id,
                    t,
                    confidence=c,
                    created_at=self.now(),
                    metadata={"path": "llm", edges.VERIFICATION: edges.INFERRED},
                )
                for i, t, c in answer
            ]
        if found is None:
            found = relations.detect(rec, others, self.cfg.relations)
            for r in found:
                r.created_at = self.now()
                r.metadata[edges.VERIFICATION] = edges.UNVERIFIED
        fresh, again = edges.split_seen(found, self.store.relations([rec.id], direction="both"))
        if again:
            now = self.now()
            lc = self.settings.dynamics.lifecycle
            self.store.update_relations([(r.id, edges.reinforced(r, now=now, cfg=lc)) for r in again])
            self.ops.log(
                "relations_reinforced",
                id=rec.id,
                path=path,
                reinforced=[(r.src_id, r.dst_id, r.type.value) for r in again],
            )
        if fresh:
            self._add_relations(fresh, rec.user_id)
            self.ops.log("relations", id=rec.id, path=path, added=[(r.dst_id, r.type.value) for r in fresh])

    def _reobserved(self, target_id: str, neighbours: list[admission.Neighbour], cand: PendingFact) -> None:
        """A memory stated again (REINFORCE) or elaborated (UPDATE): its relations to the write's other
        neighbours are observed again — stored edges are strengthened, new ones added."""
        current = self.store.get([target_id]).get(target_id)
        if current is None:
            return
        self._relations(
            current,
            [n.record for n in neighbours if n.record.id != target_id and n.record.status is Status.ACTIVE],
            fallbacks_of(cand),
        )

    def _dispute_edges(self, memory_id: str) -> None:
        """The prunable edges out of a contradicted memory become ``disputed``: pruned first."""
        rels = [
            r
            for r in self.store.relations([memory_id], direction="out", types=edges.prunable_types(self.cfg.relations))
            if edges.verification(r) != edges.DISPUTED
        ]
        if rels:
            disputed = edges.DISPUTED
            self.store.update_relations(
                [(r.id, {"metadata": {**r.metadata, edges.VERIFICATION: disputed}}) for r in rels]
            )

    def _dispute(self, rec: MemoryRecord, reason: str) -> None:
        """Mark a memory ``disputed`` (its verification state), with a history event."""
        now = self.now()
        self.store.update_fields(rec.id, {"verification_state": "disputed", "updated_at": now})
        self._dispute_edges(rec.id)
        self.store.add_history(
            [HistoryEvent(rec.id, "disputed", now, reason=reason, actor="write", data={"path": "heuristic"})]
        )

    def _add_relations(self, rels: list[Relation], user_id: str | None) -> None:
        """Store relations, then the Cognitive Memory design's pruning check: only an addition can cross its threshold,
        so the scope's relations are counted after additions, not after every memory."""
        self.store.add_relations(rels)
        if rels and self.cfg.policy.telemetry:
            now = self.now()
            self.store.log_actions(
                [
                    ActionEvent(
                        action_policy.PolicyAction.LINK_GRAPH.value,
                        "LINKED",
                        now,
                        user_id=user_id,
                        memory_id=r.src_id,
                        confidence=float(r.confidence),
                        lifecycle_state="active",
                        source="extraction",
                    )
                    for r in rels
                ]
            )
        self._prune_relations(user_id)

    def _prune_relations(self, user_id: str | None) -> None:
        removed = edges.prune_scope(self.store, user_id, self.cfg.relations)
        if removed:
            self.ops.log("relations_pruned", user_id=user_id, removed=removed)

    def _retroactive(self, rec: MemoryRecord, neighbours: list[admission.Neighbour]) -> None:
        ecfg = self.settings.dynamics.energy.model_copy(update={"reinforce_similarity": self.profile.retroactive_min})
        now = rec.created_at
        for n in neighbours:
            old = n.record
            if old.id == rec.id or old.status is not Status.ACTIVE:
                continue
            changes = energy_mod.retroactive_update(
                energy=old.energy,
                updated_at=old.energy_updated_at or old.created_at,
                now=now,
                layer=old.layer,
                similarity=n.similarity,
                reinforcement_count=old.reinforcement_count,
                cfg=ecfg,
            )
            if not changes:
                continue
            self.store.update_fields(old.id, changes)
            self._add_relations(
                [
                    Relation(
                        rec.id,
                        old.id,
                        RelationType.REINFORCES,
                        confidence=n.similarity,
                        weight=n.similarity,
                        created_at=now,
                        metadata={"path": "heuristic"},
                    )
                ],
                rec.user_id,
            )
            self.store.add_history(
                [
                    HistoryEvent(
                        old.id,
                        "reinforced",
                        now,
                        actor="write",
                        reason=f"retroactive strengthening by {rec.id}",
                        data={"similarity": round(n.similarity, 6), "path": "heuristic"},
                    )
                ]
            )
