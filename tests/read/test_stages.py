"""Unit tests of the read-path stages with the seeds' numbers (no storage)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from reverie.config import Settings
from reverie.config.read import ReadSettings
from reverie.model import MemoryRecord
from reverie.read import decompose, graph, hybrid, hyde, inject, intent, mmr, scoring, trivial, when
from reverie.store.base import ScoredId
from reverie.text import updates

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text", ["hi", "Hello!", "merhaba", "selam", "ok", "tamam", "evet", "thanks!", "sağol", "/help", "/dream now", "👍"]
)
def test_gate_skips_trivial_messages(text: str) -> None:
    assert trivial.check(text).skip


@pytest.mark.parametrize("text", ["Lisbon", "where do I live?", "ok so what is my vault code"])
def test_gate_passes_real_queries(text: str) -> None:
    assert not trivial.check(text).skip


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Why did the deploy fail?", "causal"),
        ("When did Maya move to Lisbon?", "temporal"),
        ("What food does Maya prefer?", "preference"),
        ("Who is Maya?", "entity_profile"),
        ("What is the vault code?", "factual"),
        ("vault code", "general"),
        ("Maya neden taşındı?", "causal"),
        ("Ne zaman taşındı?", "temporal"),
    ],
)
def test_intent_router(text: str, expected: str) -> None:
    assert intent.classify(text)[0] == expected


def test_strategy_table_has_seed_numbers() -> None:
    s = ReadSettings().strategies
    assert (s["factual"].vector_weight, s["factual"].text_weight, s["factual"].limit) == (0.6, 0.4, 10)
    assert s["factual"].utility_boost == 0.2
    assert (s["temporal"].vector_weight, s["temporal"].text_weight, s["temporal"].limit) == (0.4, 0.6, 15)
    assert s["temporal"].include_superseded and s["temporal"].sort == "valid_from"
    assert (s["causal"].vector_weight, s["causal"].graph_hops, s["causal"].limit) == (0.3, 2, 20)
    assert set(s["causal"].graph_types) == {"causes", "elaborates"}
    assert s["entity_profile"].utility_boost == 0.3 and s["entity_profile"].entity_hub
    assert s["preference"].categories == ["preference", "correction"]
    assert intent.route("anything", ReadSettings(intent=False)).intent == "general"


def test_decomposition_splits_compound_queries() -> None:
    assert decompose.decompose("Where does Maya live? What is her job?") == [
        "Where does Maya live?",
        "What is her job?",
    ]
    assert decompose.decompose("Maya's favourite food and also her brother's name") == [
        "Maya's favourite food",
        "her brother's name",
    ]
    assert decompose.decompose("salt and pepper") == ["salt and pepper"]
    five = "a1 b? c1 d? e1 f? g1 h? i1 j?"
    parts = decompose.decompose(five, max_parts=4)
    assert len(parts) == 4 and parts[-1] == "g1 h? i1 j?"


def test_hyde_variants_en_tr_and_centroid() -> None:
    h_intent, docs = hyde.variants("How do I deploy the staging server?", count=2)
    assert h_intent == "technical" and len(docs) == 2 and all("deploy staging server" in d for d in docs)
    assert hyde.variants("Maya neyi tercih ediyor?", count=3)[1][0].startswith("kullanıcı")
    assert set(hyde.HYDE_INTENTS) == set(hyde.TEMPLATES) and len(hyde.HYDE_INTENTS) == 7
    assert all(len(t["en"]) >= 2 and len(t["tr"]) >= 2 for t in hyde.TEMPLATES.values())
    q = np.array([1.0, 0.0], dtype=np.float32)
    v = np.array([[0.0, 1.0]], dtype=np.float32)
    c = hyde.centroid(q, v, query_weight=1.0)
    assert c == pytest.approx(np.array([0.70710677, 0.70710677]), abs=1e-6)
    assert hyde.centroid(q, np.zeros((0, 2), dtype=np.float32), query_weight=2.0) == pytest.approx(q)


def test_weighted_rrf_per_intent_k60() -> None:
    res = hybrid.ChannelResult([ScoredId("a", 0.9), ScoredId("b", 0.8)], [ScoredId("b", 3.0)])
    cands = hybrid.fuse_channels([res], weights={"vector": 0.6, "text": 0.4}, k=60)
    score = {c.id: c.rrf for c in cands}
    assert score["b"] == pytest.approx(0.6 / 62 + 0.4 / 61)
    assert score["a"] == pytest.approx(0.6 / 61)
    assert cands[0].id == "b" and cands[0].channels["text"]["rank"] == 1


def test_subquery_fusion_dedups_and_keeps_best_rank() -> None:
    r1 = hybrid.ChannelResult([ScoredId("a", 0.9), ScoredId("b", 0.5)], [])
    r2 = hybrid.ChannelResult([ScoredId("b", 0.9), ScoredId("c", 0.5)], [])
    cands = hybrid.fuse_channels([r1, r2], weights={}, k=60)
    assert sorted(c.id for c in cands) == ["a", "b", "c"]
    b = next(c for c in cands if c.id == "b")
    assert b.channels["vector"]["rank"] == 1 and b.channels["vector"]["subquery"] == 1


def _rec(**kw: Any) -> MemoryRecord:
    base: dict[str, Any] = {"content": "x", "created_at": NOW - timedelta(days=1), "importance": 0.5}
    base.update(kw)
    return MemoryRecord(**base)


def _ctx(name: str = "general", **kw: Any) -> scoring.QueryContext:
    return scoring.QueryContext(name, ReadSettings().strategies[name], NOW, **kw)


def test_composite_uses_seed_weights() -> None:
    settings = Settings.load()
    read = ReadSettings(
        strategies={
            **ReadSettings().strategies,
            "general": ReadSettings().strategies["general"].model_copy(update={"utility_boost": 0.0}),
        }
    )
    rec = _rec(importance=0.8)
    _, act = scoring.activation_of(rec, now=NOW, cfg=settings.dynamics, min_age_s=read.activation_min_age_s)
    total, explain = scoring.score(
        rec,
        scoring.Inputs(similarity=0.7, rrf_norm=1.0),
        scoring.QueryContext("general", read.strategies["general"], NOW),
        read,
        settings.dynamics,
    )
    # relevance = the seed's 0.40 × similarity; the other terms (seed 004's 'active' boost ×1.05 applied) are a
    # share of their largest possible value, plus the episode and co-activation boosts, within the margin
    prior = (0.30 * act + 0.15 * 0.8 + 0.15 * 1.0) * 1.05
    possible = 0.30 + 0.15 + 0.15 + read.episode_boost + settings.dynamics.tagging.coactivation_bonus
    assert total == pytest.approx(0.40 * 0.7 + read.prior_margin * min(1.0, prior / possible))
    assert explain["weights"] == {"similarity": 0.40, "activation": 0.30, "importance": 0.15, "rrf": 0.15}
    assert explain["relevance"] == pytest.approx(0.28)


def test_relevance_leads_the_prior() -> None:
    """A memory that is clearly more relevant stays above one with every prior at its maximum."""
    settings = Settings.load()
    read = ReadSettings()
    ctx = scoring.QueryContext("general", read.strategies["general"], NOW, episodes=frozenset({"s1"}))
    fresh = _rec(importance=0.1, access_count=0, utility=0.0)
    worn = _rec(
        importance=1.0,
        access_count=500,
        last_accessed_at=NOW,
        utility=1.0,
        session_id="s1",
        sub_tier="personal",
        category="preference",
    )
    gap = read.prior_margin / scoring.similarity_weight(ctx, read, settings.dynamics) + 0.01
    top, _ = scoring.score(fresh, scoring.Inputs(similarity=0.5 + gap, rrf_norm=0.0), ctx, read, settings.dynamics)
    boosted, explain = scoring.score(
        worn, scoring.Inputs(similarity=0.5, rrf_norm=1.0, coactivation=0.05), ctx, read, settings.dynamics
    )
    assert top > boosted
    assert explain["prior"]["share"] == pytest.approx(1.0)
    # within the margin, the prior decides
    close, _ = scoring.score(fresh, scoring.Inputs(similarity=0.51, rrf_norm=0.0), ctx, read, settings.dynamics)
    assert boosted > close


def test_boosts_and_multipliers_have_seed_values() -> None:
    dyn = Settings.load().dynamics
    read = ReadSettings()
    rec = _rec(entities=["entity://org/acme", "Maya"], session_id="s1", sub_tier="personal", emotion_valence=0.6)
    ctx = _ctx(entities=frozenset({"acme", "maya"}), episodes=frozenset({"s1"}), mood=1.0)
    add = scoring.boosts(rec, scoring.Inputs(0.5, 0.5, coactivation=0.05), ctx, read)
    assert add == pytest.approx({"entity": 0.2, "episode": 0.15, "coactivation": 0.05})
    mult = scoring.multipliers(rec, ctx, read, dyn)
    assert mult == {"sub_tier": 1.1, "mood": 1.1, "lifecycle": 1.05}
    weak = _rec(source_confidence=0.2, verification_state="disputed", lifecycle_state="stale", sub_tier="vicarious")
    mult = scoring.multipliers(weak, _ctx(), read, dyn)
    assert mult == {"sub_tier": 0.9, "lifecycle": 0.8, "disputed": 0.8, "low_source_confidence": 0.5}
    pref = scoring.multipliers(_rec(category="preference"), _ctx("preference"), read, dyn)
    assert pref["category"] == 1.25
    assert scoring.detect_mood("I am so happy today") == 1.0 and scoring.detect_mood("vault code") is None


def test_activation_floor_and_recency() -> None:
    dyn = Settings.load().dynamics
    fresh = _rec(access_count=5, last_accessed_at=NOW - timedelta(seconds=5))
    old = _rec(access_count=5, last_accessed_at=NOW - timedelta(days=30))
    b_fresh, a_fresh = scoring.activation_of(fresh, now=NOW, cfg=dyn, min_age_s=3600)
    assert b_fresh == pytest.approx(np.log(5) - 0.5 * np.log(3600))
    assert a_fresh > scoring.activation_of(old, now=NOW, cfg=dyn, min_age_s=3600)[1]


def test_mmr_demotes_near_duplicates() -> None:
    v = np.array([[1, 0, 0], [0.999, 0.0447, 0], [0, 1, 0]], dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    picked = [i for i, _, _ in mmr.mmr_select([1.0, 0.99, 0.8], v, k=3, lam=0.7)]
    assert picked == [0, 2, 1]
    assert [i for i, _, _ in mmr.mmr_select([1.0, 0.99, 0.8], v, k=3, lam=1.0)] == [0, 1, 2]
    first = mmr.mmr_select([2.0, 1.0], v[:2], k=1, lam=0.7)[0]
    assert first[1] == pytest.approx(0.7)


def test_graph_floor_and_pagerank() -> None:
    edges = [
        graph.Edge("s", "a", 1.0, 0.9, "causes"),
        graph.Edge("s", "b", 1.0, 0.3, "causes"),
        graph.Edge("a", "b", 1.0, 0.9, "causes"),
    ]
    pr = graph.pagerank(["s", "a", "b"], edges, {"s": 1.0}, iterations=8, damping=0.85)
    assert sum(pr.values()) == pytest.approx(1.0, abs=1e-6)
    assert pr["a"] > pr["b"]
    assert graph.query_entities("When did Maya's brother visit Lisbon?") == ["maya", "lisbon"]
    assert graph.entity_key("entity://tech/postgre-sql") == "postgre sql"


def test_injection_gating_and_budget() -> None:
    cfg = ReadSettings()
    assert inject.style_of(0.75, full=0.7, abbreviated=0.4) == "full"
    assert inject.style_of(0.5, full=0.7, abbreviated=0.4) == "abbreviated"
    assert inject.style_of(0.3, full=0.7, abbreviated=0.4) is None
    assert inject.estimate_tokens("abcdefgh") == 2 and inject.estimate_tokens("abcdefghi") == 3
    huge = _rec(content="long " * 2000, id="huge")
    small = [_rec(content=f"small fact {i}", id=f"s{i}") for i in range(3)]
    entries = [
        inject.Entry(huge, "hot"),
        *[inject.Entry(r, "retrieved", 0.9) for r in small],
        inject.Entry(_rec(content="weak", id="weak"), "retrieved", 0.1),
    ]
    block = inject.build(entries, budget_tokens=200, cfg=cfg, full=0.7, abbreviated=0.4)
    assert block.used_tokens <= 200
    assert [i.id for i in block.items] == ["huge", "s0", "s1", "s2"]
    assert block.items[0].truncated and block.items[0].tokens <= 200 * cfg.item_budget_share + 10
    assert {"id": "weak", "reason": "low confidence", "confidence": 0.1} in block.skipped
    assert "## Core memories" in block.text and "small fact 2" in block.text


def test_hybrid_similarity_is_the_intent_weighted_convex_combination() -> None:
    # factual row of seed 001's strategy table: vector 0.6, FTS 0.4
    assert scoring.hybrid_similarity(0.5, 1.0, vector_weight=0.6, text_weight=0.4) == pytest.approx(0.7)
    assert scoring.hybrid_similarity(0.5, 0.0, vector_weight=0.5, text_weight=0.5) == pytest.approx(0.25)
    # no text channel (full text unavailable, or hybrid similarity switched off): the cosine alone
    assert scoring.hybrid_similarity(0.42, 0.9, vector_weight=0.6, text_weight=0.0) == pytest.approx(0.42)


def test_lexical_score_is_absolute_query_coverage() -> None:
    texts = [
        "Maya: The keys are handed over on April 20th.",
        "Maya: I joined Northwind Robotics in Lisbon.",
        "Maya: My cat Pixel hates car rides.",
        "Maya: Slowly! The nasal vowels are impossible.",
    ]
    got = hybrid.lexical_scores(["Which company did Maya join and where?"], texts)
    # a word every memory holds ('Maya') weighs little: matching only it stays weak, never 1.0
    assert got[0] < 0.2 and got[2] < 0.2 and got[3] < 0.2
    assert got[1] > got[0] + 0.2  # 'joined' holds 'join' (stems compared)
    assert hybrid.lexical_scores(["cat Pixel"], texts)[2] == pytest.approx(1.0)
    # the best over sub-queries
    both = hybrid.lexical_scores(["keys handed", "nasal vowels"], texts)
    assert both[0] == pytest.approx(1.0) and both[3] == pytest.approx(1.0)
    assert hybrid.lexical_scores(["the"], texts[:1]) == [1.0] and hybrid.lexical_scores(["zebra"], texts) == [0.0] * 4


def test_episode_strengths_are_graded_by_the_best_member() -> None:
    strength = scoring.episode_strengths(["s1", "s1", "s2", None, "s3"], [0.8, 0.3, 0.4, 0.9, 0.0], power=1.0)
    assert strength == pytest.approx({"s1": 1.0, "s2": 0.5, "s3": 0.0})
    assert scoring.episode_strengths(["s1", "s2"], [0.8, 0.4], power=2.0)["s2"] == pytest.approx(0.25)
    assert scoring.episode_strengths([None], [0.5], power=1.0) == {}
    read = ReadSettings()
    add = scoring.boosts(_rec(session_id="s2"), scoring.Inputs(0.4, 0.0, episode=0.5), _ctx(), read)
    assert add == pytest.approx(
        {
            "episode_context": read.episode_context_boost * 0.5,
            "episode_relevance": read.episode_relevance_boost * 0.5**read.episode_relevance_power,
        }
    )
    # a named session gets seed 001's full +0.15 instead of the inferred boost
    named = scoring.boosts(
        _rec(session_id="s2"), scoring.Inputs(0.4, 0.0, episode=0.5), _ctx(episodes=frozenset({"s2"})), read
    )
    assert named == pytest.approx({"episode": 0.15})


def test_query_time_windows_en_tr() -> None:
    now = datetime(2024, 3, 15, 12, 0, tzinfo=UTC)

    def spans(text: str) -> list[tuple[str, str]]:
        return [(w.start.date().isoformat(), w.end.date().isoformat()) for w in when.query_windows(text, now)]

    assert spans("What did Maria donate in December 2023?") == [("2023-12-01", "2024-01-01")]
    assert spans("Who did she have dinner with on May 3, 2023?") == [("2023-05-03", "2023-05-04")]
    assert spans("What happened on 13 October, 2023?") == [("2023-10-13", "2023-10-14")]
    assert spans("the 2023-05-07 meeting") == [("2023-05-07", "2023-05-08")]
    assert spans("How often did we go to the beach in 2023?") == [("2023-01-01", "2024-01-01")]
    assert spans("When did we go camping in June?") == [("2023-06-01", "2023-07-01")]  # the latest June
    assert spans("what did we decide last week") == [("2024-03-04", "2024-03-11")]
    assert spans("three days ago") == [("2024-03-12", "2024-03-13")]
    assert spans("Haziran'da ne yaptık?") == [("2023-06-01", "2023-07-01")]
    assert spans("geçen ay") == [("2024-02-01", "2024-03-01")]
    assert spans("dün ne konuştuk") == [("2024-03-14", "2024-03-15")]
    assert spans("Mart 2023 toplantısı") == [("2023-03-01", "2023-04-01")]
    assert spans("Who is Maya?") == [] and spans("since may we know") == [] and spans("the junta met") == []


def test_time_fit_fades_after_and_before_the_period() -> None:
    [dec] = when.query_windows("in December 2023", NOW)
    fit = functools.partial(when.time_fit, windows=[dec], after_days=30, before_days=7)
    assert fit(datetime(2023, 12, 24, tzinfo=UTC)) == 1.0
    assert fit(datetime(2024, 1, 16, tzinfo=UTC)) == pytest.approx(0.5)  # 15 days after: half
    assert fit(datetime(2023, 11, 27, 12, tzinfo=UTC)) == pytest.approx(0.5)  # 3.5 days before: half
    assert fit(datetime(2024, 3, 1, tzinfo=UTC)) == 0.0 and fit(datetime(2023, 6, 1)) == 0.0  # naive = UTC
    read = ReadSettings()
    ctx = _ctx(windows=(dec,))
    inside = scoring.boosts(_rec(valid_from=datetime(2023, 12, 2, tzinfo=UTC)), scoring.Inputs(0.5, 0.0), ctx, read)
    assert inside == pytest.approx({"time": 0.1})
    assert scoring.boosts(_rec(created_at=datetime(2023, 5, 1, tzinfo=UTC)), scoring.Inputs(0.5, 0.0), ctx, read) == {}


def test_decomposition_splits_and_only_before_a_question_word() -> None:
    assert decompose.decompose("Where does Maya live and where does she work?") == [
        "Where does Maya live",
        "where does she work?",
    ]
    assert decompose.decompose("What kind of pot did Mel and her kids make with clay?") == [
        "What kind of pot did Mel and her kids make with clay?"
    ]
    assert decompose.decompose("Did she buy the black and white bowl?") == ["Did she buy the black and white bowl?"]
    assert decompose.decompose("Maya nerede yaşıyor ve ne iş yapıyor?") == ["Maya nerede yaşıyor", "ne iş yapıyor?"]


def test_a_question_about_an_attribute_lifts_the_memories_that_name_it() -> None:
    """'Which company did Maya join?' asks where Maya works: a memory that names a job ('accepted the job
    offer') gets read.attribute_boost as relevance; one about someone else the question does not name,
    or about another attribute, does not."""
    read = ReadSettings()
    query = "Which company did Maya join and where?"
    ctx = _ctx(entities=frozenset({"maya"}), attributes=updates.attributes(query))
    job = _rec(content="Maya: I finally accepted the job offer from Northwind Robotics.", entities=["Maya"])
    other = _rec(content="Sam: I got a new job at the bakery.", entities=["Sam"])
    project = _rec(content="Maya: I'm leading the warehouse navigation project.", entities=["Maya"])
    inputs = scoring.Inputs(0.5, 0.0)
    assert scoring.boosts(job, inputs, ctx, read)["attribute"] == read.attribute_boost
    assert "attribute" not in scoring.boosts(other, inputs, ctx, read)
    assert "attribute" not in scoring.boosts(project, inputs, ctx, read)
    unnamed = _ctx(attributes=updates.attributes("Where does the user work?"))
    assert scoring.boosts(_rec(content="I work at a bakery."), inputs, unnamed, read) == {"attribute": 0.05}
    assert "attribute" in scoring.score(job, inputs, ctx, read, Settings.load().dynamics)[1]["boosts"]


def test_hyde_templates_follow_the_query_language() -> None:
    # "ı" and "İ" match "i" and "I" under IGNORECASE: an English question must not get Turkish templates
    assert hyde.language("Which company did Maya join?") == "en"
    assert hyde.language("What is Maya allergic to?") == "en"
    assert hyde.language("Kullanıcı hangi şehirde yaşıyor?") == "tr"
    assert hyde.language("Emre nerede?") == "tr" and hyde.language("Maya neyi tercih ediyor?") == "tr"


def test_the_lexical_score_compares_a_word_without_its_suffix() -> None:
    """ "Ebru'nun" (Ebru's) and "Ebru" are one word to the lexical score: the genitive suffix after the
    apostrophe is no word of the question that only one memory holds; nor is the clitic of "Maya's"."""
    tr = hybrid.lexical_scores(
        ["Ebru'nun hangi rahatsızlığı var?"], ["Ebru çölyak hastası.", "Ebru'nun arabası kırmızı bir Fiat 500."]
    )
    assert tr[0] == tr[1] > 0
    en = hybrid.lexical_scores(["What is Maya's job?"], ["Maya is a nurse.", "Maya's cat is called Pixel."])
    assert en[0] == en[1] > 0


def test_an_entity_named_with_more_or_fewer_words_is_the_same_entity() -> None:
    stored = ["entity://person/hakan-gaziantep", "entity://place/lisbon"]
    assert scoring.entity_matches(frozenset({"hakan"}), stored) == 1
    assert scoring.entity_matches(frozenset({"hakan gaziantep", "lisbon"}), stored) == 2
    assert scoring.entity_matches(frozenset({"maya silva"}), ["entity://person/maya"]) == 1
    assert scoring.entity_matches(frozenset({"hakan"}), ["entity://person/hakkan"]) == 0  # words, not letters
