from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import importance, promotion
from reverie.model import Layer, MemoryRecord, Status

from .conftest import T0


def rec(**kw: object) -> MemoryRecord:
    base: dict[str, object] = {"content": "x", "created_at": T0, "energy_updated_at": T0, "utility_updated_at": T0}
    base.update(kw)
    return MemoryRecord(**base)  # type: ignore[arg-type]


def test_working_to_episodic_rules(cfg: DynamicsSettings) -> None:
    w = rec(layer=Layer.WORKING)
    assert promotion.working_to_episodic(w, now=T0 + timedelta(minutes=10), cfg=cfg) is None
    assert promotion.working_to_episodic(w, now=T0 + timedelta(minutes=31), cfg=cfg) == "working_age"
    assert promotion.working_to_episodic(w.copy(access_count=2), now=T0, cfg=cfg) == "working_accesses"
    hot = w.copy(energy=2.5)
    assert promotion.working_to_episodic(hot, now=T0 + timedelta(minutes=1), cfg=cfg) == "high_energy"
    assert promotion.working_to_episodic(hot.copy(immutable=True), now=T0, cfg=cfg) is None
    assert promotion.working_to_episodic(hot.copy(status=Status.EXPIRED), now=T0, cfg=cfg) is None


def test_session_end_and_expiry(cfg: DynamicsSettings) -> None:
    w = rec(layer=Layer.WORKING, energy=1.6)
    assert promotion.session_end_promotion(w, now=T0, cfg=cfg) == "session_end_energy"
    assert promotion.session_end_promotion(w, now=T0 + timedelta(hours=1), cfg=cfg) is None  # 1.6·e^-0.5 < 1.5
    fresh = rec(layer=Layer.WORKING)
    assert not promotion.working_expired(fresh, now=T0 + timedelta(hours=4.6), cfg=cfg)
    assert promotion.working_expired(fresh, now=T0 + timedelta(hours=4.7), cfg=cfg)
    assert not promotion.working_expired(fresh.copy(pinned=True), now=T0 + timedelta(hours=9), cfg=cfg)


def test_episodic_to_semantic_rules(cfg: DynamicsSettings) -> None:
    e = rec(layer=Layer.EPISODIC)
    now = T0 + timedelta(days=1)
    assert promotion.episodic_to_semantic(e, now=now, cfg=cfg) is None
    assert promotion.episodic_to_semantic(e.copy(access_count=3), now=now, cfg=cfg) == "access_frequency"
    useful = e.copy(utility=0.7)
    assert promotion.episodic_to_semantic(useful, now=now, cfg=cfg) is None
    assert promotion.episodic_to_semantic(useful, now=T0 + timedelta(days=7), cfg=cfg) == "sustained_utility"
    got = promotion.episodic_to_semantic(e, now=now, cfg=cfg, shared_entity_count=3)
    assert got == "entity_cooccurrence"
    assert promotion.episodic_to_semantic(e.copy(energy=6.0), now=T0, cfg=cfg) == "high_energy"
    # SEED-NOTES 7: pinned/flashbulb may be promoted; immutable is not (seed 001)
    assert promotion.episodic_to_semantic(e.copy(access_count=3, pinned=True, flashbulb=True), now=now, cfg=cfg)
    assert promotion.episodic_to_semantic(e.copy(access_count=3, immutable=True), now=now, cfg=cfg) is None


def test_seed_002_rule_reachable_with_seed_001_rule_off(cfg: DynamicsSettings) -> None:
    c = cfg.model_copy(deep=True)
    c.promotion.episodic_accesses = 100
    e = rec(layer=Layer.EPISODIC, importance=0.7, access_count=5)
    assert promotion.episodic_to_semantic(e, now=T0, cfg=c) == "importance_and_accesses"
    assert promotion.episodic_to_semantic(e.copy(importance=0.69), now=T0, cfg=c) is None


def test_core(cfg: DynamicsSettings) -> None:
    r = rec(layer=Layer.SEMANTIC, access_count=10, storage_strength=8.5)
    assert promotion.core_eligible(r, distinct_sessions=3, cfg=cfg)
    assert not promotion.core_eligible(r, distinct_sessions=2, cfg=cfg)
    assert not promotion.core_eligible(r.copy(storage_strength=8.4), distinct_sessions=3, cfg=cfg)
    assert not promotion.core_eligible(r.copy(core=True), distinct_sessions=3, cfg=cfg)


def test_semantic_demotion(cfg: DynamicsSettings) -> None:
    s = rec(layer=Layer.SEMANTIC, utility=0.1, last_accessed_at=T0)
    assert promotion.semantic_demotion(s, now=T0 + timedelta(days=59), cfg=cfg) is None
    assert promotion.semantic_demotion(s, now=T0 + timedelta(days=60), cfg=cfg) == "idle_low_utility"
    for exempt in ({"pinned": True}, {"immutable": True}, {"flashbulb": True}, {"utility": 0.2}):
        assert promotion.semantic_demotion(s.copy(**exempt), now=T0 + timedelta(days=99), cfg=cfg) is None


def test_archival(cfg: DynamicsSettings) -> None:
    r = rec(layer=Layer.EPISODIC, importance=0.2, category="fact", source="ingest", trust=0.5)
    assert promotion.archival_eligible(r, now=T0 + timedelta(days=91), cfg=cfg)
    assert not promotion.archival_eligible(r, now=T0 + timedelta(days=89), cfg=cfg)
    for exempt in (
        {"layer": Layer.SEMANTIC},
        {"layer": Layer.PROCEDURAL},
        {"pinned": True},
        {"immutable": True},
        {"core": True},
        {"importance": 0.3},
        {"access_count": 3},
        {"category": "preference"},
    ):
        assert not promotion.archival_eligible(r.copy(**exempt), now=T0 + timedelta(days=91), cfg=cfg)
    assert not promotion.archival_eligible(r, now=T0 + timedelta(days=91), cfg=cfg, retention=0.2)


def test_archival_decides_with_the_nine_factor_importance_and_surprise(cfg: DynamicsSettings) -> None:
    """With the ``nine_factor`` measure the archival rule's importance is the nine-factor one, whose base is moved by
    the write-time surprise: two memories alike but for their surprise part ways; with the default ``stored``
    measure, both keep their importance at write."""
    now = T0 + timedelta(days=100)
    stored = cfg
    assert cfg.promotion.archive_importance_measure == "stored"
    cfg = cfg.model_copy(
        update={"promotion": cfg.promotion.model_copy(update={"archive_importance_measure": "nine_factor"})}
    )
    alike = {"layer": Layer.EPISODIC, "importance": 0.9, "category": "fact", "trust": 1.0, "confirmations": 2}
    novel, redundant = rec(surprise=0.95, **alike), rec(surprise=0.05, **alike)
    nine_novel = importance.layered_importance(novel, now=now, cfg=cfg)[0]
    nine_redundant = importance.layered_importance(redundant, now=now, cfg=cfg)[0]
    assert nine_redundant < cfg.promotion.archive_importance <= nine_novel
    assert promotion.archival_importance(novel, now=now, cfg=cfg) == nine_novel
    assert promotion.archival_eligible(redundant, now=now, cfg=cfg)
    assert not promotion.archival_eligible(novel, now=now, cfg=cfg)
    # the base factor is the importance at write moved by (surprise - 0.5)·scale, within [floor, ceiling]
    ic = cfg.importance
    assert importance.surprise_adjusted_base(redundant, cfg=ic) == pytest.approx(0.9 + (0.05 - 0.5) * ic.surprise_scale)
    assert importance.surprise_adjusted_base(novel, cfg=ic) == ic.importance_ceiling
    assert importance.surprise_adjusted_base(novel.copy(surprise=None), cfg=ic) == 0.9
    # the weights decide: with the base factor alone, a 0.9 importance is never archived
    only_base = cfg.model_copy(
        update={
            "importance": ic.model_copy(
                update={
                    "f_access": 0.0,
                    "f_recency": 0.0,
                    "f_emotion": 0.0,
                    "f_stability": 0.0,
                    "f_layer": 0.0,
                    "f_trust": 0.0,
                    "f_confirmations": 0.0,
                    "f_actr": 0.0,
                }
            )
        }
    )
    assert not promotion.archival_eligible(redundant, now=now, cfg=only_base)
    assert promotion.archival_importance(redundant, now=now, cfg=stored) == 0.9
    assert not promotion.archival_eligible(redundant, now=now, cfg=stored)


def test_eligible_transition(cfg: DynamicsSettings) -> None:
    assert promotion.eligible_transition(rec(layer=Layer.WORKING, access_count=2), now=T0, cfg=cfg) == (
        Layer.EPISODIC,
        "working_accesses",
    )
    assert promotion.eligible_transition(rec(layer=Layer.EPISODIC, access_count=3), now=T0, cfg=cfg) == (
        Layer.SEMANTIC,
        "access_frequency",
    )
    assert promotion.eligible_transition(rec(layer=Layer.SEMANTIC), now=T0, cfg=cfg) is None
    w = rec(layer=Layer.WORKING, energy=1.6)
    assert promotion.eligible_transition(w, now=T0, cfg=cfg) is None
    assert promotion.eligible_transition(w, now=T0, cfg=cfg, session_end=True) == (
        Layer.EPISODIC,
        "session_end_energy",
    )


def test_procedural_rule_takes_know_how_only(cfg: DynamicsSettings) -> None:
    """How-to, decision and pattern memories go to the procedural layer when promoted; a passing remark,
    a question or a dated episode does not (EN + TR)."""
    from reverie.model import MemoryKind

    know_how = [
        "How to deploy: run make release and tag the commit",
        "To deploy the app, first run make build",
        "Always use a real database for integration tests",
        "Never commit secrets to the repository",
        "Step 2: restart the worker after changing the config",
        "the way to fix the flaky test is to pin the seed",
        "Veritabanı nasıl kurulur: önce paketi kur, sonra servisi başlat",
        "Testlerde her zaman gerçek veritabanı kullan",
    ]
    plain = [
        "I learned how to swim last summer",
        "How do I deploy the app?",
        "User always uses a bike to commute",
        "Maya lives in Lisbon",
        "We discussed the deployment yesterday",
        "Ali dün İstanbul'a gitti",
    ]
    for text in know_how:
        assert promotion.procedural_reason(rec(content=text), cfg=cfg) == "how-to or rule", text
    for text in plain:
        assert promotion.procedural_reason(rec(content=text), cfg=cfg) is None, text
    decision = rec(
        content="We chose PostgreSQL for the shared memory", category="decision", memory_kind=MemoryKind.NOTE
    )
    assert promotion.procedural_reason(decision, cfg=cfg) == "category decision"
    dated = decision.copy(memory_kind=MemoryKind.EPISODE)  # "today we chose …": an event, stays semantic
    assert promotion.procedural_reason(dated, cfg=cfg) is None
    off = cfg.model_copy(update={"promotion": cfg.promotion.model_copy(update={"procedural_layer": False})})
    assert promotion.procedural_reason(rec(content=know_how[0]), cfg=off) is None


def test_procedural_rule_applies_at_promotion_and_to_semantic_memories(cfg: DynamicsSettings) -> None:
    howto = rec(content="Always run the migrations before the tests", layer=Layer.EPISODIC, access_count=3)
    assert promotion.eligible_transition(howto, now=T0, cfg=cfg) == (
        Layer.PROCEDURAL,
        "access_frequency; procedural: how-to or rule",
    )
    fact = howto.copy(content="Maya moved to Lisbon in 2023")
    assert promotion.eligible_transition(fact, now=T0, cfg=cfg) == (Layer.SEMANTIC, "access_frequency")
    # not yet earned: an episodic how-to that no promotion rule lets through stays where it is
    assert promotion.eligible_transition(howto.copy(access_count=0, energy=0.5), now=T0, cfg=cfg) is None
    semantic = howto.copy(layer=Layer.SEMANTIC)  # promoted before the rule, or written by the dream
    assert promotion.eligible_transition(semantic, now=T0, cfg=cfg) == (Layer.PROCEDURAL, "procedural: how-to or rule")
    assert promotion.eligible_transition(semantic.copy(immutable=True), now=T0, cfg=cfg) is None
    assert promotion.eligible_transition(howto.copy(layer=Layer.WORKING, access_count=2), now=T0, cfg=cfg) == (
        Layer.EPISODIC,
        "working_accesses",
    )


_PIECES = [
    "how to ",
    "How To ",
    "step 3 ",
    "the way to fix it is ",
    "to deploy the app, ",
    "first run ",
    "Always ",
    "NEVER ",
    "use ",
    "make sure to ",
    "check ",
    "nasıl yapılır",
    "NASIL KURULUR",
    "adım adım",
    "3. ADIM",
    "her zaman ",
    "HER ZAMAN LİNT ",
    "çalıştır",
    "önce ",
    "sonra ",
    "kur ",
    "İlk ",
    ". ",
    ", ",
    "tea ",
    "x",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8).map("".join))
def test_the_cheap_howto_test_never_rejects_a_text_the_pattern_matches(text: str) -> None:
    from reverie.dynamics.promotion import _HOWTO, _may_be_howto

    if _HOWTO.search(text):
        assert _may_be_howto(text), text
