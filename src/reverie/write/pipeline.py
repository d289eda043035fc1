"""The write pipeline: composes the stages and records every decision (the write path).

``observe`` (raw turns): observer → signal scan / smart buffer → formation → :meth:`write`.
``add(infer=True)``: formation → :meth:`write`. :meth:`write` runs, per fact: content-hash dedup
→ neighbours → surprise and importance → PE gate → CREATE / UPDATE / SUPERSEDE / REINFORCE / SKIP
→ (on create) synaptic tagging and capture, relations, retroactive strengthening, box, working
memory. Each decision says which path made it (``llm`` or ``heuristic``) and why, in the memory's
history and in the ops log.

With an LLM configured, the stages named in ``write.llm_stages`` ask it first: observer classification,
formation, emotion, contradiction, merge, relations and box topics. A stage whose answer is missing
or invalid (breaker open, timeout, invalid JSON, wrong types or ranges) takes its heuristic path; the
stage is listed under ``fallbacks`` in the decisions and an ``llm_fallback`` line goes to the ops log.
Hostile input never reaches the LLM: the observer's filter (and, for ``add(infer=True)``, its hostile
layers: binary content, system content, prompt injection) runs first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from reverie import action_policy
from reverie.dynamics import lifecycle
from reverie.dynamics import surprise as surprise_mod
from reverie.dynamics.access import initial_values
from reverie.dynamics.importance import channel_importance, encoding_boost_of, priority_level
from reverie.dynamics.promotion import eligible_transition
from reverie.errors import ConflictError, StoreError
from reverie.model import (
    HistoryEvent,
    Layer,
    MemoryRecord,
    Relation,
    RelationType,
    Status,
    Vector,
    content_hash,
)
from reverie.results import Action, AddResult, SessionEndReport
from reverie.store.base import MemoryFilter
from reverie.text import updates
from reverie.text.classify import category_of, episodic_sub_tier, memory_kind
from reverie.write import admission, llm_stages, text_merge
from reverie.write.after_create import AfterCreate
from reverie.write.emotion import detect_emotion
from reverie.write.entities import entity_uris, extract_entities
from reverie.write.formation import FormedFact, form_facts
from reverie.write.items import PendingFact, PreparedItem, fallbacks_of
from reverie.write.llm_checks import LLMChecks
from reverie.write.observer import classify, hostile_reason, observe_message
from reverie.write.recording import action_input
from reverie.write.signals.buffer import Signal, Turn, buffer_key, scan
from reverie.write.working_memory import session_key

if TYPE_CHECKING:
    from reverie.config.dynamics_retention import LifecycleSettings

#: how often the gate decides again when a concurrent writer changed its target meanwhile
_GATE_ATTEMPTS = 3
_SPEAKER = re.compile(r"^\s*([A-ZÇĞİÖŞÜ][\w .'-]{0,40}?):\s+(?=\S)")
#: the metadata key of a memory's verbatim artifact: ``{"verbatim": the message's words, "at": ISO time}``
ARTIFACT = "verbatim_artifact"


class WritePipeline(AfterCreate, LLMChecks):
    """Runs the write path against one store (see module docs)."""

    # entry points ------------------------------------------------------------------------
    def add_items(self, items: Sequence[PreparedItem], vectors: np.ndarray) -> list[AddResult]:
        """``add(infer=True)``: form each item into facts, then write them (one transaction per item). Hostile
        items (binary content, system content, prompt injection) are filtered: a SKIP with the reason."""
        results: list[AddResult] = []
        for item, vec in zip(items, vectors, strict=True):
            hostile = hostile_reason(item.content, self.cfg.observer)
            if hostile is not None:
                reason = f"filtered: {hostile}"
                self.ops.log("add", action="SKIP", reason=reason, path="heuristic", infer=True, user_id=item.user_id)
                results.append(AddResult(None, Action.SKIP, (), reason))
                self._discarded(item.user_id, item.agent_id, "manual")
                continue
            candidates = self._form_item(item, vec)
            with self.store.transaction():
                results.append(_combine(self.write(candidates)))
        return results

    def observe(
        self,
        text: str,
        *,
        role: str,
        user_id: str | None,
        agent_id: str | None,
        session_id: str | None,
        when: datetime | None,
        metadata: dict[str, Any],
    ) -> list[AddResult]:
        """One raw conversation turn: filter, buffer, and extract when the buffer is due."""
        now = self.now()
        speaker, body = _speaker(text, metadata, role)
        obs = observe_message(body, subject=speaker, cfg=self.cfg.observer)
        if not obs.keep:
            self.ops.log("observe", action="SKIP", reason=obs.reason, path="heuristic", role=role, user_id=user_id)
            self._discarded(user_id, agent_id, "extraction")
            return [AddResult(None, Action.SKIP, (), obs.reason)]
        fallbacks: list[str] = []
        obs, cls_path = self._classify_observation(body, obs, fallbacks)
        signal, why = scan(body, obs)
        turn = Turn(
            obs.text,
            role,
            (when or now).isoformat(),
            speaker,
            obs.classification.kind,
            obs.classification.confidence,
            {**metadata, "agent_id": agent_id},
            cls_path,
            fallbacks,
            raw=body if body != obs.text else None,
        )
        key = buffer_key(user_id, None, session_id)
        turns = self.buffer.append(key, turn)
        due = f"high signal: {why}" if signal is Signal.HIGH else self.buffer.due(turns, now)
        if due is None:
            reason = f"buffered ({len(turns)}/{self.cfg.buffer.max_turns} turns): {obs.reason}"
            self.ops.log(
                "observe",
                action="BUFFER",
                reason=reason,
                path=cls_path,
                role=role,
                user_id=user_id,
                kind=obs.classification.kind,
                fallback=bool(fallbacks),
            )
            return [AddResult(None, Action.SKIP, (), reason)]
        return self.flush(user_id=user_id, session_id=session_id, reason=due)

    def flush(self, *, user_id: str | None, session_id: str | None, reason: str) -> list[AddResult]:
        """Extract and write every buffered turn of a conversation (nothing buffered is lost)."""
        key = buffer_key(user_id, None, session_id)
        turns = self.buffer.turns(key)
        if not turns:
            return []
        candidates = self._extract(turns, user_id=user_id, session_id=session_id, reason=reason)
        with self.store.transaction():
            results = self.write(candidates)
            self.buffer.drain(key)
        return results

    def end_session(self, session_id: str, *, user_id: str | None) -> SessionEndReport:
        """Flush the buffer, seal the open box, promote by energy, clear working memory."""
        flushed = self.flush(user_id=user_id, session_id=session_id, reason="session end")
        now = self.now()
        key = session_key(user_id, session_id)
        candidates = self.working.promotion_candidates(key)
        sealed = self.boxes.seal_open(user_id=user_id, session_id=session_id, now=now)
        promoted = self._session_end_promotion(user_id, session_id, now)
        promoted += self._promote_candidates([c for c in candidates if c not in promoted], now)
        cleared = self.working.clear(key)
        report: SessionEndReport = {
            "session_id": session_id,
            "flushed": [r.to_dict() for r in flushed],
            "promoted": promoted,
            "promotion_candidates": candidates,
            "working_cleared": cleared,
            "box_sealed": sealed.id if sealed else None,
        }
        self.ops.log(
            "end_session", session_id=session_id, promoted=len(promoted), cleared=cleared, flushed=len(flushed)
        )
        return report

    # formation ---------------------------------------------------------------------------
    def _form_item(self, item: PreparedItem, vec: Vector) -> list[PendingFact]:
        at = item.when or self.now()
        # an explicit add is one memory: no atomic split (observe() splits raw turns)
        facts, _ = form_facts(item.content, now=at, cfg=self.cfg.formation, split=False)
        entities = extract_entities(item.content, limit=self.cfg.observer.max_entities)
        fallbacks: list[str] = []
        kind, cls_path = self._classify(item.content, classify(item.content, entities, self.cfg.observer), fallbacks)
        out = []
        for fact in facts:
            cand = self._candidate(fact, kind.kind, 1.0, item, path="heuristic")
            cand.decisions.update(classification=cls_path, fallbacks=list(fallbacks))
            cand.write_source = "manual"
            if len(facts) == 1 and fact.text == item.content:
                cand.vector = vec
            out.append(cand)
        return out

    def _candidate(
        self, fact: FormedFact, kind: str, confidence: float, item: PreparedItem, *, path: str
    ) -> PendingFact:
        category = category_of(kind, fact.text, foresight=fact.foresight)
        return PendingFact(
            text=fact.text,
            user_id=item.user_id,
            agent_id=item.agent_id,
            session_id=item.session_id,
            metadata=dict(item.metadata),
            when=item.when,
            source=item.source or "interaction",
            category=category,
            confidence=confidence,
            emotion=detect_emotion(fact.text),
            entities=fact.entities or entity_uris(fact.text, limit=self.cfg.observer.max_entities),
            temporal_type=fact.temporal_type,
            valid_until=fact.valid_until,
            path=path,
            decisions={"formation": path, "category": category},
        )

    def _extract(
        self, turns: list[Turn], *, user_id: str | None, session_id: str | None, reason: str
    ) -> list[PendingFact]:
        fallbacks = [stage for t in turns for stage in t.fallbacks]
        facts, _ = self._ask(
            "formation",
            lambda llm: llm_stages.extract_facts(llm, [(t.subject, t.text, t.when) for t in turns], limit=self._limit),
            fallbacks,
        )
        if facts is not None:
            last = turns[-1]
            item = self._turn_item(last, user_id, session_id)
            out_llm = [self._candidate(f, cat, conf, item, path="llm") for f, cat, conf in facts]
            for cand, (_, _, conf) in zip(out_llm, facts, strict=True):
                cand.fact_confidence = conf
                cand.verbatim = _source_turn(cand.text, turns)
                # the category is the extraction's: classified by the LLM
                cand.decisions.update(extracted=reason, classification="llm", fallbacks=list(dict.fromkeys(fallbacks)))
            return out_llm
        out: list[PendingFact] = []
        last_entity: str | None = None
        for turn in turns:
            facts_h, last_entity = form_facts(
                turn.text, now=turn.when, cfg=self.cfg.formation, last_entity=last_entity, subject=turn.subject
            )
            item = self._turn_item(turn, user_id, session_id)
            floor = self.cfg.observer.source_confidence_floor
            for fact in facts_h:
                cand = self._candidate(fact, turn.kind, floor + (1 - floor) * turn.confidence, item, path="heuristic")
                cand.verbatim = turn.raw or turn.text
                cand.decisions.update(
                    extracted=reason,
                    classification=turn.classified_by,
                    fallbacks=list(dict.fromkeys([*turn.fallbacks, *fallbacks])),
                )
                out.append(cand)
        return out

    @staticmethod
    def _turn_item(turn: Turn, user_id: str | None, session_id: str | None) -> PreparedItem:
        meta = {k: v for k, v in turn.metadata.items() if k != "agent_id"}
        meta.setdefault("role", turn.role)
        agent = turn.metadata.get("agent_id")
        return PreparedItem(
            content=turn.text,
            user_id=user_id,
            agent_id=agent if isinstance(agent, str) else None,
            session_id=session_id,
            metadata=meta,
            when=turn.when,
            source="ai" if turn.role == "assistant" else "interaction",
        )

    # the gate and the writes -------------------------------------------------------------
    def write(self, candidates: Sequence[PendingFact]) -> list[AddResult]:
        """Write formed facts through dedup and the PE gate (the caller holds the transaction). The facts
        of one extraction are embedded in one batch (one model call instead of one per fact)."""
        missing = [c for c in candidates if c.vector is None]
        if len(missing) > 1:
            for cand, vec in zip(missing, self.embed([c.text for c in missing]), strict=True):
                cand.vector = vec
        return [self._write_one(c) for c in candidates]

    def _write_one(self, cand: PendingFact) -> AddResult:
        if cand.metadata.get("role") == "assistant":
            cand.data_source = "assistant_message"
        if cand.write_source != "manual":
            cand.write_source = "observer"
        flt = MemoryFilter(user_id=cand.user_id, agent_id=cand.agent_id)
        dup = self.store.find_by_hash(flt, content_hash(cand.text))
        if dup is not None:
            return self._log(AddResult(dup.id, Action.SKIP, (dup.id,), "duplicate content (content hash)"), cand, dup)
        emotion, cand.decisions["emotion"] = self._ask(
            "emotion", lambda llm: llm_stages.detect_emotion(llm, cand.text, limit=self._limit), fallbacks_of(cand)
        )
        if emotion is not None:
            cand.emotion = emotion
        if cand.vector is None:
            cand.vector = self.embed([cand.text])[0]
        for attempt in range(_GATE_ATTEMPTS):
            neighbours = self._neighbours(cand, flt)
            importance, channels, surprise = self._importance(cand, neighbours)
            cand.importance = importance
            decision = self._decide(cand, neighbours, importance)
            cand.decisions.update(
                gate=decision.path,
                similarity=decision.similarity,
                priority=priority_level(importance=importance, cfg=self.settings.dynamics.importance),
            )
            action = decision.action
            if action is Action.SKIP:
                tid = decision.target.id if decision.target else None
                return self._log(
                    AddResult(tid, Action.SKIP, (tid,) if tid else (), decision.reason), cand, decision.target
                )
            try:
                if action is Action.REINFORCE and decision.target is not None:
                    result = self._reinforce(decision.target, decision, cand)
                    self._reobserved(decision.target.id, neighbours, cand)
                    return self._log(result, cand, decision.target)
                if action is Action.UPDATE and decision.target is not None:
                    result = self._update(decision.target, decision, cand)
                    self._reobserved(decision.target.id, neighbours, cand)
                    return self._log(result, cand, decision.target)
            except ConflictError:
                # a concurrent writer (a dream step, another process) changed the target after it was
                # read: gate again against the current state instead of failing or overwriting it
                if attempt + 1 == _GATE_ATTEMPTS:
                    raise
                continue
            break
        rec = self._create(cand, importance, channels, surprise, decision)
        ids = self._against_target(rec, action, decision)
        self._after_create(rec, cand, neighbours)
        return self._log(AddResult(rec.id, action, ids, decision.reason), cand, rec)

    def _against_target(self, rec: MemoryRecord, action: Action, decision: admission.GateDecision) -> tuple[str, ...]:
        """A created memory and the stored one the gate read it against: SUPERSEDE retires it; a contradiction
        created beside it is linked (and disputed when it contradicts a truth anchor). Returns the ids written."""
        if action is Action.SUPERSEDE and decision.target is not None:
            self._supersede(decision.target, rec, decision)
            return rec.id, decision.target.id
        if decision.may_update and decision.target is not None:
            self._add_relations(
                [
                    Relation(
                        rec.id,
                        decision.target.id,
                        RelationType.MAY_UPDATE,
                        created_at=rec.created_at,
                        metadata={"path": decision.path, "reason": decision.reason[:300]},
                    )
                ],
                rec.user_id,
            )
            return (rec.id,)
        if decision.target is not None and _contradicts(decision):
            self._add_relations(
                [
                    Relation(
                        rec.id,
                        decision.target.id,
                        RelationType.CONTRADICTS,
                        created_at=rec.created_at,
                        metadata={"path": decision.path},
                    )
                ],
                rec.user_id,
            )
            if decision.target.immutable:  # a truth anchor wins: the statement against it is disputed
                self._dispute(rec, f"contradicts the immutable memory {decision.target.id}")
        return (rec.id,)

    def _neighbours(self, cand: PendingFact, flt: MemoryFilter) -> list[admission.Neighbour]:
        """The gate's neighbours, most similar first: the nearest by meaning, and — when the new text says
        that something changed — its best full-text matches (a correction often names what it corrects,
        "Priya left", while other memories sit nearer in meaning), each with its cosine to the new text."""
        assert cand.vector is not None
        gcfg = self.cfg.gate
        hits = self.store.vector_search(cand.vector, flt, max(gcfg.neighbours, gcfg.update_candidates))
        sims = {h.id: h.score for h in hits}
        lexical: list[str] = []
        queries = [cand.text] if updates.says_change(cand.text) else []  # a change names what it changes
        statement = updates.analyse(cand.text)
        if queries and statement.turkish:  # full text does not stem Turkish: its stems find "kira" for "kirayı"
            queries.append(" ".join(sorted({s for c in statement.clauses for s in c.stems | c.subject_words})))
        try:
            for query in queries:
                lexical += [
                    h.id
                    for h in self.store.text_search(query, flt, gcfg.update_candidates)
                    if h.id not in sims and h.id not in lexical
                ]
        except StoreError:
            pass  # full text unavailable: the neighbours by meaning alone
        records = self.store.get([*sims, *lexical])
        for mid in lexical:
            rec = records.get(mid)
            if rec is not None and rec.embedding is not None and rec.embedding.shape == cand.vector.shape:
                sims[mid] = float(rec.embedding @ cand.vector)
        # what the dream cycle wrote (summaries, themes, cards) is derived from observations: a new
        # observation is gated against observations, never merged into a derived memory
        out = [
            admission.Neighbour(records[mid], sim)
            for mid, sim in sims.items()
            if mid in records and records[mid].write_source != "dream"
        ]
        return sorted(out, key=lambda n: (-n.similarity, n.record.id))

    def _importance(
        self, cand: PendingFact, neighbours: list[admission.Neighbour]
    ) -> tuple[float, dict[str, float], float]:
        icfg = self.settings.dynamics.importance
        # the surprise centre (a cosine distance set for API embedders, whose novel-memory threshold is 0.70) moves
        # with this embedder's threshold for a novel memory, as every similarity threshold does
        shift = self.cfg.gate.profile("api").create_below - self.profile.create_below
        s = surprise_mod.surprise(
            neighbour_similarities=[n.similarity for n in neighbours], cfg=icfg, center_shift=shift
        )
        channels = {
            "novelty": round(s.surprise, 6),
            "arousal": cand.emotion.arousal,
            "reward": round(
                learned_reward(
                    self.cfg.category_reward.get(cand.category, self.cfg.other_category_reward),
                    neighbours[: icfg.surprise_k],
                    neutral=self.settings.dynamics.utility.prior,
                ),
                6,
            ),
            "attention": round(self._attention(cand), 6),
        }
        # the encoding boost: emotion deepens encoding (a neutral memory ×1.0, up to ×1.3). The layered-memory
        # design's surprise adjustment (±0.3) does not move the stored importance, which ranks searches (it would
        # raise novel but unrelated memories above the answer); the surprise is stored with the memory and the
        # archival rule's nine-factor importance applies the adjustment to its base (dynamics.importance)
        boost = encoding_boost_of(arousal=cand.emotion.arousal, valence=cand.emotion.valence, cfg=icfg)
        encoded = channel_importance(**channels, cfg=icfg, boost=boost)
        cand.decisions["importance"] = {
            "channels": round(channel_importance(**channels, cfg=icfg), 6),
            "encoding_boost": round(boost, 6),
            "surprise": round(s.surprise, 6),
            "surprise_adjustment": round(s.modifier, 6),
            "duplicate": s.is_duplicate,
            "importance": round(encoded, 6),
        }
        return (
            encoded,
            {**channels, "encoding_boost": round(boost, 6), "surprise_adjustment": round(s.modifier, 6)},
            s.surprise,
        )

    def _attention(self, cand: PendingFact) -> float:
        """The attention channel: how surely the observer read the text (its confidence), raised by its
        relevance to what the session is working on — the closest of the session's working-memory items, as
        a share of the way from this embedder's "related" similarity (``retroactive_min``) to identical. A
        text unrelated to the current context (or outside a session) keeps its confidence."""
        if cand.session_id is None or cand.vector is None:
            return cand.confidence
        ids = [i.memory_id for i in self.working.items(session_key(cand.user_id, cand.session_id))]
        vectors = list(self.store.embeddings(ids).values()) if ids else []
        if not vectors:
            return cand.confidence
        best = float(np.max(np.stack(vectors) @ np.asarray(cand.vector, dtype=np.float32)))
        floor = self.profile.retroactive_min
        relevance = min(1.0, max(0.0, (best - floor) / (1.0 - floor))) if floor < 1.0 else 0.0
        return cand.confidence + (1.0 - cand.confidence) * relevance

    def _decide(
        self, cand: PendingFact, neighbours: list[admission.Neighbour], importance: float
    ) -> admission.GateDecision:
        """The gate's decision. A statement written for the whole user (no agent) sees every agent's memories
        of that user, but it retires (or is linked as contradicting) only memories of its own scope: an agent
        whose memory it replaced could not read what replaced it. Against another agent's memory the
        statement is read again without that agent's memories."""
        decision = self._decide_in_scope(cand, neighbours, importance)
        target = decision.target
        retires = decision.action is Action.SUPERSEDE or _contradicts(decision)
        if retires and target is not None and target.agent_id != cand.agent_id:
            own = [n for n in neighbours if n.record.agent_id == cand.agent_id]
            decision = self._decide_in_scope(cand, own, importance)
        return decision

    def _decide_in_scope(
        self, cand: PendingFact, neighbours: list[admission.Neighbour], importance: float
    ) -> admission.GateDecision:
        speaker = cand.metadata.get("speaker") if isinstance(cand.metadata.get("speaker"), str) else None
        decision = admission.decide(
            cand.text,
            neighbours,
            importance=importance,
            correction=cand.category == "correction",
            profile=self.profile,
            cfg=self.cfg.gate,
            speaker=speaker,
        )
        if decision.checked:
            best = max(decision.checked, key=lambda c: (c.score, c.similarity))
            cand.decisions["update_check"] = {"checked": len(decision.checked), "best": best.to_dict()}
        if self.llm is None or "contradiction" not in self._stages:
            return decision
        return self._llm_update(cand, neighbours, importance, decision, speaker)

    # actions -----------------------------------------------------------------------------
    def _create(
        self,
        cand: PendingFact,
        importance: float,
        channels: dict[str, float],
        surprise: float,
        decision: admission.GateDecision,
    ) -> MemoryRecord:
        now = self.now()
        kind, kind_rule = memory_kind(cand.text, category=cand.category, tags=cand.metadata.get("tags", ()) or ())
        cand.decisions["memory_kind"] = kind_rule
        rec = MemoryRecord(
            content=cand.text,
            user_id=cand.user_id,
            agent_id=cand.agent_id,
            session_id=cand.session_id,
            instance_id=self.settings.instance_id,
            layer=Layer.WORKING,
            embedding=cand.vector,
            category=cand.category,
            memory_kind=kind,
            temporal_type=cand.temporal_type,
            entities=cand.entities,
            importance=importance,
            importance_channels=channels,
            surprise=surprise,
            emotion_valence=cand.emotion.valence,
            emotion_arousal=cand.emotion.arousal,
            emotion_label=cand.emotion.label,
            source=cand.source,
            source_confidence=cand.confidence,
            confidence=cand.fact_confidence,
            write_source=cand.write_source,
            data_source=cand.data_source,
            metadata=cand.metadata,
            valid_from=cand.when or now,
            valid_until=cand.valid_until,
            inputs=[action_input(cand, "CREATE", now)],
            recorded_at=now,
            created_at=now,
            updated_at=now,
            sub_tier=episodic_sub_tier(
                data_source=cand.data_source, write_source=cand.write_source, source=cand.source
            ),
        )
        for key, value in initial_values(rec, now=now, cfg=self.settings.dynamics).items():
            setattr(rec, key, value)
        if rec.flashbulb:
            rec.metadata = {**rec.metadata, "flashbulb": True}
        rec.verification_state = "unverified"  # one observation; confirmed when it is stated again
        rec.policy_class = policy_class(rec, self.settings.dynamics.lifecycle)
        pc = self.cfg.policy
        if pc.artifacts and action_policy.artifact_eligible(
            category=rec.category,
            confidence=cand.confidence,
            importance=importance,
            stored=rec.content,
            verbatim=cand.verbatim,
            categories=pc.artifact_categories,
            min_confidence=pc.artifact_min_confidence,
            min_importance=pc.artifact_min_importance,
        ):
            assert cand.verbatim is not None
            rec.metadata = {
                **rec.metadata,
                ARTIFACT: {"verbatim": cand.verbatim[: pc.artifact_max_chars], "at": now.isoformat()},
            }
            cand.decisions["artifact"] = "verbatim words kept"
        rec.box_id, box_note = self.boxes.assign(
            user_id=rec.user_id, session_id=rec.session_id, now=now, topic=self._topic(rec, cand)
        )
        cand.decisions["box"] = box_note
        self.store.insert([rec])
        self._history(rec.id, "created", decision.reason, cand, action=decision.action.value)
        return rec

    def _reinforce(self, target: MemoryRecord, decision: admission.GateDecision, cand: PendingFact) -> AddResult:
        now = self.now()
        changes = {
            "stability": target.stability * self.cfg.gate.reinforce_stability,
            "confirmations": target.confirmations + 1,
            "verification_state": confirmed_state(target.verification_state, by_user=_said_by_user(cand)),
            "reinforcement_count": target.reinforcement_count + 1,
            "last_reinforced_at": now,
            "updated_at": now,
            "inputs": [*target.inputs, action_input(cand, "REINFORCE", now)],
        }
        self.store.update_fields(target.id, changes, expected_version=target.version)
        self._history(target.id, "reinforced", decision.reason, cand, action="REINFORCE", text=cand.text[:500])
        return AddResult(target.id, Action.REINFORCE, (target.id,), decision.reason)

    def _update(self, target: MemoryRecord, decision: admission.GateDecision, cand: PendingFact) -> AddResult:
        now = self.now()
        merged, path = self._ask(
            "merge",
            lambda llm: llm_stages.merge(llm, target.content, cand.text, limit=self._limit),
            fallbacks_of(cand),
        )
        if merged is None:
            merged = text_merge.heuristic_merge(
                target.content, cand.text, max_chars=self.settings.limits.max_content_bytes // 4
            )
        cand.decisions["merge"] = path
        changes: dict[str, Any] = {
            "content": merged,
            "content_hash": content_hash(merged),
            "embedding": self.embed([merged])[0],
            "entities": list(dict.fromkeys([*target.entities, *cand.entities]))[: self.cfg.observer.max_entities],
            "access_count": target.access_count + 1,
            "updated_at": now,
            "inputs": [*target.inputs, action_input(cand, "UPDATE", now)],
        }
        self.store.update_fields(target.id, changes, expected_version=target.version)
        self._history(target.id, "updated", decision.reason, cand, action="UPDATE", before=target.content[:1000])
        return AddResult(target.id, Action.UPDATE, (target.id,), decision.reason)

    def _supersede(self, old: MemoryRecord, new: MemoryRecord, decision: admission.GateDecision) -> None:
        now = self.now()
        self.store.update_fields(
            old.id,
            {
                "status": Status.SUPERSEDED,
                "valid_until": old.valid_until or now,
                "superseded_by": new.id,
                "updated_at": now,
            },
        )
        self._add_relations(
            [Relation(new.id, old.id, RelationType.SUPERSEDES, created_at=now, metadata={"path": decision.path})],
            new.user_id,
        )
        self._dispute_edges(old.id)
        self.store.add_history(
            [
                HistoryEvent(
                    old.id,
                    "superseded",
                    now,
                    reason=decision.reason,
                    actor="write",
                    data={"by": new.id, "path": decision.path},
                )
            ]
        )

    # session end ---------------------------------------------------------------------------
    def _session_end_promotion(self, user_id: str | None, session_id: str, now: datetime) -> list[str]:
        flt = MemoryFilter(user_id=user_id, session_id=session_id, layers=frozenset({Layer.WORKING}))
        promoted: list[str] = []
        for batch in self.store.scan(flt):
            for rec in batch:
                move = eligible_transition(rec, now=now, cfg=self.settings.dynamics, session_end=True)
                if move is None:
                    continue
                layer, rule = move
                self.store.update_fields(rec.id, {"layer": layer, "updated_at": now})
                self.store.add_history(
                    [
                        HistoryEvent(
                            rec.id,
                            "promoted",
                            now,
                            reason=rule,
                            actor="end_session",
                            data={"from": rec.layer.value, "to": layer.value},
                        )
                    ]
                )
                promoted.append(rec.id)
        return promoted

    def _promote_candidates(self, ids: list[str], now: datetime) -> list[str]:
        """Working-memory promotion at session end: the session's candidates (accessed at least
        ``promote_accesses`` times or of importance >= ``promote_importance``) still in the working layer move
        to the episodic layer, so what the session used or valued outlives it."""
        wcfg = self.settings.dynamics.working
        promoted: list[str] = []
        for rec in self.store.get(ids).values():
            if rec.layer is not Layer.WORKING or rec.status is not Status.ACTIVE:
                continue
            self.store.update_fields(rec.id, {"layer": Layer.EPISODIC, "updated_at": now})
            self.store.add_history(
                [
                    HistoryEvent(
                        rec.id,
                        "promoted",
                        now,
                        actor="end_session",
                        reason="working-memory promotion candidate at session "
                        f"end (accessed >= {wcfg.promote_accesses} times or importance >= {wcfg.promote_importance})",
                        data={"from": Layer.WORKING.value, "to": Layer.EPISODIC.value, "path": "heuristic"},
                    )
                ]
            )
            promoted.append(rec.id)
        return promoted


def _source_turn(text: str, turns: Sequence[Turn]) -> str | None:
    """The turn an extracted fact most likely came from: the one sharing the most words with it."""
    from reverie.text.words import content_words

    words = content_words(text)
    best = max(turns, key=lambda t: len(words & content_words(t.raw or t.text)), default=None)
    return (best.raw or best.text) if best is not None else None


def _speaker(text: str, metadata: dict[str, Any], role: str) -> tuple[str, str]:
    """Who speaks (metadata ``speaker``, a ``Name:`` prefix, or User/Assistant) and the message body."""
    given = metadata.get("speaker")
    if isinstance(given, str) and given.strip():
        return given.strip(), text
    match = _SPEAKER.match(text)
    if match:
        return match.group(1).strip(), text[match.end() :]
    return ("Assistant" if role == "assistant" else "User"), text


def learned_reward(prior: float, neighbours: Sequence[admission.Neighbour], *, neutral: float) -> float:
    """The reward channel, learned from feedback: the category's prior moved by how useful similar memories
    turned out — the similarity-weighted utility of the nearest stored memories relative to the neutral
    utility (feedback raises a memory's utility with "useful" and lowers it with "not useful"; a memory
    nobody rated sits at the neutral prior and moves nothing)."""
    rated = [(n.similarity, n.record.utility) for n in neighbours if n.similarity > 0]
    weight = sum(w for w, _ in rated)
    if weight <= 0:
        return prior
    learned = sum(w * u for w, u in rated) / weight
    return min(1.0, max(0.0, prior + (learned - neutral)))


#: the sources of what a person says (an explicit add by a person, or the user's side of the conversation)
_USER_SOURCES = frozenset({"human", "interaction"})


def _said_by_user(cand: PendingFact) -> bool:
    """Whether the write restates what the user said: a person's add or the user's message. What an AI, an
    ingest, a code scan or a dream restates is the system's observation, never the user's confirmation."""
    return cand.data_source == "user_message" and cand.source in _USER_SOURCES


def confirmed_state(state: str, *, by_user: bool) -> str:
    """The verification state of a memory observed again: ``user_confirmed`` when the user restated it,
    else ``system_inferred`` (a second observation by the system); a user-confirmed memory stays so, and a
    disputed one is only cleared by the user restating it."""
    if by_user:
        return "user_confirmed"
    return state if state in ("user_confirmed", "disputed") else "system_inferred"


def policy_class(rec: MemoryRecord, cfg: LifecycleSettings) -> str:
    """The lifecycle policy class of ``rec`` (:func:`reverie.dynamics.lifecycle.policy_class`): protected,
    ephemeral (time-bounded or speculative) or durable."""
    return lifecycle.policy_class(
        pinned=rec.pinned,
        immutable=rec.immutable,
        flashbulb=rec.flashbulb,
        category=rec.category,
        time_bounded=rec.valid_until is not None,
        confidence=rec.confidence,
        cfg=cfg,
    )


def _combine(results: list[AddResult]) -> AddResult:
    """One :class:`AddResult` for an item that formation split into several facts."""
    if len(results) == 1:
        return results[0]
    main = next((r for r in results if r.action is not Action.SKIP), results[0])
    ids = tuple(dict.fromkeys(i for r in results for i in r.ids))
    return AddResult(main.id, main.action, ids, " | ".join(r.reason for r in results))


def _contradicts(decision: admission.GateDecision) -> bool:
    """Whether the gate created the statement beside the memory it contradicts (the two are linked)."""
    return decision.action is Action.CREATE and "contradicts" in decision.reason


__all__ = ["ARTIFACT", "WritePipeline"]
