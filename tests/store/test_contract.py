"""The storage contract: every backend passes every test here (fixtures run them on SQLite and PostgreSQL).

Precision kept by every backend: datetimes to the microsecond, aware UTC out; floats as
IEEE doubles; embeddings as float32.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from reverie.config.core import StorageSettings
from reverie.embed.testing import HashEmbedder
from reverie.errors import ConflictError, InvalidInputError, NotFoundError, StoreError
from reverie.model import (
    AccessEvent,
    HistoryEvent,
    Layer,
    MemoryKind,
    MemoryRecord,
    Precision,
    Relation,
    RelationType,
    Status,
    StoreTier,
    TemporalType,
    content_hash,
)
from reverie.store.base import LayerStats, MemoryFilter, ScoredId, Store, StoreInfo

T0 = datetime(2024, 3, 12, 9, 30, 15, 123456, tzinfo=UTC)

Opener = Callable[..., Store]


def _rec(embedder: HashEmbedder, content: str, **kw: Any) -> MemoryRecord:
    kw.setdefault("embedding", embedder.embed([content])[0])
    kw.setdefault("created_at", T0)
    return MemoryRecord(content, **kw)


def _full_record(embedder: HashEmbedder) -> MemoryRecord:
    """A record with a non-default value in every field."""
    return MemoryRecord(
        content="Ada prefers green tea in the morning",
        id="mem-full",
        content_hash="deadbeef",
        user_id="ada",
        agent_id="agent-7",
        session_id="sess-1",
        instance_id="inst-9",
        layer=Layer.SEMANTIC,
        store=StoreTier.COLD,
        status=Status.DORMANT,
        category="preference",
        memory_kind=MemoryKind.NOTE,
        sub_tier="warm",
        temporal_type=TemporalType.TIME_BOUNDED,
        entities=["Ada", "green tea", "ünïcödé"],
        embedding=embedder.embed(["Ada prefers green tea"])[0],
        embedding_precision=Precision.INT8,
        importance=0.83,
        importance_channels={"novelty": 0.25, "emotion": 0.125},
        surprise=0.61,
        utility=0.42,
        utility_updated_at=T0 + timedelta(microseconds=1),
        energy=0.37,
        energy_updated_at=T0 + timedelta(hours=1, microseconds=7),
        stability=12.5,
        difficulty=3.25,
        storage_strength=2.5,
        retrieval_strength=0.75,
        reinforcement_count=4,
        last_reinforced_at=T0 + timedelta(days=1),
        confirmations=3,
        emotion_valence=-0.4,
        emotion_arousal=0.9,
        emotion_label="fear",
        flashbulb=True,
        source="human",
        trust=1.0,
        source_confidence=0.95,
        write_source="llm",
        data_source="document",
        inputs=[{"role": "user", "text": "I like green tea", "n": 1, "ok": True, "none": None}],
        valid_from=T0 - timedelta(days=30),
        valid_until=T0 + timedelta(days=30, microseconds=999999),
        recorded_at=T0 + timedelta(seconds=1),
        created_at=T0,
        updated_at=T0 + timedelta(minutes=5),
        access_count=9,
        last_accessed_at=T0 + timedelta(days=2, microseconds=500000),
        pinned=True,
        immutable=True,
        core=True,
        lifecycle_state="stale",
        verification_state="verified",
        policy_class="ephemeral",
        confidence=0.66,
        heat_score=0.12,
        decay_score=0.88,
        superseded_by="mem-other",
        box_id="box-3",
        metadata={"project": "x", "n": 2, "f": 1.5, "flag": False, "nested": {"a": [1, 2]}},
        version=1,
    )


def _assert_same(a: MemoryRecord, b: MemoryRecord) -> None:
    for f in dataclasses.fields(MemoryRecord):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if f.name == "embedding":
            assert va is not None and vb is not None
            assert vb.dtype == np.float32
            if b.embedding_precision == Precision.FLOAT32:
                np.testing.assert_array_equal(va, vb)
            else:  # stored quantised, read back dequantised with the original norm
                assert float(np.dot(va, vb)) / float(np.linalg.norm(va) * np.linalg.norm(vb)) > 0.999
                assert float(np.linalg.norm(vb)) == pytest.approx(float(np.linalg.norm(va)), rel=1e-5)
        else:
            assert va == vb, f.name
            assert type(va) is type(vb) or va is None, f.name
        if isinstance(vb, datetime):
            assert vb.utcoffset() == timedelta(0), f.name


# -- lifecycle --------------------------------------------------------------------------


def test_is_a_store_and_reports_info(store: Store) -> None:
    assert isinstance(store, Store)
    info = store.info()
    assert isinstance(info, StoreInfo)
    assert info.backend == store.backend
    assert info.schema_version >= 1
    assert info.target


def test_store_is_the_union_of_its_roles(store: Store) -> None:
    from reverie.store import base

    roles = (
        base.StoreAdmin,
        base.MemoryStore,
        base.SearchStore,
        base.GraphStore,
        base.SessionStore,
        base.LedgerStore,
        base.CoordinationStore,
        base.KeyStore,
    )
    for role in roles:
        assert isinstance(store, role), role.__name__
    members = {name for role in roles for name in role.__dict__ if not name.startswith("_")}
    contract = {name for name in Store.__dict__ if not name.startswith("_")}
    assert contract <= members  # the union declares nothing of its own
    declared = [
        name for role in roles for name in role.__dict__ if not name.startswith("_") and callable(role.__dict__[name])
    ]
    assert len(declared) == len(set(declared))  # each method belongs to one role


def test_reopen_keeps_data_and_search(open_store: Opener, embedder: HashEmbedder) -> None:
    st = open_store()
    recs = [_rec(embedder, f"note {i} about gardening and roses") for i in range(20)]
    st.insert(recs)
    st.close()
    st2 = open_store()
    assert st2.count(MemoryFilter()) == 20
    hits = st2.vector_search(recs[5].embedding, MemoryFilter(), 1)
    assert hits[0].id == recs[5].id
    assert {h.id for h in st2.text_search("roses", MemoryFilter(), 50)} == {r.id for r in recs}


def test_closed_store_raises_store_error(open_store: Opener) -> None:
    st = open_store()
    st.close()
    st.close()  # idempotent
    with pytest.raises(StoreError):
        st.count(MemoryFilter())


# -- round trip -------------------------------------------------------------------------


def test_every_field_round_trips(store: Store, embedder: HashEmbedder) -> None:
    rec = _full_record(embedder)
    store.insert([rec])
    got = store.get([rec.id])[rec.id]
    _assert_same(rec, got)


def test_defaults_round_trip(store: Store) -> None:
    rec = MemoryRecord("plain")
    store.insert([rec])
    got = store.get([rec.id])[rec.id]
    assert got.embedding is None
    rec_cmp = dataclasses.replace(got, embedding=None)
    assert rec_cmp == dataclasses.replace(rec, embedding=None)
    assert got.content_hash == content_hash("plain")


def test_naive_datetimes_are_taken_as_utc(store: Store) -> None:
    rec = MemoryRecord("naive", created_at=datetime(2024, 1, 2, 3, 4, 5, 678901))
    store.insert([rec])
    got = store.get([rec.id])[rec.id]
    assert got.created_at == datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def test_get_unknown_ids_are_absent(store: Store, embedder: HashEmbedder) -> None:
    rec = _rec(embedder, "known")
    store.insert([rec])
    got = store.get([rec.id, "nope", rec.id])
    assert list(got) == [rec.id]
    assert store.get([]) == {}


def test_embeddings_returns_float32(store: Store, embedder: HashEmbedder) -> None:
    a = _rec(embedder, "with vector")
    b = MemoryRecord("without vector")
    store.insert([a, b])
    embs = store.embeddings([a.id, b.id, "missing"])
    assert set(embs) == {a.id}
    assert embs[a.id].dtype == np.float32
    np.testing.assert_array_equal(embs[a.id], a.embedding)


# -- insert -----------------------------------------------------------------------------


def test_duplicate_id_conflicts(store: Store, embedder: HashEmbedder) -> None:
    rec = _rec(embedder, "once")
    store.insert([rec])
    with pytest.raises(ConflictError):
        store.insert([_rec(embedder, "twice", id=rec.id)])
    assert store.get([rec.id])[rec.id].content == "once"


def test_insert_batch_is_atomic(store: Store, embedder: HashEmbedder) -> None:
    batch = [_rec(embedder, f"batch {i}") for i in range(5)]
    batch.append(_rec(embedder, "dup", id=batch[2].id))
    with pytest.raises(ConflictError):
        store.insert(batch)
    assert store.count(MemoryFilter.everything()) == 0
    assert store.vector_search(batch[0].embedding, MemoryFilter(), 5) == []
    assert store.text_search("batch", MemoryFilter(), 5) == []


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros(3, dtype=np.float32),
        np.zeros((1, 64), dtype=np.float32),
        np.full(64, np.nan, dtype=np.float32),
        "not a vector",
    ],
)
def test_bad_embeddings_are_rejected(store: Store, bad: Any) -> None:
    with pytest.raises(InvalidInputError):
        store.insert([MemoryRecord("x", embedding=bad)])
    assert store.count(MemoryFilter.everything()) == 0


def test_bad_enum_and_json_are_rejected(store: Store) -> None:
    with pytest.raises(InvalidInputError):
        store.insert([MemoryRecord("x", layer="nonsense")])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        store.insert([MemoryRecord("x", metadata={"bad": object()})])
    assert store.count(MemoryFilter.everything()) == 0


# -- update -----------------------------------------------------------------------------


def test_update_writes_every_field_and_bumps_version(store: Store, embedder: HashEmbedder) -> None:
    rec = _rec(embedder, "first text", user_id="ada")
    store.insert([rec])
    full = dataclasses.replace(_full_record(embedder), id=rec.id, content="second text about tea")
    assert store.update(full) == 2
    got = store.get([rec.id])[rec.id]
    _assert_same(dataclasses.replace(full, version=2), got)
    assert store.update(got, expected_version=2) == 3


def test_update_refreshes_text_and_vector_indexes(store: Store, embedder: HashEmbedder) -> None:
    rec = _rec(embedder, "orchids bloom in spring")
    other = _rec(embedder, "completely different thing")
    store.insert([rec, other])
    new_vec = embedder.embed(["volcanoes erupt lava"])[0]
    changed = dataclasses.replace(rec, content="volcanoes erupt lava", embedding=new_vec)
    store.update(changed)
    assert store.text_search("orchids", MemoryFilter(), 5) == []
    assert [h.id for h in store.text_search("volcanoes", MemoryFilter(), 5)] == [rec.id]
    top = store.vector_search(new_vec, MemoryFilter(), 1)
    assert top[0].id == rec.id and top[0].score == pytest.approx(1.0, abs=1e-5)


def test_update_fields(store: Store, embedder: HashEmbedder) -> None:
    rec = _rec(embedder, "energy test")
    store.insert([rec])
    v = store.update_fields(rec.id, {"energy": 0.25, "status": Status.DORMANT, "last_accessed_at": T0})
    assert v == 2
    got = store.get([rec.id])[rec.id]
    assert (got.energy, got.status, got.last_accessed_at, got.version) == (0.25, Status.DORMANT, T0, 2)
    assert got.content == "energy test"
    store.update_fields(rec.id, {"content": "Renamed Text!"})
    got = store.get([rec.id])[rec.id]
    assert got.content_hash == content_hash("Renamed Text!")
    with pytest.raises(InvalidInputError):
        store.update_fields(rec.id, {"no_such_field": 1})
    with pytest.raises(InvalidInputError):
        store.update_fields(rec.id, {"id": "other"})
    with pytest.raises(InvalidInputError):
        store.update_fields(rec.id, {"embedding": np.zeros(5, dtype=np.float32)})


def test_version_conflicts(store: Store, embedder: HashEmbedder) -> None:
    rec = _rec(embedder, "versioned")
    store.insert([rec])
    store.update_fields(rec.id, {"energy": 0.5}, expected_version=1)
    with pytest.raises(ConflictError):
        store.update_fields(rec.id, {"energy": 0.1}, expected_version=1)
    with pytest.raises(ConflictError):
        store.update(rec, expected_version=1)
    got = store.get([rec.id])[rec.id]
    assert (got.energy, got.version) == (0.5, 2)


def test_unknown_id_is_not_found(store: Store, embedder: HashEmbedder) -> None:
    with pytest.raises(NotFoundError):
        store.update(_rec(embedder, "ghost"))
    with pytest.raises(NotFoundError):
        store.update_fields("ghost", {"energy": 0.1})


# -- delete -----------------------------------------------------------------------------


def test_delete_removes_row_and_dependents(store: Store, embedder: HashEmbedder) -> None:
    a, b, c = (_rec(embedder, f"delete target {i}") for i in range(3))
    store.insert([a, b, c])
    store.add_relations([Relation(a.id, b.id, RelationType.CAUSES), Relation(c.id, a.id, RelationType.RELATED_TO)])
    store.add_relations([Relation(b.id, c.id, RelationType.ELABORATES)])
    store.log_access([AccessEvent(a.id, T0), AccessEvent(b.id, T0)])
    store.bump_coactivations([(a.id, b.id), (b.id, c.id)], T0)
    store.claim([a.id], owner="w1", phase="p", now=T0, ttl_seconds=60)
    store.add_history([HistoryEvent(a.id, "updated", T0, data={"before": {"content": "private"}})])
    assert store.delete([a.id, "missing"]) == 1
    assert store.history(a.id) == []  # a hard delete ("forget me") leaves no copy of the content
    assert store.get([a.id]) == {}
    assert [r.type for r in store.relations([a.id, b.id, c.id])] == [RelationType.ELABORATES]
    assert store.access_times([a.id, b.id]).keys() == {b.id}
    assert [(x.a_id, x.b_id) for x in store.coactivations()] == [tuple(sorted((b.id, c.id)))]
    assert store.vector_search(a.embedding, MemoryFilter(), 3)[0].id != a.id
    assert a.id not in {h.id for h in store.text_search("target", MemoryFilter(), 10)}
    # the claim went with the memory: another owner may claim the id at once
    assert store.claim([a.id], owner="w2", phase="p", now=T0, ttl_seconds=60) == [a.id]
    assert store.delete([]) == 0


# -- transactions -----------------------------------------------------------------------


def test_transaction_commits_together(store: Store, embedder: HashEmbedder) -> None:
    a, b = _rec(embedder, "tx a"), _rec(embedder, "tx b")
    with store.transaction():
        store.insert([a])
        with store.transaction():
            store.insert([b])
        store.set_state("k", 1)
    assert set(store.get([a.id, b.id])) == {a.id, b.id}
    assert store.get_state("k") == 1


def test_exception_rolls_back_everything(store: Store, embedder: HashEmbedder) -> None:
    a, b = _rec(embedder, "outer write"), _rec(embedder, "inner write")
    with pytest.raises(RuntimeError), store.transaction():
        store.insert([a])
        with store.transaction():
            store.insert([b])
            store.add_history([HistoryEvent(b.id, "created", T0)])
        raise RuntimeError("boom")
    assert store.get([a.id, b.id]) == {}
    assert store.history(b.id) == []
    assert store.vector_search(a.embedding, MemoryFilter(), 2) == []


def test_failed_inner_block_is_undone_outer_continues(store: Store, embedder: HashEmbedder) -> None:
    a, b, c = _rec(embedder, "kept a"), _rec(embedder, "undone b"), _rec(embedder, "kept c")
    with store.transaction():
        store.insert([a])
        with pytest.raises(ConflictError):  # noqa: SIM117 - the inner block is the point
            with store.transaction():
                store.insert([b])
                store.insert([_rec(embedder, "dup", id=a.id)])
        store.insert([c])
    assert set(store.get([a.id, b.id, c.id])) == {a.id, c.id}
    assert {h.id for h in store.vector_search(b.embedding, MemoryFilter(), 5)} == {a.id, c.id}


def test_search_inside_transaction_sees_own_writes(store: Store, embedder: HashEmbedder) -> None:
    a = _rec(embedder, "searchable inside the transaction")
    with pytest.raises(RuntimeError), store.transaction():
        store.insert([a])
        assert store.vector_search(a.embedding, MemoryFilter(), 1)[0].id == a.id
        raise RuntimeError("roll back")
    assert store.vector_search(a.embedding, MemoryFilter(), 1) == []
    b = _rec(embedder, "after the rollback")
    store.insert([b])
    assert store.vector_search(b.embedding, MemoryFilter(), 1)[0].id == b.id


def test_transactions_are_thread_safe(store: Store, embedder: HashEmbedder) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(10):
                with store.transaction():
                    store.insert([MemoryRecord(f"thread {n} row {i}")])
                    store.set_state(f"t{n}", i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.count(MemoryFilter()) == 40
    assert [store.get_state(f"t{n}") for n in range(4)] == [9, 9, 9, 9]


# -- user isolation ---------------------------------------------------------------------


def test_users_are_isolated(store: Store, embedder: HashEmbedder) -> None:
    text = "the secret password is swordfish"
    a = _rec(embedder, text, user_id="alice")
    b = _rec(embedder, text, user_id="bob")
    anon = _rec(embedder, text)
    store.insert([a, b, anon])
    vec = a.embedding
    assert vec is not None
    for user, own in (("alice", a), ("bob", b), (None, anon)):
        flt = MemoryFilter(user_id=user)
        assert [h.id for h in store.vector_search(vec, flt, 10)] == [own.id]
        assert [h.id for h in store.text_search("swordfish", flt, 10)] == [own.id]
        assert [r.id for r in store.list(flt)] == [own.id]
        assert store.count(flt) == 1
        found = store.find_by_hash(flt, own.content_hash)
        assert found is not None and found.id == own.id
        assert [r.id for batch in store.scan(flt) for r in batch] == [own.id]
    everyone = MemoryFilter(all_users=True)
    assert {h.id for h in store.vector_search(vec, everyone, 10)} == {a.id, b.id, anon.id}
    assert store.count(everyone) == 3


def test_user_change_moves_partition(store: Store, embedder: HashEmbedder) -> None:
    a = _rec(embedder, "moving memory", user_id="alice")
    store.insert([a])
    store.vector_search(a.embedding, MemoryFilter(user_id="alice"), 1)
    store.update_fields(a.id, {"user_id": "bob"})
    assert store.vector_search(a.embedding, MemoryFilter(user_id="alice"), 1) == []
    assert [h.id for h in store.vector_search(a.embedding, MemoryFilter(user_id="bob"), 1)] == [a.id]


# -- filters ----------------------------------------------------------------------------


@pytest.fixture
def population(store: Store, embedder: HashEmbedder) -> dict[str, MemoryRecord]:
    """Records differing in one filterable field each (all share a vector and a word)."""
    vec = embedder.embed(["filter fixture"])[0]

    def mk(name: str, **kw: Any) -> MemoryRecord:
        return MemoryRecord(f"filter fixture {name}", id=name, embedding=vec, created_at=T0, **kw)

    recs = [
        mk("base"),
        mk("agent", agent_id="a2"),
        mk("session", session_id="s2"),
        mk("semantic", layer=Layer.SEMANTIC),
        mk("superseded", status=Status.SUPERSEDED),
        mk("cold", store=StoreTier.COLD),
        mk("pref", category="preference"),
        mk("pinned", pinned=True),
        mk("past", valid_until=T0 - timedelta(days=1)),
        mk("future", valid_from=T0 + timedelta(days=1)),
        mk("late", recorded_at=T0 + timedelta(days=10)),
        mk("meta", metadata={"project": "x", "n": 2, "ok": True, "none": None}),
        mk("meta2", metadata={"project": "y", "n": 2.0, "ok": 1}),
    ]
    for r in recs:
        if r.id not in {"late"}:
            r.recorded_at = T0
    store.insert(recs)
    return {r.id: r for r in recs}


ALL_STATUS = {"statuses": None, "stores": None}
DEFAULT_VISIBLE = {"base", "agent", "session", "semantic", "pref", "pinned", "past", "future", "late", "meta", "meta2"}


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, DEFAULT_VISIBLE),
        ({"agent_id": "a2"}, {"agent"}),
        ({"session_id": "s2"}, {"session"}),
        ({"layers": frozenset({Layer.SEMANTIC})}, {"semantic"}),
        ({"layers": frozenset()}, set()),
        ({"statuses": frozenset({Status.SUPERSEDED})}, {"superseded"}),
        ({"stores": frozenset({StoreTier.COLD})}, {"cold"}),
        ({"categories": frozenset({"preference"})}, {"pref"}),
        ({"pinned": True}, {"pinned"}),
        ({"ids": frozenset({"base", "cold", "nope"})}, {"base"}),
        ({"ids": frozenset({"base", "cold"}), **ALL_STATUS}, {"base", "cold"}),
        ({"valid_at": T0}, DEFAULT_VISIBLE - {"past", "future"}),
        ({"recorded_before": T0 + timedelta(days=1)}, DEFAULT_VISIBLE - {"late"}),
        ({"recorded_after": T0 + timedelta(days=1)}, {"late"}),
        ({"recorded_after": T0, "recorded_before": T0}, DEFAULT_VISIBLE - {"late"}),
        ({"metadata": {"project": "x"}}, {"meta"}),
        ({"metadata": {"n": 2}}, {"meta", "meta2"}),
        ({"metadata": {"ok": True}}, {"meta"}),
        ({"metadata": {"none": None}}, {"meta"}),
        ({"metadata": {"project": "x", "n": 3}}, set()),
        (ALL_STATUS, DEFAULT_VISIBLE | {"superseded", "cold"}),
    ],
)
def test_filters(store: Store, population: dict[str, MemoryRecord], kwargs: dict[str, Any], expected: set[str]) -> None:
    flt = MemoryFilter(**kwargs)
    vec = population["base"].embedding
    assert vec is not None
    assert {r.id for r in store.list(flt, limit=100)} == expected
    assert store.count(flt) == len(expected)
    assert {r.id for batch in store.scan(flt, batch_size=3) for r in batch} == expected
    assert {h.id for h in store.vector_search(vec, flt, 100)} == expected
    assert {h.id for h in store.text_search("fixture", flt, 100)} == expected
    assert sum(s.count for s in store.stats(flt)) == len(expected)


def test_pinned_false_filter(store: Store, population: dict[str, MemoryRecord]) -> None:
    ids = {r.id for r in store.list(MemoryFilter(pinned=False))}
    assert ids == DEFAULT_VISIBLE - {"pinned"}


def test_non_scalar_metadata_filter_is_rejected(store: Store, population: dict[str, MemoryRecord]) -> None:
    with pytest.raises(InvalidInputError):
        store.count(MemoryFilter(metadata={"project": ["x"]}))


REACT, DOCKER, ADA = "entity://tech/react", "entity://tech/docker", "entity://name/ada"


def test_entities_filter_any_of_follows_writes(store: Store, embedder: HashEmbedder) -> None:
    """``MemoryFilter.entities``: memories naming any of the URIs (exact), in every read, kept current
    through inserts, field updates, whole-record updates and deletes."""
    store.insert(
        [
            _rec(embedder, "Ada deployed the entity app", id="e1", entities=[REACT, DOCKER, ADA]),
            _rec(embedder, "Bob ships the entity app", id="e2", entities=[DOCKER]),
            _rec(embedder, "Tea time entity", id="e3"),
            _rec(embedder, "Old entity app", id="e4", entities=[REACT], status=Status.SUPERSEDED),
            _rec(embedder, "Other user entity app", id="e5", user_id="other", entities=[REACT]),
            _rec(embedder, "Lookalike entity app", id="e6", entities=["entity://tech/react-native", "react"]),
        ]
    )
    vec = embedder.embed(["entity app"])[0]

    def ids(entities: set[str], **kw: Any) -> set[str]:
        flt = MemoryFilter(entities=frozenset(entities), **kw)
        found = {r.id for r in store.list(flt, limit=100)}
        assert store.count(flt) == len(found)
        assert {r.id for batch in store.scan(flt, batch_size=2) for r in batch} == found
        assert {h.id for h in store.vector_search(vec, flt, 100)} == found
        assert {h.id for h in store.text_search("entity", flt, 100)} == found
        return found

    assert ids({REACT}) == {"e1"}
    assert ids({REACT, DOCKER}) == {"e1", "e2"}
    assert ids(set()) == set()
    assert ids({"entity://tech/vue"}) == set()
    assert ids({REACT}, statuses=None) == {"e1", "e4"}
    assert ids({REACT}, all_users=True) == {"e1", "e5"}
    assert ids({DOCKER}, agent_id="nobody") == set()
    store.update_fields("e2", {"entities": [REACT]})
    assert ids({DOCKER}) == {"e1"} and ids({REACT}) == {"e1", "e2"}
    rec = store.get(["e3"])["e3"]
    rec.entities = [ADA, ADA]
    store.update(rec)
    assert ids({ADA}) == {"e1", "e3"}
    assert store.delete(["e1"]) == 1
    assert ids({REACT, DOCKER, ADA}) == {"e2", "e3"}


# -- list, scan, count, stats, hash ------------------------------------------------------


def test_list_order_limit_offset(store: Store, embedder: HashEmbedder) -> None:
    recs = [
        MemoryRecord(f"r{i}", id=f"id{i}", created_at=T0 + timedelta(minutes=i), importance=i / 10) for i in range(6)
    ]
    recs.append(MemoryRecord("never accessed", id="idn", created_at=T0, importance=0.0))
    recs[2].last_accessed_at = T0
    store.insert(recs)
    newest = store.list(MemoryFilter(), limit=3)
    assert [r.id for r in newest] == ["id5", "id4", "id3"]
    assert [r.id for r in store.list(MemoryFilter(), limit=2, offset=3)] == ["id2", "id1"]
    oldest = store.list(MemoryFilter(), order_by="created_at", descending=False, limit=2)
    assert [r.id for r in oldest] == ["id0", "idn"]  # equal created_at: ties by id
    by_imp = store.list(MemoryFilter(), order_by="importance", limit=2)
    assert [r.id for r in by_imp] == ["id5", "id4"]
    # NULLs sort as the smallest value
    accessed = store.list(MemoryFilter(), order_by="last_accessed_at", limit=1)
    assert accessed[0].id == "id2"
    assert store.list(MemoryFilter(), order_by="last_accessed_at", descending=False, limit=1)[0].id != "id2"
    with pytest.raises(InvalidInputError):
        store.list(MemoryFilter(), order_by="content")
    with pytest.raises(InvalidInputError):
        store.list(MemoryFilter(), limit=-1)


def test_scan_batches_in_id_order(store: Store) -> None:
    ids = [f"m{i:03d}" for i in range(25)]
    store.insert([MemoryRecord(f"scan {i}", id=i) for i in reversed(ids)])
    batches = list(store.scan(MemoryFilter(), batch_size=10))
    assert [len(b) for b in batches] == [10, 10, 5]
    assert [r.id for b in batches for r in b] == ids
    with pytest.raises(InvalidInputError):
        list(store.scan(MemoryFilter(), batch_size=0))


def test_stats_per_layer_and_status(store: Store) -> None:
    store.insert(
        [
            MemoryRecord("a", layer=Layer.EPISODIC, energy=0.2),
            MemoryRecord("b", layer=Layer.EPISODIC, energy=0.6),
            MemoryRecord("c", layer=Layer.SEMANTIC, energy=1.0),
            MemoryRecord("d", layer=Layer.SEMANTIC, energy=0.5, status=Status.ARCHIVED),
        ]
    )
    rows = store.stats(MemoryFilter.everything())
    assert rows == [
        LayerStats(Layer.EPISODIC, Status.ACTIVE, 2, pytest.approx(0.4), 0.2, 0.6),  # type: ignore[arg-type]
        LayerStats(Layer.SEMANTIC, Status.ACTIVE, 1, 1.0, 1.0, 1.0),
        LayerStats(Layer.SEMANTIC, Status.ARCHIVED, 1, 0.5, 0.5, 0.5),
    ]
    assert store.stats(MemoryFilter(user_id="nobody")) == []


def test_find_by_hash_returns_newest(store: Store) -> None:
    old = MemoryRecord("Same text.", id="old", created_at=T0)
    new = MemoryRecord("same TEXT", id="new", created_at=T0 + timedelta(seconds=1))
    gone = MemoryRecord("same text", id="gone", created_at=T0 + timedelta(days=1), status=Status.INVALIDATED)
    store.insert([old, new, gone])
    found = store.find_by_hash(MemoryFilter(), content_hash("same text"))
    assert found is not None and found.id == "new"
    assert store.find_by_hash(MemoryFilter(), content_hash("other")) is None


# -- text search ------------------------------------------------------------------------


def test_text_search_ranks_and_stems(store: Store) -> None:
    store.insert(
        [
            MemoryRecord("The cat sat on the mat", id="cat1"),
            MemoryRecord("Cats are running; cats running everywhere, cats", id="cat2"),
            MemoryRecord("Dogs bark at night", id="dog"),
        ]
    )
    hits = store.text_search("running cats", MemoryFilter(), 10)
    assert [h.id for h in hits][:1] == ["cat2"]
    assert {h.id for h in hits} == {"cat1", "cat2"}
    assert all(isinstance(h, ScoredId) and h.score > 0 for h in hits)
    assert hits[0].score >= hits[-1].score
    assert [h.id for h in store.text_search("RUNS", MemoryFilter(), 10)] == ["cat2"]
    assert len(store.text_search("cat", MemoryFilter(), 1)) == 1


@pytest.mark.parametrize(
    "query",
    [
        "NEAR(cat mat",
        '"unbalanced',
        "cat*",
        "*",
        "cat AND OR NOT",
        "(cat) ^mat {col}: -x +y",
        "'; DROP TABLE memories; --",
        "çat 猫 кошка 🐈",
        "a" * 5000,
        "cat\\ / | & ! : ~",
        "",
        "   ",
        "!!!",
    ],
)
def test_text_search_is_safe_with_hostile_queries(store: Store, query: str) -> None:
    store.insert([MemoryRecord("The cat sat on the mat", id="cat"), MemoryRecord("猫 кошка", id="intl")])
    hits = store.text_search(query, MemoryFilter(), 5)
    assert isinstance(hits, list)
    assert all(h.id in {"cat", "intl"} for h in hits)
    if query.strip(" !*") == "":
        assert hits == []
    assert store.count(MemoryFilter()) == 2


def test_text_search_finds_words_inside_hostile_query(store: Store) -> None:
    store.insert([MemoryRecord("The cat sat on the mat", id="cat")])
    assert [h.id for h in store.text_search('NEAR("cat" *', MemoryFilter(), 5)] == ["cat"]


# -- vector search ----------------------------------------------------------------------


def test_vector_search_matches_brute_force(store: Store, embedder: HashEmbedder) -> None:
    texts = [f"memory {i} mentions topic {i % 13} and place {i % 7}" for i in range(200)]
    vecs = embedder.embed(texts)
    recs = [MemoryRecord(t, embedding=v) for t, v in zip(texts, vecs, strict=True)]
    store.insert(recs)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.standard_normal(64).astype(np.float32)
        q /= np.linalg.norm(q)
        sims = vecs @ q
        expected = [recs[i].id for i in np.argsort(-sims)[:10]]
        hits = store.vector_search(q, MemoryFilter(), 10)
        assert [h.id for h in hits] == expected
        np.testing.assert_allclose([h.score for h in hits], np.sort(sims)[::-1][:10], atol=1e-5)


def test_vector_search_is_cosine(store: Store) -> None:
    v = np.zeros(64, dtype=np.float32)
    v[0], v[1] = 3.0, 4.0  # not normalised: the score is still cosine
    w = np.zeros(64, dtype=np.float32)
    w[0] = -2.0
    store.insert([MemoryRecord("v", id="v", embedding=v), MemoryRecord("w", id="w", embedding=w)])
    q = np.zeros(64, dtype=np.float32)
    q[0] = 1.0
    hits = store.vector_search(q, MemoryFilter(), 5)
    assert [h.id for h in hits] == ["v", "w"]
    assert hits[0].score == pytest.approx(0.6, abs=1e-6)
    assert hits[1].score == pytest.approx(-1.0, abs=1e-6)


def test_vector_search_edge_cases(store: Store, embedder: HashEmbedder) -> None:
    q = embedder.embed(["anything"])[0]
    assert store.vector_search(q, MemoryFilter(), 5) == []
    store.insert([MemoryRecord("no vector"), _rec(embedder, "has vector", id="hv")])
    assert [h.id for h in store.vector_search(q, MemoryFilter(), 5)] == ["hv"]
    assert store.vector_search(q, MemoryFilter(), 0) == []
    with pytest.raises(InvalidInputError):
        store.vector_search(np.zeros(10, dtype=np.float32), MemoryFilter(), 5)


def test_vector_search_with_selective_filter(store: Store, embedder: HashEmbedder) -> None:
    """Most nearest neighbours fail the filter: the backend must still find k that pass."""
    texts = [f"shared words alpha beta {i}" for i in range(300)]
    recs = [
        MemoryRecord(t, embedding=embedder.embed([t])[0], category="rare" if i % 50 == 0 else "common")
        for i, t in enumerate(texts)
    ]
    store.insert(recs)
    q = embedder.embed(["shared words alpha beta"])[0]
    hits = store.vector_search(q, MemoryFilter(categories=frozenset({"rare"})), 10)
    assert {h.id for h in hits} == {r.id for r in recs if r.category == "rare"}


def test_vector_search_sees_embedding_updates_and_deletes(store: Store, embedder: HashEmbedder) -> None:
    a = _rec(embedder, "alpha memory")
    b = _rec(embedder, "beta memory")
    store.insert([a, b])
    qa = a.embedding
    assert qa is not None
    assert store.vector_search(qa, MemoryFilter(), 1)[0].id == a.id
    store.update_fields(a.id, {"embedding": embedder.embed(["gamma ray burst"])[0]})
    assert store.vector_search(qa, MemoryFilter(), 1)[0].id == b.id
    store.update_fields(b.id, {"embedding": None})
    assert [h.id for h in store.vector_search(qa, MemoryFilter(), 5)] == [a.id]
    store.delete([a.id])
    assert store.vector_search(qa, MemoryFilter(), 5) == []


# -- relations --------------------------------------------------------------------------


def test_relations_dedup_and_query(store: Store) -> None:
    store.insert([MemoryRecord(x, id=x) for x in ("a", "b", "c")])
    r1 = Relation("a", "b", RelationType.SUPERSEDES, confidence=0.9, weight=0.5, created_at=T0,
                  metadata={"why": "newer"})  # fmt: skip
    r2 = Relation("b", "c", RelationType.CAUSES, created_at=T0 + timedelta(seconds=1))
    dup = Relation("a", "b", RelationType.SUPERSEDES, created_at=T0)
    other_type = Relation("a", "b", RelationType.RELATED_TO, created_at=T0 + timedelta(seconds=2))
    assert store.add_relations([r1, r2, dup]) == 2
    assert store.add_relations([dup, other_type]) == 1
    assert store.add_relations([]) == 0
    out = store.relations(["a"], direction="out")
    assert [(r.dst_id, r.type) for r in out] == [("b", RelationType.SUPERSEDES), ("b", RelationType.RELATED_TO)]
    assert out[0] == r1
    assert [r.id for r in store.relations(["b"], direction="in")] == [r1.id, other_type.id]
    assert [r.id for r in store.relations(["b"])] == [r1.id, r2.id, other_type.id]
    assert [r.id for r in store.relations(["b"], types=frozenset({RelationType.CAUSES}))] == [r2.id]
    assert store.relations([]) == []
    with pytest.raises(InvalidInputError):
        store.relations(["a"], direction="sideways")


def test_update_and_delete_relations(store: Store) -> None:
    store.insert([MemoryRecord(x, id=x) for x in ("a", "b")])
    rel = Relation("a", "b", RelationType.RELATED_TO, created_at=T0)
    store.add_relations([rel])
    store.update_relation(rel.id, {"weight": 0.25, "last_reinforced_at": T0, "metadata": {"n": 1}})
    got = store.relations(["a"])[0]
    assert (got.weight, got.last_reinforced_at, got.metadata) == (0.25, T0, {"n": 1})
    with pytest.raises(NotFoundError):
        store.update_relation("nope", {"weight": 1.0})
    with pytest.raises(InvalidInputError):
        store.update_relation(rel.id, {"colour": "red"})
    assert store.delete_relations([rel.id, "nope"]) == 1
    assert store.relations(["a"]) == []
    with pytest.raises(NotFoundError):  # both ends must exist (foreign keys on PostgreSQL)
        store.add_relations([Relation("a", "ghost", RelationType.RELATED_TO)])
    assert store.relations(["a"]) == []


def test_versions_of_existing_memories(store: Store) -> None:
    store.insert([MemoryRecord("a", id="a"), MemoryRecord("b", id="b")])
    store.update_fields("b", {"importance": 0.9})
    assert store.versions(["a", "b", "missing", "a"]) == {"a": 1, "b": 2}
    assert store.versions([]) == {}


def test_entity_counts_per_user_each_memory_once(store: Store) -> None:
    store.insert([
        MemoryRecord("a", user_id="u", entities=["entity://person/ada", "entity://tech/react", "entity://person/ada"]),
        MemoryRecord("b", user_id="u", entities=["entity://person/ada"]),
        MemoryRecord("c", user_id="u", entities=["entity://person/ada"], layer=Layer.SEMANTIC),
        MemoryRecord("d", user_id="u", entities=["entity://person/ada"], status=Status.DORMANT),
        MemoryRecord("e", user_id="v", entities=["entity://person/ada"]),
        MemoryRecord("f", user_id="u"),
    ])  # fmt: skip
    episodic = frozenset({Layer.EPISODIC})
    assert store.entity_counts(MemoryFilter(user_id="u", layers=episodic)) == {
        ("u", "entity://person/ada"): 2,
        ("u", "entity://tech/react"): 1,
    }
    assert store.entity_counts(MemoryFilter.everything(layers=episodic)) == {
        ("u", "entity://person/ada"): 3,
        ("u", "entity://tech/react"): 1,
        ("v", "entity://person/ada"): 1,
    }
    assert store.entity_counts(MemoryFilter(user_id="nobody")) == {}


def test_count_relations_by_source_filter(store: Store) -> None:
    store.insert([MemoryRecord("a", id="a", user_id="u"), MemoryRecord("b", id="b", user_id="u"),
                  MemoryRecord("c", id="c", user_id="v")])  # fmt: skip
    store.add_relations([Relation("a", "b", RelationType.CAUSES), Relation("b", "a", RelationType.CAUSES),
                         Relation("c", "c", RelationType.RELATED_TO)])  # fmt: skip
    assert store.count_relations(MemoryFilter(user_id="u")) == 2
    assert store.count_relations(MemoryFilter(user_id="v")) == 1
    assert store.count_relations(MemoryFilter.everything()) == 3
    assert store.count_relations(MemoryFilter.everything(), types=frozenset({RelationType.RELATED_TO})) == 1
    assert store.count_relations(MemoryFilter(user_id="u"), types=frozenset({RelationType.RELATED_TO})) == 0
    assert store.count_relations(MemoryFilter(user_id="u"), types=frozenset(RelationType)) == 2


# -- history, accesses, co-activation ----------------------------------------------------


def test_history_is_ordered_oldest_first(store: Store) -> None:
    events = [
        HistoryEvent("m", "updated", T0 + timedelta(seconds=5), reason="pe gate", actor="llm", data={"sim": 0.8}),
        HistoryEvent("m", "created", T0),
        HistoryEvent("m", "promoted", T0 + timedelta(seconds=5)),
        HistoryEvent("other", "created", T0),
    ]
    store.add_history(events)
    got = store.history("m")
    assert [e.event for e in got] == ["created", "updated", "promoted"]  # same instant: insertion order
    assert got[1].reason == "pe gate" and got[1].actor == "llm" and got[1].data == {"sim": 0.8}
    assert got[1].at == T0 + timedelta(seconds=5)
    assert all(e.id is not None for e in got)
    assert store.history("nobody") == []


def test_access_log_and_prune(store: Store) -> None:
    times = [T0 + timedelta(minutes=i) for i in range(5)]
    store.log_access([AccessEvent("m", t, kind="search", session_id="s") for t in times])
    store.log_access([AccessEvent("n", T0)])
    got = store.access_times(["m", "n", "none"])
    assert got["m"] == sorted(times, reverse=True)
    assert got["n"] == [T0]
    assert "none" not in got
    assert store.access_times(["m"], limit=2)["m"] == [times[4], times[3]]
    assert store.prune_access_log(T0 + timedelta(minutes=2)) == 3
    assert store.access_times(["m"])["m"] == [times[4], times[3], times[2]]
    assert "n" not in store.access_times(["n"])


def test_action_telemetry_round_trips_per_user_newest_first_and_prunes(store: Store, embedder: HashEmbedder) -> None:
    from reverie.model import ActionEvent

    events = [
        ActionEvent(
            "store_note",
            "CREATE",
            T0 + timedelta(minutes=i),
            user_id="u",
            agent_id="a",
            memory_id=f"m{i}",
            confidence=0.9,
            lifecycle_state="active",
            importance=0.5,
            source="extraction",
        )
        for i in range(4)
    ]
    store.log_actions([*events, ActionEvent("discard", "SKIP", T0, user_id=None)])
    got = store.memory_actions("u")
    assert [e.memory_id for e in got] == ["m3", "m2", "m1", "m0"]
    first = got[-1]
    assert (
        first.action,
        first.outcome,
        first.at,
        first.user_id,
        first.agent_id,
        first.confidence,
        first.lifecycle_state,
        first.importance,
        first.source,
    ) == ("store_note", "CREATE", T0, "u", "a", 0.9, "active", 0.5, "extraction")
    assert [e.memory_id for e in store.memory_actions("u", since=T0 + timedelta(minutes=2))] == ["m3", "m2"]
    assert len(store.memory_actions("u", limit=1)) == 1
    assert [(e.action, e.user_id) for e in store.memory_actions(None)] == [("discard", None)]
    assert store.memory_actions("other") == []
    assert store.prune_memory_actions(T0 + timedelta(minutes=1)) == 2  # m0 and the no-user event
    assert [e.memory_id for e in store.memory_actions("u")] == ["m3", "m2", "m1"]
    rec = _rec(embedder, "a memory whose telemetry goes with it")
    store.insert([rec])
    store.log_actions([ActionEvent("store_episode", "CREATE", T0 + timedelta(hours=1), user_id="u", memory_id=rec.id)])
    store.delete([rec.id])  # a hard delete takes its telemetry rows too
    assert rec.id not in {e.memory_id for e in store.memory_actions("u")}


def test_coactivation_pairs_are_unordered(store: Store) -> None:
    store.bump_coactivations([("b", "a"), ("a", "b"), ("a", "c"), ("a", "a")], T0)
    store.bump_coactivations([("b", "a")], T0 + timedelta(hours=1))
    pairs = store.coactivations()
    assert [(p.a_id, p.b_id, p.weight) for p in pairs] == [("a", "b", 3), ("a", "c", 1)]
    ab = pairs[0]
    assert ab.first_at == T0 and ab.last_at == T0 + timedelta(hours=1)
    assert [(p.a_id, p.b_id) for p in store.coactivations(["c"])] == [("a", "c")]
    assert [(p.a_id, p.b_id) for p in store.coactivations(min_weight=2)] == [("a", "b")]
    assert store.coactivations([]) == []


# -- claims -----------------------------------------------------------------------------


def test_claims_between_two_owners(store: Store) -> None:
    assert store.claim(["a", "b"], owner="w1", phase="merge", now=T0, ttl_seconds=60) == ["a", "b"]
    assert store.claim(["b", "c"], owner="w2", phase="merge", now=T0, ttl_seconds=60) == ["c"]
    # the same owner may claim again (and extends its claim)
    assert store.claim(["a"], owner="w1", phase="merge", now=T0 + timedelta(seconds=30), ttl_seconds=60) == ["a"]
    later = T0 + timedelta(seconds=61)
    assert store.claim(["a", "b"], owner="w2", phase="merge", now=later, ttl_seconds=60) == ["b"]
    assert store.release("w1") == 1
    assert store.claim(["a"], owner="w2", phase="merge", now=later, ttl_seconds=60) == ["a"]
    assert store.release("w2", ["a", "zzz"]) == 1
    assert store.release("w2") == 2
    assert store.claim([], owner="w1", phase="p", now=T0, ttl_seconds=1) == []


def test_claim_heartbeat_renews_only_the_owners_claims(store: Store) -> None:
    assert store.claim(["a", "b"], owner="w1", phase="merge", now=T0, ttl_seconds=10) == ["a", "b"]
    assert store.claim(["c"], owner="w2", phase="merge", now=T0, ttl_seconds=10) == ["c"]
    assert store.renew_claims("w1", until=T0 + timedelta(seconds=30)) == 2
    assert store.renew_claims("w1", until=T0 + timedelta(seconds=20)) == 0  # never shortened
    at = T0 + timedelta(seconds=25)  # w2's claim lapsed (no heartbeat), w1's were renewed
    assert store.claim(["a", "b", "c"], owner="w3", phase="merge", now=at, ttl_seconds=10) == ["c"]
    assert store.claim(["a"], owner="w3", phase="merge", now=T0 + timedelta(seconds=31), ttl_seconds=10) == ["a"]
    assert store.renew_claims("nobody", until=T0 + timedelta(days=1)) == 0


# -- API keys ----------------------------------------------------------------------------


def test_api_keys_are_stored_listed_revoked_and_touched(store: Store) -> None:
    from reverie.store.base import ApiKey

    admin = ApiKey(id="k1", name="ops", key_hash="h" * 64, created_at=T0, admin=True)
    scoped = ApiKey(
        id="k2",
        name="alice's agent",
        key_hash="g" * 64,
        created_at=T0 + timedelta(seconds=1),
        user_ids=("alice", "ali ce ü"),
        agent_ids=("bot",),
    )
    open_agents = ApiKey(
        id="k3", name="bob", key_hash="f" * 64, created_at=T0 + timedelta(seconds=2), user_ids=("bob",)
    )
    for key in (admin, scoped, open_agents):
        store.put_api_key(key)
    with pytest.raises(ConflictError):
        store.put_api_key(admin)
    assert store.api_key("k2") == scoped and store.api_key("k3") == open_agents and store.api_key("nope") is None
    assert [k.id for k in store.api_keys()] == ["k1", "k2", "k3"]
    assert store.revoke_api_key("k2", T0 + timedelta(minutes=1)) is True
    assert store.revoke_api_key("k2", T0 + timedelta(minutes=2)) is False
    assert [k.id for k in store.api_keys()] == ["k1", "k3"]
    assert [k.id for k in store.api_keys(include_revoked=True)] == ["k1", "k2", "k3"]
    assert store.api_key("k2").revoked_at == T0 + timedelta(minutes=1)
    store.touch_api_key("k3", T0 + timedelta(hours=1))
    store.touch_api_key("missing", T0)
    assert store.api_key("k3").last_used_at == T0 + timedelta(hours=1)


# -- state ------------------------------------------------------------------------------


def test_state_key_values(store: Store) -> None:
    assert store.get_state("missing") is None
    value = {"cursor": "abc", "n": [1, 2.5, None, True], "nested": {"x": "ü"}}
    store.set_state("k", value)
    assert store.get_state("k") == value
    store.set_state("k", 3)
    assert store.get_state("k") == 3
    store.set_state("s", "text")
    assert store.get_state("s") == "text"


# -- derived indexes --------------------------------------------------------------------


def test_rebuild_indexes_keeps_results(store: Store, embedder: HashEmbedder) -> None:
    recs = [_rec(embedder, f"rebuild check {i} lighthouse") for i in range(30)]
    store.insert(recs)
    before_v = store.vector_search(recs[3].embedding, MemoryFilter(), 5)
    before_t = store.text_search("lighthouse", MemoryFilter(), 50)
    store.rebuild_indexes()
    store.rebuild_indexes()
    assert [h.id for h in store.vector_search(recs[3].embedding, MemoryFilter(), 5)] == [h.id for h in before_v]
    assert {h.id for h in store.text_search("lighthouse", MemoryFilter(), 50)} == {h.id for h in before_t}


def test_small_ann_settings_still_exact_enough(open_store: Opener, embedder: HashEmbedder) -> None:
    st = open_store(StorageSettings(exact_search_max=20, ann_rebuild_delta=100))
    recs = [_rec(embedder, f"ann item {i} word{i % 17} other{i % 5}") for i in range(150)]
    st.insert(recs)
    for r in recs[:10]:
        assert st.vector_search(r.embedding, MemoryFilter(), 1)[0].id == r.id


# -- write path tables: working memory, synaptic tags, boxes, scope relations ----------------


def test_working_memory_per_session(store: Store) -> None:
    from reverie.store.base import WorkingItem

    later = T0 + timedelta(minutes=5)
    store.put_working(
        [
            WorkingItem("s1", "m1", 0.4, T0, T0),
            WorkingItem("s1", "m2", 0.9, later, later),
            WorkingItem("s2", "m1", 0.1, T0, T0),
        ]
    )
    store.put_working([WorkingItem("s1", "m1", 0.7, T0, later, access_count=2)])  # duplicate id: in place
    items = store.working("s1")
    assert [(i.memory_id, i.importance, i.access_count) for i in items] == [("m1", 0.7, 2), ("m2", 0.9, 0)]
    assert items[0].added_at == T0 and items[0].last_accessed == later
    assert store.remove_working("s1", ["m2"]) == 1
    assert store.remove_working("s1") == 1 and store.working("s1") == []
    assert [i.session_id for i in store.working("s2")] == ["s2"]


def test_synaptic_tags_alive_and_captured(store: Store) -> None:
    from reverie.store.base import SynapticTag

    ttl = timedelta(hours=4)
    store.put_tags(
        [
            SynapticTag("a", "s", T0, T0 + ttl),
            SynapticTag("b", "s", T0 + timedelta(hours=1), T0 + timedelta(hours=1) + ttl),
            SynapticTag("c", "other", T0, T0 + ttl),
        ]
    )
    alive = store.active_tags("s", T0 + timedelta(hours=2))
    assert [t.memory_id for t in alive] == ["a", "b"] and alive[0].expires_at == T0 + ttl
    assert [t.memory_id for t in store.active_tags("s", T0 + timedelta(hours=4, minutes=30))] == ["b"]
    assert store.capture_tags("s", ["a", "zzz"]) == 1
    assert [t.memory_id for t in store.active_tags("s", T0 + timedelta(hours=2))] == ["b"]


def test_boxes_open_sealed_and_traces(store: Store) -> None:
    from reverie.store.base import Box

    store.put_box(Box("b1", "u", "s", T0, T0, topic=["lisbon", "flat"], memory_count=2))
    store.put_box(Box("b0", None, "s", T0, T0))
    found = store.open_box("u", "s")
    assert found is not None and found.topic == ["lisbon", "flat"] and found.memory_count == 2
    assert store.open_box("u", None) is None and store.open_box(None, "s") is not None
    found.sealed_at, found.trace_id, found.last_at = T0 + timedelta(hours=1), "t1", T0 + timedelta(minutes=9)
    store.put_box(found)
    assert store.open_box("u", "s") is None
    sealed = store.sealed_boxes("u")
    assert [(b.id, b.trace_id, b.last_at) for b in sealed] == [("b1", "t1", T0 + timedelta(minutes=9))]
    assert store.sealed_boxes("v") == []
    by_id = store.box("b1")
    assert by_id is not None and by_id.topic == ["lisbon", "flat"] and by_id.sealed_at == found.sealed_at
    assert store.box("b0") is not None and store.box("missing") is None


def test_scope_relations(store: Store, embedder: HashEmbedder) -> None:
    a, b, c = (_rec(embedder, t, user_id="u") for t in ("alpha", "beta", "gamma"))
    other = _rec(embedder, "delta", user_id="v")
    store.insert([a, b, c, other])
    store.add_relations(
        [
            Relation(a.id, b.id, RelationType.RELATED_TO, created_at=T0),
            Relation(b.id, c.id, RelationType.SUPERSEDES, created_at=T0 + timedelta(seconds=1)),
            Relation(other.id, a.id, RelationType.RELATED_TO, created_at=T0),
        ]
    )
    mine = store.scope_relations(MemoryFilter.everything(user_id="u", all_users=False))
    assert [(r.src_id, r.type) for r in mine] == [(a.id, RelationType.RELATED_TO), (b.id, RelationType.SUPERSEDES)]
    only = store.scope_relations(
        MemoryFilter.everything(user_id="u", all_users=False), types=frozenset({RelationType.SUPERSEDES})
    )
    assert [r.dst_id for r in only] == [c.id]


def test_common_words_do_not_flood_full_text_search(open_store) -> None:
    store = open_store(StorageSettings(fts_common_docs=5))
    rows = [MemoryRecord(f"Maya talked about topic{i} with the cat", id=f"r{i:02d}") for i in range(20)]
    rows.append(MemoryRecord("Maya says her cat is called Pixel", id="pixel"))
    store.insert(rows)
    hits = store.text_search("What is Maya's cat Pixel like?", MemoryFilter(), 5)
    assert [h.id for h in hits] == ["pixel"]  # "maya" and "cat" are in >= 5 rows: only "pixel" ranks
    assert len(store.text_search("maya cat", MemoryFilter(), 50)) == 21  # all common: ANDed, all found
    assert [h.id for h in store.text_search("maya topic7", MemoryFilter(), 5)] == ["r07"]


def test_update_many_writes_plain_fields_in_one_call(store: Store, embedder: HashEmbedder) -> None:
    a, b = _rec(embedder, "many a"), _rec(embedder, "many b")
    store.insert([a, b])
    store.update_many(
        [
            (a.id, {"access_count": 3, "energy": 2.5, "last_accessed_at": T0}),
            (b.id, {"access_count": 7, "energy": 1.5, "last_accessed_at": T0}),
            (b.id + "-missing", {"access_count": 1}),
        ]
    )
    got = store.get([a.id, b.id])
    assert (got[a.id].access_count, got[a.id].energy, got[a.id].last_accessed_at) == (3, 2.5, T0)
    assert (got[b.id].access_count, got[b.id].energy, got[b.id].version) == (7, 1.5, b.version + 1)
    for bad in ({"content": "new text"}, {"embedding": a.embedding}, {"user_id": "x"}, {"colour": "red"}):
        with pytest.raises(InvalidInputError):
            store.update_many([(a.id, bad)])
    assert store.get([a.id])[a.id].content == "many a"
    store.update_many([])


# -- dream lifecycle: partial scans, batched compare-and-set, clusters, pruning -----------


def test_scan_can_omit_heavy_fields(store: Store, embedder: HashEmbedder) -> None:
    full = _full_record(embedder)
    store.insert([full, _rec(embedder, "second row", id="mem-zz")])
    heavy = frozenset({"embedding", "inputs", "importance_channels"})
    batches = list(store.scan(MemoryFilter.everything(), batch_size=1, omit=heavy))
    assert [[r.id for r in b] for b in batches] == [["mem-full"], ["mem-zz"]]
    light = batches[0][0]
    assert light.embedding is None and light.inputs == [] and light.importance_channels == {}
    for f in dataclasses.fields(MemoryRecord):  # every other field is read as stored
        if f.name not in heavy:
            assert getattr(light, f.name) == getattr(full, f.name), f.name
    for bad in (frozenset({"version"}), frozenset({"id"}), frozenset({"colour"})):
        with pytest.raises(InvalidInputError):
            list(store.scan(MemoryFilter.everything(), omit=bad))


def test_update_fields_many_is_a_compare_and_set_per_memory(store: Store, embedder: HashEmbedder) -> None:
    a, b, c = (_rec(embedder, f"cas {x}") for x in "abc")
    store.insert([a, b, c])
    store.update_fields(b.id, {"utility": 0.9})  # b moves to version 2: the batch's write to it is stale
    written = store.update_fields_many(
        [
            (a.id, {"utility": 0.1, "status": Status.DORMANT}, 1),
            (b.id, {"utility": 0.2}, 1),
            (c.id, {"energy": 0.5}, None),
            ("missing", {"utility": 0.3}, 1),
        ]
    )
    assert written == [a.id, c.id]
    got = store.get([a.id, b.id, c.id])
    assert (got[a.id].utility, got[a.id].status, got[a.id].version) == (0.1, Status.DORMANT, 2)
    assert (got[b.id].utility, got[b.id].version) == (0.9, 2)
    assert (got[c.id].energy, got[c.id].version) == (0.5, 2)
    with pytest.raises(InvalidInputError):
        store.update_fields_many([(a.id, {"utility": 0.5}, 2), (a.id, {"energy": 1.0}, 3)])
    with pytest.raises(InvalidInputError):
        store.update_fields_many([(a.id, {"content": "new"}, 2)])
    assert store.get([a.id])[a.id].version == 2  # nothing of a refused batch was written
    assert store.update_fields_many([]) == []


def test_update_relations_in_bulk(store: Store, embedder: HashEmbedder) -> None:
    a, b, c = (_rec(embedder, t) for t in ("rel a", "rel b", "rel c"))
    store.insert([a, b, c])
    r1, r2 = Relation(a.id, b.id, RelationType.RELATED_TO), Relation(b.id, c.id, RelationType.CAUSES)
    store.add_relations([r1, r2])
    later = T0 + timedelta(days=3)
    n = store.update_relations(
        [
            (r1.id, {"confidence": 0.3, "last_reinforced_at": later, "metadata": {"k": 1}}),
            (r2.id, {"confidence": 0.6}),
            ("missing", {"confidence": 0.1}),
        ]
    )
    assert n == 2
    got = {r.id: r for r in store.relations([a.id, c.id])}
    assert (got[r1.id].confidence, got[r1.id].last_reinforced_at, got[r1.id].metadata) == (0.3, later, {"k": 1})
    assert got[r2.id].confidence == 0.6
    with pytest.raises(InvalidInputError):
        store.update_relations([(r1.id, {"colour": "red"})])
    assert store.update_relations([]) == 0


def test_add_history_in_bulk_reports_the_stored_ids(store: Store) -> None:
    events = [HistoryEvent("m", f"e{i}", T0 + timedelta(seconds=i)) for i in range(5)]
    store.add_history(events[:1])
    store.add_history(events[1:])
    assert [e.id for e in events] == [h.id for h in store.history("m")]
    assert len({e.id for e in events}) == 5


def test_prune_expired_tags_and_claims(store: Store) -> None:
    from reverie.store.base import SynapticTag

    ttl = timedelta(hours=4)
    store.put_tags([SynapticTag("a", "s", T0, T0 + ttl), SynapticTag("b", "s", T0 + ttl, T0 + 2 * ttl, captured=True)])
    assert store.prune_tags(T0 + ttl + timedelta(seconds=1)) == 1
    assert [t.memory_id for t in store.active_tags("s", T0 + ttl + timedelta(minutes=1))] == []  # b is captured
    assert store.prune_tags(T0 + 3 * ttl) == 1
    store.claim(["x", "y"], owner="w1", phase="p", now=T0, ttl_seconds=60)
    store.claim(["z"], owner="w2", phase="p", now=T0 + timedelta(seconds=100), ttl_seconds=60)
    assert store.prune_claims(T0 + timedelta(seconds=120)) == 2
    assert store.claim(["x", "z"], owner="w3", phase="p", now=T0 + timedelta(seconds=120), ttl_seconds=60) == ["x"]


def test_clusters_round_trip_and_replace_members(store: Store) -> None:
    from reverie.store.base import Cluster

    c1 = Cluster("c1", "u", "coactivation", T0, T0, members={"m1": 4.0, "m2": 5.0}, metadata={"strength": 5})
    c2 = Cluster("c2", None, "coactivation", T0 + timedelta(seconds=1), T0, members={"m3": 1.0}, label="misc")
    c3 = Cluster("c3", "u", "theme", T0 + timedelta(seconds=2), T0)
    store.put_clusters([c1, c2, c3])
    got = store.clusters("u")
    assert [(c.id, c.user_id, c.kind, c.members) for c in got] == [
        ("c1", "u", "coactivation", {"m1": 4.0, "m2": 5.0}),
        ("c3", "u", "theme", {}),
    ]
    assert got[0].metadata == {"strength": 5} and got[0].created_at == T0
    assert [(c.id, c.user_id, c.label) for c in store.clusters(None)] == [("c2", None, "misc")]
    assert [c.id for c in store.clusters(None, all_users=True, kind="coactivation")] == ["c1", "c2"]
    c1.members, c1.updated_at = {"m2": 6.0, "m4": 4.0}, T0 + timedelta(hours=1)
    store.put_clusters([c1])
    again = store.clusters("u", kind="coactivation")[0]
    assert again.members == {"m2": 6.0, "m4": 4.0} and again.updated_at == T0 + timedelta(hours=1)
    assert store.delete_clusters(["c1", "nope"]) == 1
    assert [c.id for c in store.clusters(None, all_users=True)] == ["c2", "c3"]
    store.put_clusters([])
    assert store.delete_clusters([]) == 0


# -- quantised embeddings (embedding compression) ----------------------------------------------------------------


def _unit_vectors(n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 64)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_many_quantized_embeddings_read_together_decode_as_each_alone(store: Store) -> None:
    """One read of memories at several precisions (a search's pool, a listing) gives each the vector its own
    code blob decodes to."""
    from reverie import vector_codec

    vecs = _unit_vectors(12, seed=3)
    precisions = [Precision.INT8, Precision.INT4, Precision.INT2, Precision.FLOAT32]
    recs = [
        MemoryRecord(f"cold fact {i}", id=f"m{i}", store=StoreTier.COLD, embedding=v, embedding_precision=p)
        for i, (v, p) in enumerate(zip(vecs, precisions * 3, strict=True))
    ]
    store.insert(recs)
    got = store.get([r.id for r in recs])
    listed = {r.id: r for r in store.list(MemoryFilter(stores=frozenset({StoreTier.COLD})), limit=50)}
    for rec, vec in zip(recs, vecs, strict=True):
        p = rec.embedding_precision
        alone = vec if p is Precision.FLOAT32 else vector_codec.decode(vector_codec.encode(vec, p))
        for seen in (got[rec.id], listed[rec.id]):
            assert seen.embedding_precision is p and seen.embedding is not None
            np.testing.assert_array_equal(seen.embedding, alone)


def test_text_search_over_listed_ids_ranks_them_as_the_whole_search_does(store: Store, embedder: HashEmbedder) -> None:
    """A text search restricted to a few ids (the members of the summaries a search follows) finds exactly the
    listed memories that match, with the scores the unrestricted search gives them."""
    recs = [_rec(embedder, f"harbour lantern note {i} " + ("lantern " * (i % 4)) + f"extra{i % 9}") for i in range(120)]
    store.insert(recs)
    everything = {h.id: h.score for h in store.text_search("lantern harbour", MemoryFilter(), 200)}
    assert len(everything) == 120
    listed = frozenset(r.id for r in recs[::9])
    hits = store.text_search("lantern harbour", MemoryFilter(ids=listed), 50)
    assert {h.id for h in hits} == listed
    for h in hits:
        assert h.score == pytest.approx(everything[h.id], rel=1e-6)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert store.text_search("nothing-matches-this", MemoryFilter(ids=listed), 50) == []


def test_quantized_embeddings_store_dequantize_and_reencode(store: Store) -> None:
    from reverie import vector_codec

    vecs = _unit_vectors(2)
    rec = MemoryRecord(
        "cold fact", id="q1", store=StoreTier.COLD, embedding=vecs[0], embedding_precision=Precision.INT4
    )
    store.insert([rec])
    got = store.get(["q1"])["q1"]
    assert got.embedding_precision is Precision.INT4 and got.embedding is not None
    assert got.embedding.dtype == np.float32 and _cos(got.embedding, vecs[0]) > 0.98
    np.testing.assert_array_equal(store.embeddings(["q1"])["q1"], got.embedding)
    np.testing.assert_array_equal(got.embedding, vector_codec.decode(vector_codec.encode(vecs[0], Precision.INT4)))
    # read-modify-write keeps the codes bit for bit (no re-quantisation drift)
    assert store.update(got, expected_version=got.version) == got.version + 1
    np.testing.assert_array_equal(store.get(["q1"])["q1"].embedding, got.embedding)
    # a precision change alone re-encodes the stored embedding
    store.update_fields("q1", {"embedding_precision": Precision.INT2})
    low = store.get(["q1"])["q1"]
    assert low.embedding_precision is Precision.INT2 and low.embedding is not None
    assert 0.8 < _cos(low.embedding, vecs[0]) < _cos(got.embedding, vecs[0])
    # a new vector is stored at the memory's precision; float32 with a vector stores it exactly
    store.update_fields("q1", {"embedding": vecs[1]})
    again = store.get(["q1"])["q1"]
    assert again.embedding_precision is Precision.INT2 and _cos(again.embedding, vecs[1]) > 0.8
    store.update_fields("q1", {"embedding": vecs[1], "embedding_precision": Precision.FLOAT32})
    exact = store.get(["q1"])["q1"]
    assert exact.embedding_precision is Precision.FLOAT32
    np.testing.assert_array_equal(exact.embedding, vecs[1])
    with pytest.raises(InvalidInputError):
        store.update_fields("q1", {"embedding_precision": "int3"})
    with pytest.raises(InvalidInputError):  # re-encoding goes through update_fields
        store.update_many([("q1", {"embedding_precision": Precision.INT8})])
    assert store.get(["q1"])["q1"].embedding_precision is Precision.FLOAT32


def test_deep_search_ranks_quantized_memories_with_the_mixed_precision_similarity(store: Store) -> None:
    from reverie import vector_codec

    vecs = _unit_vectors(60)
    precisions = [Precision.FLOAT32, Precision.INT8, Precision.INT4, Precision.INT2]
    recs = [
        MemoryRecord(
            f"memory {i}",
            id=f"m{i:02d}",
            store=StoreTier.HOT if i < 10 else StoreTier.COLD,
            embedding=vecs[i],
            embedding_precision=precisions[i % 4] if i >= 10 else Precision.FLOAT32,
        )
        for i in range(60)
    ]
    store.insert(recs)
    query = vecs[13] + 0.3 * vecs[40]
    unit = query / np.linalg.norm(query)
    expected: dict[str, float] = {}
    for r in recs:
        if r.embedding_precision is Precision.FLOAT32:
            expected[r.id] = _cos(unit, r.embedding)
        else:
            codes = [vector_codec.encode(r.embedding, r.embedding_precision)]
            expected[r.id] = float(vector_codec.mixed_similarity(query, codes)[0])
    deep = store.vector_search(query, MemoryFilter(stores=None), 60)
    assert [h.id for h in deep] == sorted(expected, key=lambda i: (-expected[i], i))
    for h in deep:
        assert h.score == pytest.approx(expected[h.id], abs=1e-4)
    # the quantised twin of the query's own vector is found first, its similarity debiased to ~1
    top = store.vector_search(vecs[14], MemoryFilter(stores=frozenset({StoreTier.COLD})), 3)
    assert top[0].id == "m14" and top[0].score == pytest.approx(1.0, abs=2e-3)  # m14 is int4
    hot = store.vector_search(query, MemoryFilter(), 60)
    assert {h.id for h in hot} == {f"m{i:02d}" for i in range(10)}


def test_quantized_memory_moved_back_to_hot_is_still_found(store: Store) -> None:
    vecs = _unit_vectors(3, seed=11)
    store.insert(
        [
            MemoryRecord(
                "back home", id="h1", store=StoreTier.COLD, embedding=vecs[0], embedding_precision=Precision.INT8
            ),
            MemoryRecord("hot one", id="h2", embedding=vecs[1]),
        ]
    )
    assert [h.id for h in store.vector_search(vecs[0], MemoryFilter(), 5)] == ["h2"]
    store.update_fields("h1", {"store": StoreTier.HOT})
    hits = store.vector_search(vecs[0], MemoryFilter(), 5)
    assert [h.id for h in hits] == ["h1", "h2"] and hits[0].score == pytest.approx(1.0, abs=1e-3)


def test_quantized_memories_survive_reopen_rebuild_user_move_and_delete(open_store: Opener) -> None:
    vecs = _unit_vectors(30, seed=3)
    st = open_store()
    st.insert(
        [
            MemoryRecord(
                f"cold {i}",
                id=f"c{i:02d}",
                user_id="ann",
                store=StoreTier.COLD,
                embedding=vecs[i],
                embedding_precision=Precision.INT4 if i % 2 else Precision.FLOAT32,
            )
            for i in range(30)
        ]
    )
    deep = MemoryFilter(user_id="ann", stores=None)
    before = st.vector_search(vecs[5], deep, 10)
    assert before[0].id == "c05"
    st.close()
    st = open_store()
    assert st.vector_search(vecs[5], deep, 10) == before
    st.rebuild_indexes()
    assert st.vector_search(vecs[5], deep, 10) == before
    st.update_fields("c05", {"user_id": "bob"})
    assert "c05" not in {h.id for h in st.vector_search(vecs[5], deep, 30)}
    assert st.vector_search(vecs[5], MemoryFilter(user_id="bob", stores=None), 1)[0].id == "c05"
    st.delete(["c07"])
    assert "c07" not in {h.id for h in st.vector_search(vecs[7], deep, 30)}
    assert st.count(MemoryFilter(user_id="ann", stores=None)) == 28


def test_deep_search_over_many_quantized_memories_matches_exact_ranking(store: Store) -> None:
    # more quantised rows than PostgreSQL scores again per query (the rest are left out by its cold graph)
    from reverie import vector_codec

    vecs = _unit_vectors(900, seed=21)
    store.insert(
        [
            MemoryRecord(
                f"old {i}",
                id=f"z{i:03d}",
                store=StoreTier.COLD,
                status=Status.DORMANT,
                embedding=vecs[i],
                embedding_precision=Precision.INT4,
            )
            for i in range(900)
        ]
    )
    codes = [vector_codec.encode(v, Precision.INT4) for v in vecs]
    deep = MemoryFilter(stores=None, statuses=None)
    overlaps = []
    for i in range(0, 900, 90):
        query = vecs[i] + 0.5 * vecs[(i + 1) % 900]
        exact = np.argsort(-vector_codec.mixed_similarity(query, codes), kind="stable")[:10]
        hits = store.vector_search(query, deep, 10)
        assert hits[0].id == f"z{exact[0]:03d}"
        overlaps.append(len({h.id for h in hits} & {f"z{j:03d}" for j in exact}) / 10)
    assert np.mean(overlaps) >= 0.95


def test_set_embedding_precision_reencodes_many_with_compare_and_set(store: Store) -> None:
    from reverie import vector_codec

    vecs = _unit_vectors(6, seed=5)
    store.insert(
        [MemoryRecord(f"cold {i}", id=f"p{i}", store=StoreTier.COLD, embedding=vecs[i]) for i in range(5)]
        + [MemoryRecord("no vector", id="p5", store=StoreTier.COLD)]
    )
    store.update_fields("p3", {"energy": 0.5})  # now at version 2
    written = store.set_embedding_precision(
        [
            ("p0", Precision.INT8, 1),
            ("p1", Precision.INT4, None),
            ("p2", Precision.INT2, 1),
            ("p3", Precision.INT4, 1),
            ("p4", Precision.FLOAT32, 1),
            ("p5", Precision.INT4, 1),
            ("nope", Precision.INT8, 1),
        ]
    )
    assert written == ["p0", "p1", "p2"]  # p3 changed meanwhile, p4 is float32 already, p5 has no vector
    got = store.get([f"p{i}" for i in range(6)])
    for i, p in enumerate([Precision.INT8, Precision.INT4, Precision.INT2]):
        assert got[f"p{i}"].embedding_precision is p and got[f"p{i}"].version == 2
        np.testing.assert_array_equal(got[f"p{i}"].embedding, vector_codec.decode(vector_codec.encode(vecs[i], p)))
    assert (got["p3"].embedding_precision, got["p3"].version) == (Precision.FLOAT32, 2)
    assert (got["p4"].version, got["p5"].version, got["p5"].embedding) == (1, 1, None)
    deep = MemoryFilter(stores=None)
    assert [store.vector_search(vecs[i], deep, 1)[0].id for i in range(5)] == [f"p{i}" for i in range(5)]
    # down again from codes (int8 → int2), and back to float32 (the dequantised vector)
    assert store.set_embedding_precision([("p0", Precision.INT2, 2), ("p1", Precision.FLOAT32, 2)]) == ["p0", "p1"]
    got = store.get(["p0", "p1"])
    assert got["p0"].embedding_precision is Precision.INT2 and got["p1"].embedding_precision is Precision.FLOAT32
    assert _cos(got["p0"].embedding, vecs[0]) > 0.8
    assert store.vector_search(vecs[1], MemoryFilter(stores=None), 1)[0].id == "p1"
    assert store.set_embedding_precision([]) == []
    with pytest.raises(InvalidInputError):
        store.set_embedding_precision([("p0", Precision.INT4, None), ("p0", Precision.INT8, None)])
    with pytest.raises(InvalidInputError):
        store.set_embedding_precision([("p0", "int3", None)])  # type: ignore[list-item]
    assert store.get(["p0"])["p0"].version == 3


def test_ids_with_prefix_and_users(store: Store, embedder: HashEmbedder) -> None:
    ids = [
        "0199aa00-0000-7000-8000-000000000001",
        "0199aa00-0000-7000-8000-000000000002",
        "0199ab00-0000-7000-8000-000000000003",
        "0199aa%_-literal",
    ]
    store.insert(
        [
            _rec(embedder, f"fact {i}", id=mid, user_id=user, status=status)
            for i, (mid, user, status) in enumerate(
                zip(
                    ids,
                    ["maya", "maya", "tom", None],
                    [Status.ACTIVE, Status.INVALIDATED, Status.ACTIVE, Status.ACTIVE],
                    strict=True,
                )
            )
        ]
    )
    # any user and status; id order; exact characters (no LIKE wildcards)
    assert store.ids_with_prefix("0199aa00") == ids[:2]
    assert store.ids_with_prefix("0199a", limit=2) == [ids[3], ids[0]]  # "%" sorts before "0"
    assert store.ids_with_prefix("0199aa%") == [ids[3]]
    assert store.ids_with_prefix(ids[2]) == [ids[2]]
    assert store.ids_with_prefix("0199AA") == [] and store.ids_with_prefix("") == []
    assert store.users() == [("maya", 2), (None, 1), ("tom", 1)]
    assert store.users(limit=1) == [("maya", 2)]


def test_access_events_newest_first_with_kind_and_session(store: Store) -> None:
    store.log_access(
        [
            AccessEvent("m", T0 + timedelta(minutes=i), kind=k, session_id=s)
            for i, (k, s) in enumerate([("search", "s1"), ("get", None), ("rehearsal", "s2")])
        ]
    )
    store.log_access([AccessEvent("other", T0)])
    got = store.access_events("m")
    assert [(e.kind, e.session_id, e.at) for e in got] == [
        ("rehearsal", "s2", T0 + timedelta(minutes=2)),
        ("get", None, T0 + timedelta(minutes=1)),
        ("search", "s1", T0),
    ]
    assert [e.kind for e in store.access_events("m", limit=1)] == ["rehearsal"]
    assert store.access_events("nobody") == []


def test_history_at_one_instant_by_one_actor(store: Store) -> None:
    run = T0 + timedelta(hours=1)
    store.add_history(
        [
            HistoryEvent("a", "promoted", run, actor="dream"),
            HistoryEvent("b", "archived", run, actor="dream"),
            HistoryEvent("c", "updated", run, actor="user"),
            HistoryEvent("d", "promoted", run + timedelta(microseconds=1), actor="dream"),
        ]
    )
    assert [(e.memory_id, e.event) for e in store.history_at(run, actor="dream")] == [
        ("a", "promoted"),
        ("b", "archived"),
    ]
    assert len(store.history_at(run, actor="dream", limit=1)) == 1
    assert store.history_at(T0, actor="dream") == []


def test_scope_counts_per_user_and_agent(store: Store, embedder: HashEmbedder) -> None:
    store.insert(
        [
            _rec(embedder, "a1", user_id="u", agent_id="x", access_count=2),
            _rec(embedder, "a2", user_id="u", agent_id="x", access_count=3, status=Status.INVALIDATED),
            _rec(embedder, "a3", user_id="u"),
            _rec(embedder, "a4", user_id=None, agent_id="y"),
        ]
    )
    rows = {(r["user_id"], r["agent_id"]): r for r in store.scope_counts()}
    assert set(rows) == {("u", "x"), ("u", None), (None, "y")}
    assert rows[("u", "x")]["memories"] == 2 and rows[("u", "x")]["accesses"] == 5
    assert rows[("u", "x")]["last_written"] == T0 and rows[("u", None)]["last_accessed"] is None
    assert store.scope_counts()[0]["memories"] == 2 and len(store.scope_counts(limit=1)) == 1


def test_state_items_delete_state_and_partition_rows(store: Store) -> None:
    from reverie.store.base import Box, Cluster

    store.set_state("k:a", {"x": 1})
    store.set_state("k:b", [1, 2])
    assert store.state_items() == [("k:a", {"x": 1}), ("k:b", [1, 2])]
    assert store.delete_state(["k:a", "missing"]) == 1 and store.state_items() == [("k:b", [1, 2])]
    store.put_box(Box("b1", "u", "s", T0, T0, topic=["tea"]))
    store.put_box(Box("b2", "v", "s", T0, T0, topic=["coffee"]))
    store.put_clusters(
        [
            Cluster("c1", "u", "coactivation", T0, T0, members={"m1": 1.0}),
            Cluster("c2", "v", "coactivation", T0, T0, members={"m2": 1.0}),
        ]
    )
    assert store.delete_partition_rows("u", dry_run=True) == {"boxes": 1, "clusters": 1}
    assert store.box("b1") is not None  # a dry run changes nothing
    assert store.delete_partition_rows("u") == {"boxes": 1, "clusters": 1}
    assert store.box("b1") is None and store.box("b2") is not None
    assert store.clusters("u") == [] and [c.id for c in store.clusters("v")] == ["c2"]
    assert store.delete_partition_rows("u") == {"boxes": 0, "clusters": 0}
    store.reclaim()  # outside a transaction: always allowed


# -- compaction and duplicate groups -----------------------------------------------------------------


def test_duplicate_groups_share_user_agent_and_content_hash(store: Store) -> None:
    def rec(mid: str, text: str, at: int, **kw: Any) -> MemoryRecord:
        return MemoryRecord(text, id=mid, created_at=T0 + timedelta(minutes=at), **kw)

    store.insert(
        [
            rec("a2", "Tea at noon", 2, user_id="u"),
            rec("a1", "tea at  noon!", 1, user_id="u"),
            rec("a3", "Tea at noon", 3, user_id="u"),
            rec("b1", "Tea at noon", 0, user_id="v"),  # another user: not a duplicate of u's
            rec("c1", "Tea at noon", 5, user_id="u", agent_id="bot"),  # another agent
            rec("d1", "coffee at six", 1, user_id="u"),
            rec("d2", "coffee at six", 1, user_id="u"),
            rec("e1", "only once", 1, user_id="u"),
            rec("f1", "Tea at noon", 9, user_id="u", status=Status.INVALIDATED),
        ]
    )
    groups = store.duplicate_groups(MemoryFilter.everything(all_users=True, statuses=frozenset({Status.ACTIVE})))
    assert groups == [["a1", "a2", "a3"], ["d1", "d2"]]  # oldest first, ties by id
    assert store.duplicate_groups(MemoryFilter(user_id="v", statuses=None, stores=None)) == []
    every = store.duplicate_groups(MemoryFilter.everything())
    assert ["a1", "a2", "a3", "f1"] in every


def test_compact_reclaims_space_and_keeps_every_answer(open_store: Opener, embedder: HashEmbedder) -> None:
    # a small exact-search limit: the SQLite backend serves this partition from an HNSW graph
    st = open_store(StorageSettings(exact_search_max=40, ann_rebuild_delta=100))
    recs = [
        _rec(embedder, f"compaction note {i} about harbour{i % 13} and lantern{i % 7} " + "padding " * 20)
        for i in range(240)
    ]
    st.insert(recs)
    st.vector_search(recs[0].embedding, MemoryFilter(), 1)  # builds the index
    for r in recs[:60]:  # rewritten contents: old full-text entries and row versions left behind
        st.update_fields(
            r.id,
            {
                "content": r.content.replace("note", "memo"),
                "embedding": embedder.embed([r.content.replace("note", "memo")])[0],
            },
        )
    # fewer entries marked deleted than live ones: a graph mostly marked deleted is loaded again from its rows
    # by the next search (tests/store/test_sqlite.py), compaction rebuilds the rest
    gone = [r.id for r in recs[190:]]
    assert st.delete(gone) == len(gone)
    kept = recs[:190]
    probes = [kept[i].embedding for i in (3, 50, 90)]
    before_v = [[h.id for h in st.vector_search(p, MemoryFilter(), 5)] for p in probes]
    before_t = {h.id for h in st.text_search("lantern3", MemoryFilter(), 100)}

    report = st.compact()

    assert report.backend == st.backend and report.bytes_before > 0 and report.bytes_after > 0
    assert report.actions and report.seconds >= 0
    assert [[h.id for h in st.vector_search(p, MemoryFilter(), 5)] for p in probes] == before_v
    assert {h.id for h in st.text_search("lantern3", MemoryFilter(), 100)} == before_t
    assert st.count(MemoryFilter.everything()) == len(kept)
    data = report.to_dict()
    assert data["reclaimed_bytes"] == report.reclaimed_bytes >= 0
    if st.backend == "sqlite":
        assert report.reclaimed_bytes > 0  # 50 rows deleted, 60 rewritten: VACUUM returns their pages
        assert report.index_entries_before["vector_deleted_marks"] > 0  # deleted, still in the graph
        assert report.index_entries_after["vector_deleted_marks"] == 0
        assert report.index_entries_after["vectors"] == len(kept)
        assert report.rows_removed["vector_changes"] > 0
        assert (
            report.index_entries_after["fulltext_segment_rows"] <= report.index_entries_before["fulltext_segment_rows"]
        )
    else:
        assert report.rows_removed["memories"] >= len(gone)  # the deleted rows' dead versions vacuumed
        assert set(report.index_entries_after) >= {"memories_embedding_hnsw", "memories_tsv_idx"}
    # writes after a compaction are found as before
    late = _rec(embedder, "written after the compaction: a lighthouse keeper")
    st.insert([late])
    assert st.vector_search(late.embedding, MemoryFilter(), 1)[0].id == late.id
    assert late.id in {h.id for h in st.text_search("lighthouse keeper", MemoryFilter(), 5)}
    again = st.compact()  # idempotent: nothing left to reclaim but it runs
    assert again.index_entries_after.get("vector_deleted_marks", 0) == 0


def test_compact_refuses_to_run_inside_a_transaction(store: Store) -> None:
    with pytest.raises(InvalidInputError, match="transaction"), store.transaction():
        store.compact()
