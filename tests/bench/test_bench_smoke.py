"""Smoke test of the benchmark scripts: they run end to end at tiny sizes with the hash embedder
and write JSON with the expected keys and sane values. The real numbers come from running
``bench/locomo.py`` and ``bench/scale.py`` by hand (see bench/README.md)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
LOCOMO_DATA = BENCH.parent.parent / "shared" / "data" / "locomo" / "locomo_dev5.json"


def _bench_module(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


def _check_recall(block: dict[str, Any]) -> None:
    assert block["n"] > 0
    for key in ("r@5", "r@10", "r@20", "s@5", "s@10", "s@20"):
        value = block[key]
        assert isinstance(value, float)
        assert 0.0 <= value <= 1.0
    assert block["r@5"] <= block["r@10"] <= block["r@20"]


def test_parse_evidence_normalises_and_counts() -> None:
    locomo = _bench_module("locomo")
    stats = locomo.EvidenceStats()
    ids = locomo.parse_evidence(["D8:6; D9:17", "D30:05", "D", "D:11:26", "D1:3", "D1:3"], stats)
    assert ids == ["D8:6", "D9:17", "D30:5", "D11:26", "D1:3"]
    assert stats.skipped_unparseable == 1
    assert stats.normalised == 3
    assert stats.raw_entries == 6


def test_score_question() -> None:
    locomo = _bench_module("locomo")
    q = locomo.Question(0, "?", 1, ["D1:1", "D2:5"])
    ranked = [["D3:1"], ["D1:1"]] + [["D9:9"]] * 10 + [["D2:5"]]
    s = locomo.score_question(q, ranked)
    assert s["r@5"] == 0.5 and s["r@10"] == 0.5 and s["r@20"] == 1.0
    assert s["s@5"] == 0.5 and s["s@20"] == 1.0


@pytest.mark.skipif(not LOCOMO_DATA.is_file(), reason="LoCoMo data not beside the checkout")
def test_locomo_smoke(tmp_path: Path) -> None:
    locomo = _bench_module("locomo")
    out = tmp_path / "locomo.json"
    doc = locomo.main(
        [
            "--data",
            str(LOCOMO_DATA),
            "--embedder",
            "hash",
            "--hash-dim",
            "64",
            "--limit-conversations",
            "1",
            "--limit-sessions",
            "3",
            "--limit-questions",
            "15",
            "--mode",
            "both",
            "--lifecycle",
            "default,agent,off",
            "--baseline",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["benchmark"] == "locomo-retrieval"
    runs = {f"{m}:{lc}" for m in ("verbatim", "infer") for lc in ("default", "agent", "off")}
    assert set(saved["runs"]) == runs | {"baseline"}
    assert saved["category_names"]["1"] == "multi-hop"
    assert saved["k_protocol"].startswith("each recall@k from a search that asks for exactly k")
    for name in (*runs, "baseline"):
        run = saved["runs"][name]
        _check_recall(run["recall"]["all"])
        assert run["search_latency"]["p50_ms"] > 0
    off = saved["runs"]["verbatim:off"]
    assert off["memories"] == off["turns"] > 0 and "dreams" not in off
    assert off["ingest_items_per_s"] > 0
    default = saved["runs"]["verbatim:default"]
    assert default["dreams"]["runs"] >= 2  # one per day boundary passed, and the night before the questions
    assert 0.0 <= default["after_extra_dream"]["all"]["r@10"] <= 1.0
    assert 0.0 <= default["dream_made_top10_share_without_evidence"] <= 1.0
    assert default["composition"]["total"]["memories"] >= default["memories"]
    assert saved["runs"]["verbatim:agent"]["context_calls"] == saved["runs"]["verbatim:agent"]["turns"]
    assert set(saved["lifecycle_vs_off"]) == runs - {"verbatim:off", "infer:off"}
    assert saved["evidence"]["ids"] > 0
    assert "comparison" in saved and doc["conversations"] == ["conv-26"]


def test_turn_credit_gives_a_summary_one_slot_per_member_turn() -> None:
    locomo = _bench_module("locomo")
    from reverie.model import MemoryRecord
    from reverie.results import Hit

    members = [MemoryRecord(content=f"turn {i}") for i in range(3)]
    summary = MemoryRecord(
        content="summary", metadata={"consolidation": {"kind": "summary", "members": [m.id for m in members]}}
    )
    other = MemoryRecord(content="other", metadata={"turn_id": "D9:9"})
    held = {m.id: [f"D1:{i}"] for i, m in enumerate(members)}

    class Store:
        def get(self, ids: list[str]) -> dict[str, MemoryRecord]:
            return {m.id: m for m in members if m.id in ids}

    class Mem:
        store = Store()

    credit = locomo.TurnCredit(Mem(), held)
    slots = credit.slots([Hit(members[1], 1.0), Hit(summary, 0.9), Hit(other, 0.8)])
    # the member shown first keeps its own slot; the summary takes one slot per turn not shown above it
    assert slots == [["D1:1"], ["D1:0"], ["D1:2"], ["D9:9"]]


def test_scale_smoke(tmp_path: Path) -> None:
    scale = _bench_module("scale")
    out = tmp_path / "scale.json"
    doc = scale.main(
        [
            "--sizes",
            "500",
            "--backend",
            "sqlite",
            "--embedder",
            "hash",
            "--hash-dim",
            "64",
            "--queries",
            "20",
            "--warmup",
            "2",
            "--store-queries",
            "10",
            "--prototypes",
            "100",
            "--embed-sample",
            "50",
            "--gen-batch",
            "200",
            "--no-isolate",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["benchmark"] == "scale" and saved["sizes"] == [500]
    [res] = saved["results"]
    assert res["backend"] == "sqlite" and res["size"] == 500
    assert res["stored"] == 500
    assert res["load"]["items_per_s"] > 0
    for key in ("search", "vector_search", "text_search", "embed_query"):
        assert res[key]["p50_ms"] > 0
        assert res[key]["p95_ms"] >= res[key]["p50_ms"]
    assert res["search"]["n"] == 20
    assert 0.0 <= res["vector_search"]["recall_at_k_vs_exact"] <= 1.0
    assert res["add_with_embedder"]["items"] == 50
    assert res["rss_mb_after_search"] > 0
    serving = res["serving_process"]  # a fresh process opened the loaded store and searched it
    assert serving["rss_mb"] > 0 and serving["first_search_s"] > 0 and serving["search"]["n"] > 0
    assert doc["results"][0]["size"] == 500


def test_scale_bulk_data_is_deterministic_and_normalised() -> None:
    scale = _bench_module("scale")
    from reverie.embed.testing import HashEmbedder

    protos = scale.Prototypes(50, seed=3)
    protos.embed(HashEmbedder(32), None)
    a = list(scale.bulk_batches(protos, 250, 100, seed=3))
    b = list(scale.bulk_batches(protos, 250, 100, seed=3))
    assert [len(t) for t, _ in a] == [100, 100, 50]
    assert a[1][0] == b[1][0]
    import numpy as np

    assert np.allclose(np.linalg.norm(a[2][1], axis=1), 1.0, atol=1e-5)
    assert len(set(scale.make_queries(40, seed=1))) == 40


def test_dream_bench_smoke(tmp_path: Path) -> None:
    dream = _bench_module("dream")
    out = tmp_path / "dream.json"
    dream.main(
        [
            "--sizes",
            "200,400",
            "--embedder",
            "hash",
            "--hash-dim",
            "64",
            "--prototypes",
            "60",
            "--gen-batch",
            "200",
            "--batch-size",
            "100",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["benchmark"] == "dream" and saved["sizes"] == [200, 400]
    for res in saved["results"]:
        assert res["stored"] == res["size"]
        first = res["first"]
        assert list(first["steps"]) == res["steps_configured"]
        assert first["seconds"] > 0 and first["changed"] == sum(s["changed"] for s in first["steps"].values())
        assert first["steps"]["decay"]["examined"] >= res["size"]  # every memory was looked at
        assert "second" in res
    [slope] = saved["slopes"]
    assert (slope["from"], slope["to"]) == (200, 400)
    assert slope["nlogn_slope"] == pytest.approx(dream.nlogn_slope(200, 400), abs=1e-3)
    assert slope["total_slope"] is not None
    assert dream.nlogn_slope(10_000, 100_000) == pytest.approx(1.097, abs=1e-3)
    with pytest.raises(SystemExit, match="--with-1m"):
        dream.main(["--sizes", "1000000", "--embedder", "hash", "--quiet", "--out", str(out)])


@pytest.mark.skipif(not LOCOMO_DATA.is_file(), reason="LoCoMo data not beside the checkout")
def test_write_bench_smoke(tmp_path: Path) -> None:
    write = _bench_module("write")
    out = tmp_path / "write.json"
    doc = write.main(
        [
            "--data",
            str(LOCOMO_DATA),
            "--embedder",
            "hash",
            "--hash-dim",
            "64",
            "--conversations",
            "1",
            "--limit-turns",
            "60",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["benchmark"] == "write-path-throughput" and saved["path"].startswith("heuristic")
    assert saved["conversations"] == ["conv-26"] and doc["runs"].keys() == {"hash"}
    run = saved["runs"]["hash"]
    assert run["turns"] == 60 and run["observe_latency"]["n"] == 60
    assert run["messages_per_s"] > 0 and run["messages_per_s_without_embedding"] >= run["messages_per_s"]
    assert 0 < run["embed_s"] < run["seconds"] and run["embedded_texts"] > 0
    # every stored memory came from a CREATE or a SUPERSEDE (which creates the new memory)
    outcomes = run["outcomes"]
    assert run["memories_all_statuses"] == outcomes.get("CREATE", 0) + outcomes.get("SUPERSEDE", 0)
    # a turn may state several facts, each its own memory (and its own outcome)
    assert 0 < run["memories_active"] <= run["memories_all_statuses"] <= sum(outcomes.values())


@pytest.mark.model
@pytest.mark.minilm
@pytest.mark.slow
def test_embedders_bench_smoke(tmp_path: Path) -> None:
    """``bench/embedders.py`` on a tiny conversation in LoCoMo's format (written here): recall, latency,
    throughput, RSS, install size and the pipeline ratio come out for the engine's two local models."""
    data = tmp_path / "tiny.json"
    turns = [
        ("Ana", "I adopted a grey cat named Pamuk last week!"),
        ("Ben", "Nice! I started running every morning."),
        ("Ana", "My sister moved to Lisbon for a new job."),
        ("Ben", "I'm reading a novel by Orhan Pamuk."),
    ]
    data.write_text(
        json.dumps(
            [
                {
                    "sample_id": "tiny",
                    "conversation": {
                        "speaker_a": "Ana",
                        "speaker_b": "Ben",
                        "session_1_date_time": "1:56 pm on 8 May, 2023",
                        "session_1": [
                            {"speaker": s, "dia_id": f"D1:{i + 1}", "text": t} for i, (s, t) in enumerate(turns)
                        ],
                    },
                    "qa": [
                        {
                            "question": "What is the name of Ana's cat?",
                            "answer": "Pamuk",
                            "evidence": ["D1:1"],
                            "category": 4,
                        },
                        {
                            "question": "Where did Ana's sister move?",
                            "answer": "Lisbon",
                            "evidence": ["D1:3"],
                            "category": 4,
                        },
                    ],
                }
            ]
        ),
        encoding="utf-8",
    )
    bench = _bench_module("embedders")
    out = tmp_path / "embedders.json"
    bench.main(
        [
            "--data",
            str(data),
            "--only",
            "e5-int8",
            "minilm",
            "--queries",
            "2",
            "--passages",
            "4",
            "--pipeline",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    saved = json.loads(out.read_text(encoding="utf-8"))
    for name in ("e5-int8", "minilm"):
        c = saved["candidates"][name]
        assert 0.0 <= c["dense"]["r@5"] <= c["dense"]["r@10"] <= 1.0 and c["dense"]["questions"] == 2
        assert c["query_ms"]["p50_ms"] > 0 and c["passages_per_s"] > 0 and c["install_mb"] > 0
        assert c["rss"]["after_500_mb"] > 0
        assert saved["pipeline"][name]["ratio_p50"] > 0
    assert saved["candidates"]["e5-int8"]["dense"]["r@5"] == 1.0  # both questions have an obvious answer


def test_read_latency_after_a_dream_smoke(tmp_path: Path) -> None:
    """``bench/read_latency.py --after-dream``: a small store, a copy of it after one dream 90 days on (built once,
    then reused), and searches at that time."""
    rl = _bench_module("read_latency")
    db = tmp_path / "rl.db"
    argv = ["--db", str(db), "--size", "300", "--queries", "4", "--rounds", "1", "--after-dream", "90"]
    doc = rl.main([*argv, "--out", str(tmp_path / "a.json")])
    info = doc["after_dream"]
    assert info["days"] == 90 and info["changed"]["decay"] == 300
    assert sum(info["composition"].values()) >= 300 and any(k.startswith("cold ") for k in info["composition"])
    assert doc["latency"]["defaults"]["n"] == 4 and doc["latency"]["defaults"]["p50_ms"] > 0
    assert (tmp_path / "rl.dream90d.db").exists() and db.exists()
    again = rl.main([*argv, "--out", str(tmp_path / "b.json")])
    assert again["after_dream"] == info  # the dreamed copy is reused, not dreamed again


@pytest.mark.skipif(not LOCOMO_DATA.is_file(), reason="LoCoMo data not beside the checkout")
def test_sign_bits_bench_smoke(tmp_path: Path) -> None:
    bench = _bench_module("sign_bits")
    out = tmp_path / "sign_bits.json"
    doc = bench.main(["--conversations", "1", "--prototypes", "100", "--out", str(out)])
    assert json.loads(out.read_text(encoding="utf-8"))["benchmark"] == "sign-bits-prefilter"
    assert doc["corpus"] > 400 and doc["queries"] > 100
    zero, mean = doc["capture"]["around zero"], doc["capture"]["around the mean"]
    assert set(zero) == set(mean) == {"top10@200", "top10@400", "top60@200", "top60@400"}
    for row in (zero, mean):
        assert all(0.0 <= v <= 1.0 for v in row.values())
        assert row["top10@200"] <= row["top10@400"] and row["top60@200"] <= row["top60@400"]
    # the default embedder's vectors share one direction: bits around their mean prefilter better
    assert mean["top60@200"] > zero["top60@200"]


@pytest.mark.model
def test_embed_drift_bench_smoke(tmp_path: Path) -> None:
    """``bench/embed_drift.py`` on a few LoCoMo turns: every pair of variants is compared, the shipped int8
    session equals the exact integer arithmetic, and the earlier 8-bit weights do not on this machine's kernels
    only if the machine saturates (any value in [0, 1] is accepted there)."""
    bench = _bench_module("embed_drift")
    out = tmp_path / "drift.json"
    doc = bench.main(["--texts", "12", "--queries", "2", "--out", str(out), "--quiet"])
    assert json.loads(out.read_text(encoding="utf-8"))["texts"] == 12
    assert set(doc["drift"]) == {f"{a} | {b}" for a, b, _ in bench.PAIRS}
    for row in doc["drift"].values():
        assert 0.0 <= row["text_mean"] <= row["text_max"] <= 1.0 and 0.0 <= row["pair_max"] <= 2.0
    assert doc["drift"]["int8 | int8 exact"]["text_max"] < 1e-6
    assert set(doc["speed"]) == {"int8 (1 thread)", "int8, full range (before)", "q4 (1 thread)", "fp32"}


@pytest.mark.postgres
def test_cold_search_bench_smoke(tmp_path: Path, pg_server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench/cold_search.py``: the same small store on SQLite and PostgreSQL (copied with COPY), each dreamed 90
    days on, searched alternately; the cold store's recall against the exact ranking."""
    monkeypatch.setenv("REVERIE_PG_URL", pg_server_url)
    bench = _bench_module("cold_search")
    argv = ["--sizes", "300", "--queries", "3", "--rounds", "1", "--recall", "3", "--workdir", str(tmp_path)]
    doc = bench.main([*argv, "--out", str(tmp_path / "cold.json")])
    res = doc["results"][0]
    assert res["pg_load"]["memories"] == 300
    assert res["pg_dream"]["composition"] == res["sqlite_dream"]["composition"]  # one dream, either backend
    for part in ("search", "cold_vector_search"):
        assert res[part]["sqlite"]["n"] == res[part]["postgres"]["n"] == 3
        assert res[part]["postgres_over_sqlite"] > 0
    assert res["recall"]["cold_rows"] > 0 and 0.9 <= res["recall"]["store top10"] <= 1.0


@pytest.mark.postgres
def test_tenants_bench_smoke(tmp_path: Path, pg_server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_PG_URL", pg_server_url)
    bench = _bench_module("tenants")
    argv = ["--users", "6", "--per-user", "20", "--searches", "4", "--adds", "2", "--batch", "3"]
    doc = bench.main([*argv, "--workdir", str(tmp_path), "--out", str(tmp_path / "t.json")])
    res = doc["results"][0]
    assert res["sqlite_load"]["memories"] == res["pg_load"]["memories"] == 120
    for name in ("sqlite", "postgres"):
        assert res["search"][name]["n"] == 4 and res["add"][name]["per_s"] > 0
        assert res["add_many"][name]["memories_per_s"] > 0


@pytest.mark.postgres
@pytest.mark.plot
def test_load_bench_smoke(tmp_path: Path, pg_server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench/load.py``: real servers on loopback (two workers on PostgreSQL, one on SQLite), a bounded load, a dream
    in another process, no error, the plot written, and nothing left running."""
    monkeypatch.setenv("REVERIE_PG_URL", pg_server_url)
    bench = _bench_module("load")
    plot = tmp_path / "load.png"
    argv = ["--users", "4", "--per-user", "10", "--clients", "4", "--rates", "2", "--phase-s", "3"]
    doc = bench.main([*argv, "--workdir", str(tmp_path), "--plot", str(plot), "--out", str(tmp_path / "l.json")])
    assert plot.stat().st_size > 1000
    for res in doc["results"]:
        assert res["phases"][0]["requests"] > 0 and res["saturation"]["requests"] > 0
        assert sum(p["errors"] for p in res["phases"]) + res["saturation"]["errors"] == 0
        assert res["saturation"]["dream"]["exit_code"] is not None  # the dream process ended (or was stopped)
    assert {r["workers"] for r in doc["results"]} == {1, 2}


def test_locomo_diagnose_counts_characters_and_keeps_an_unseen_third(tmp_path: Path) -> None:
    locomo = _bench_module("locomo")
    splits = [locomo.split_of("conv-26", i) for i in range(300)]
    assert splits == [locomo.split_of("conv-26", i) for i in range(300)]  # fixed, not drawn per run
    assert 70 < splits.count("unseen") < 130
    out = tmp_path / "locomo.json"
    small = ["--data", str(LOCOMO_DATA), "--embedder", "hash", "--hash-dim", "64", "--limit-conversations", "1"]
    small += ["--limit-sessions", "3", "--limit-questions", "30", "--mode", "verbatim", "--lifecycle", "off"]
    locomo.main([*small, "--diagnose", "--out", str(out), "--quiet"])
    run = json.loads(out.read_text(encoding="utf-8"))["runs"]["off"]
    rec = run["recall"]
    assert rec["all"]["c@10"] >= rec["all"]["c@5"] > 0
    assert set(rec["by_split"]) == {"tune", "unseen"}
    n = rec["by_split"]["tune"]["all"]["n"] + rec["by_split"]["unseen"]["all"]["n"]
    assert n == rec["all"]["n"]
    stages = {"not_stored", "channels", "fusion", "screen", "rank"}
    for table in run["missed_at_10"].values():
        for row in table.values():
            assert set(row["stages"]) <= stages and sum(row["stages"].values()) == row["missed"]
