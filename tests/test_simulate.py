"""``reverie simulate``: a synthetic agent workload on a settable clock, its plot and its summary."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reverie import InvalidInputError, Memory, MissingDependencyError
from reverie.cli import app
from reverie.dream.schedule import COUNTER_KEY
from reverie.embed.testing import HashEmbedder
from reverie.model import RelationType
from reverie.simulate import PLOT_INSTALL_HINT, SimulationConfig, Workload, simulate
from reverie.store.base import MemoryFilter

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("sim")
    summary = simulate(out, cfg=SimulationConfig(days=21, seed=3))
    return out, summary


@pytest.mark.plot
def test_png_is_a_real_plot(run: tuple[Path, dict[str, Any]]) -> None:
    out, summary = run
    png = out / "simulation.png"
    assert summary["files"]["plot"] == str(png)
    data = png.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 20_000
    from PIL import Image

    with Image.open(png) as img:
        img.verify()
    with Image.open(png) as img:
        assert img.format == "PNG" and img.size == (1000, 700)
        colours = img.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 50  # areas, lines, text — not a blank canvas


@pytest.mark.plot
def test_summary_agrees_with_the_store(run: tuple[Path, dict[str, object]]) -> None:
    out, summary = run
    saved = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert saved == json.loads(json.dumps(summary, default=str))
    timeline = json.loads((out / "timeline.json").read_text(encoding="utf-8"))
    assert [t["day"] for t in timeline] == list(range(1, 22))
    final = saved["final"]
    with Memory(out / "simulation.db", embedder=HashEmbedder(384), config={"opslog": {"enabled": False}}) as mem:
        stats = mem.stats(user_id="sim-user")
        assert final["total"] == stats["total"] == timeline[-1]["total"] > 0
        assert {k: v for k, v in final["by_status"].items() if v} == stats["by_status"]
        active = {r["layer"]: r["count"] for r in stats["rows"] if r["status"] == "active"}
        assert {k: v for k, v in final["active_by_layer"].items() if v} == active
        assert final["by_status"] == timeline[-1]["by_status"]
        scope = MemoryFilter.everything(user_id="sim-user", all_users=False)
        records = [r for batch in mem.store.scan(scope) for r in batch]
        assert sum(final["by_store"].values()) == len(records)
        assert final["by_store"].get("cold", 0) == saved["forgotten"]["cold"] == timeline[-1]["cold"]
        # what the promote step reported equals what the history recorded, event for event
        dream_moves = sum(
            1
            for r in records
            for e in mem.store.history(r.id)
            if e.actor == "dream" and e.event in ("promoted", "demoted")
        )
        assert saved["steps"]["promote"]["changed"] == dream_moves
        assert saved["promoted_by"].get("dream", 0) <= dream_moves
        assert sum(saved["promoted"].values()) == sum(saved["promoted_by"].values()) > 0
        links = mem.store.scope_relations(scope, types=frozenset({RelationType.SUMMARIZES}))
        assert saved["summarizes_links"] == {
            "summaries": len({r.src_id for r in links}),
            "members": len({r.dst_id for r in links}),
            "links": len(links),
        }
        by_id = {r.id: r for r in records}
        originals = [r for r in records if r.superseded_by in by_id and by_id[r.superseded_by].write_source == "dream"]
        assert saved["consolidated"]["originals"] == len(originals)
        assert saved["consolidated"]["summaries"] == len({r.superseded_by for r in originals})
        assert saved["consolidated"]["superseded"] == stats["by_status"].get("superseded", 0) >= len(originals)
        assert sum(saved["dream_written"].values()) == sum(r.write_source == "dream" for r in records)
        # the automatic ticks: the durable counter says how many were due
        every = mem.settings.dream.schedule.tick_every
        count = mem.store.get_state(COUNTER_KEY + "sim-user")["count"]
        assert saved["workload"]["ticks"] == count // every
    w = saved["workload"]
    assert w["dreams"] == 21 and w["sessions"] > 10 and w["messages"] > 50 and w["searches"] > 10
    assert sum(w["write_actions"].values()) >= w["messages"]  # every message gets at least one outcome
    assert w["write_actions"].get("CREATE", 0) > 0 and w["write_actions"].get("SKIP", 0) > 0
    assert saved["steps"]["decay"]["runs"] >= 21


def test_the_workload_is_deterministic_for_a_seed() -> None:
    def script(seed: int) -> list[tuple[str, str, str]]:
        work = Workload(SimulationConfig(days=30, seed=seed))
        return [(t.at.isoformat(), t.role, t.text) for d in range(30) for s in work.day(d) for t in s.turns]

    first = script(5)
    assert first == script(5) and first != script(6)
    work = Workload(SimulationConfig(days=30, seed=5))
    kinds = {t.kind.split(":")[0] for d in range(30) for s in work.day(d) for t in s.turns}
    assert {"activity", "core", "plan", "small_talk", "assistant", "search", "correction"} <= kinds


@pytest.mark.plot
def test_two_runs_with_one_seed_do_the_same(tmp_path: Path) -> None:
    cfg = SimulationConfig(days=5, seed=11)
    a = simulate(tmp_path / "a", cfg=cfg)
    b = simulate(tmp_path / "b", cfg=cfg)
    assert a["workload"] == b["workload"]
    assert a["final"] == b["final"]


@pytest.mark.plot
def test_bad_input_is_refused(run: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    out, _ = run
    with pytest.raises(InvalidInputError, match="exists"):
        simulate(out, cfg=SimulationConfig(days=1))
    with pytest.raises(InvalidInputError, match="days"):
        SimulationConfig(days=0)
    with pytest.raises(InvalidInputError, match="embedder"):
        simulate(tmp_path / "x", cfg=SimulationConfig(days=1), embedder="word2vec")


def test_missing_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install '\.\[plot\]' in reverie's checkout"):
        simulate(tmp_path / "nomp", cfg=SimulationConfig(days=1))
    assert not (tmp_path / "nomp" / "simulation.db").exists()  # refused before anything was written
    res = CliRunner().invoke(app, ["simulate", "--days", "1", "--out", str(tmp_path / "nomp")])
    assert res.exit_code == 1 and PLOT_INSTALL_HINT in " ".join(res.output.split())


@pytest.mark.plot
def test_cli_simulate(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["simulate", "--days", "3", "--seed", "2", "--out", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    for word in ("3 days simulated", "promoted:", "consolidated:", "forgotten:", "simulation.png"):
        assert word in res.output
    assert (tmp_path / "cli" / "simulation.png").read_bytes()[:8] == PNG_MAGIC
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text(encoding="utf-8"))
    assert summary["days"] == 3 and summary["seed"] == 2
