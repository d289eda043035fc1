"""A store remembers which embedder wrote its vectors; another embedder is refused until ``reembed`` moved
the store (resumable, with progress), on both backends. Two hash embedders with different names stand for
two models (same dimension, unrelated vector spaces)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reverie import EmbedderMismatchError, Memory, SettableClock
from reverie.embed import identity_of, space
from reverie.embed.testing import HashEmbedder
from reverie.model import Precision
from reverie.store.base import MemoryFilter

TEXTS = [f"memory number {i} about topic {i % 7}" for i in range(23)]


class OtherModel(HashEmbedder):
    """A different model of the same dimension: vectors of another space (a reversed hash feature order)."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
        self.name = f"other-{dim}"

    def embed(self, texts: Sequence[str]) -> Any:
        return np.ascontiguousarray(super().embed(texts)[:, ::-1])


class Interrupted(Exception):
    pass


class FailsAfter(OtherModel):
    """The other model, failing on its ``n``-th call (a re-embedding interrupted half-way)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    def embed(self, texts: Sequence[str]) -> Any:
        self.left -= 1
        if self.left < 0:
            raise Interrupted
        return super().embed(texts)


def _open(target: str, tmp_path: Path, embedder: Any, **kw: Any) -> Memory:
    return Memory(
        target,
        config={"opslog": {"path": str(tmp_path / "ops.jsonl")}},
        embedder=embedder,
        clock=SettableClock(datetime(2025, 3, 1, tzinfo=UTC)),
        **kw,
    )


def _fill(target: str, tmp_path: Path) -> list[str]:
    with _open(target, tmp_path, HashEmbedder(64)) as m:
        return [r.id for r in m.add_many(TEXTS, user_id="u", infer=False)]


def test_the_store_records_its_embedder_and_refuses_another(store_target: str, tmp_path: Path) -> None:
    _fill(store_target, tmp_path)
    with _open(store_target, tmp_path, HashEmbedder(64)) as m:
        assert m.store.get_state(space.IDENTITY_KEY) == identity_of(HashEmbedder(64))
    with pytest.raises(EmbedderMismatchError) as info:
        _open(store_target, tmp_path, OtherModel())
    message = str(info.value)
    assert "hash-64" in message and "other-64" in message and "reverie reembed" in message


def test_opened_to_reembed_it_refuses_everything_else_until_done(store_target: str, tmp_path: Path) -> None:
    ids = _fill(store_target, tmp_path)
    m = _open(store_target, tmp_path, OtherModel(), reembed=True)
    try:
        with pytest.raises(EmbedderMismatchError, match="reembed"):
            m.search("memory number 3", user_id="u")
        seen: list[tuple[int, int]] = []
        report = m.reembed(batch_size=5, progress=lambda done, total: seen.append((done, total)))
        assert report["reembedded"] == report["total"] == len(TEXTS) and not report["resumed"]
        assert report["source"]["model"] == "hash-64" and report["target"]["model"] == "other-64"
        assert seen[0] == (0, len(TEXTS)) and seen[-1] == (len(TEXTS), len(TEXTS))
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)
        stored = m.store.embeddings(ids)
        fresh = OtherModel().embed(TEXTS)
        assert all(np.allclose(stored[i], fresh[n], atol=1e-6) for n, i in enumerate(ids))
        assert m.search("memory number 3 about topic 3", user_id="u", k=1)[0].memory.id == ids[3]
    finally:
        m.close()
    with pytest.raises(EmbedderMismatchError):
        _open(store_target, tmp_path, HashEmbedder(64))
    with _open(store_target, tmp_path, OtherModel()) as m:
        assert m.reembed()["already_current"]


def test_an_interrupted_reembedding_resumes_where_it_stopped(store_target: str, tmp_path: Path) -> None:
    ids = _fill(store_target, tmp_path)
    m = _open(store_target, tmp_path, FailsAfter(2), reembed=True)
    with pytest.raises(Interrupted):
        m.reembed(batch_size=5)
    m.close()
    with pytest.raises(EmbedderMismatchError, match="under way"):  # neither embedder may use it now
        _open(store_target, tmp_path, HashEmbedder(64))
    with pytest.raises(EmbedderMismatchError, match="under way"):
        _open(store_target, tmp_path, OtherModel())
    counting = FailsAfter(100)
    with _open(store_target, tmp_path, counting, reembed=True) as m:
        report = m.reembed(batch_size=5)
        assert report["resumed"] and report["reembedded"] == len(TEXTS) - 10 and report["total"] == len(TEXTS)
        assert 100 - counting.left == 3  # the three batches left, not the two already written
        stored = m.store.embeddings(ids)
        fresh = OtherModel().embed(TEXTS)
        assert all(np.allclose(stored[i], fresh[n], atol=1e-6) for n, i in enumerate(ids))
    _open(store_target, tmp_path, OtherModel()).close()


def test_reembedding_keeps_each_memorys_precision(store_target: str, tmp_path: Path) -> None:
    ids = _fill(store_target, tmp_path)
    with _open(store_target, tmp_path, HashEmbedder(64)) as m:
        assert m.store.set_embedding_precision([(ids[0], Precision.INT8, None)]) == [ids[0]]
    with _open(store_target, tmp_path, OtherModel(), reembed=True) as m:
        m.reembed()
        rec = m.store.get([ids[0]])[ids[0]]
        assert rec.embedding_precision is Precision.INT8
        assert float(rec.embedding @ OtherModel().embed([TEXTS[0]])[0]) > 0.99


def test_a_store_without_a_recorded_embedder_is_checked_by_its_vectors(store_target: str, tmp_path: Path) -> None:
    _fill(store_target, tmp_path)
    with _open(store_target, tmp_path, HashEmbedder(64)) as m:
        m.store.set_state(space.IDENTITY_KEY, None)  # as written before identities were recorded
    with pytest.raises(EmbedderMismatchError, match="not recorded"):
        _open(store_target, tmp_path, OtherModel())
    with _open(store_target, tmp_path, HashEmbedder(64)) as m:  # its own vectors: recorded now
        assert m.store.get_state(space.IDENTITY_KEY)["model"] == "hash-64"


def test_another_dimension_is_refused(store_target: str, tmp_path: Path) -> None:
    _fill(store_target, tmp_path)
    with pytest.raises(Exception, match="64-dimensional"):
        _open(store_target, tmp_path, HashEmbedder(32), reembed=True)


def test_scan_resumes_after_an_id(store: Any) -> None:
    from reverie.model import MemoryRecord

    recs = [MemoryRecord(f"text {i}", user_id="u") for i in range(7)]
    store.insert(recs)
    ordered = sorted(r.id for r in recs)
    flt = MemoryFilter.everything()
    got = [r.id for batch in store.scan(flt, batch_size=2, after=ordered[2]) for r in batch]
    assert got == ordered[3:]
    assert [r.id for batch in store.scan(flt, after=ordered[-1]) for r in batch] == []


@pytest.mark.model
@pytest.mark.minilm
def test_cli_reembed_moves_a_minilm_store_to_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store written with all-MiniLM-L6-v2 (the earlier default) is refused by the default e5-small until
    `reverie reembed` moved it; then the default finds its memories."""
    from typer.testing import CliRunner

    from reverie.cli import app

    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    monkeypatch.setenv("REVERIE_EMBEDDING__LOCAL_MODEL", "minilm")
    for text in ("Maya is allergic to penicillin", "The office moves to Berlin next spring"):
        assert runner.invoke(app, ["add", text, "-u", "maya", "--db", db, "--verbatim"]).exit_code == 0
    monkeypatch.delenv("REVERIE_EMBEDDING__LOCAL_MODEL")
    refused = runner.invoke(app, ["search", "allergy", "-u", "maya", "--db", db])
    assert refused.exit_code == 1 and "all-MiniLM-L6-v2" in refused.output and "multilingual-e5-small" in refused.output
    moved = runner.invoke(app, ["reembed", "--db", db])
    assert moved.exit_code == 0, moved.output
    assert "re-embedded 2 of 2 memories with multilingual-e5-small (was all-MiniLM-L6-v2)" in moved.output
    found = runner.invoke(app, ["search", "What is Maya allergic to?", "-u", "maya", "--db", db, "--json"])
    assert found.exit_code == 0 and "penicillin" in found.output.split("Berlin")[0]
