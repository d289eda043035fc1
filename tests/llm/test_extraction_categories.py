"""LLM extraction keeps the lifecycle design's categories (commitment, relationship, …) as given, and the
commitment it extracts decays as a commitment (scripted local server, both backends)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reverie import Memory, SettableClock, Status
from reverie.embed.testing import HashEmbedder


def test_llm_extracted_categories_are_kept(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any, script_by_prompt: Any
) -> None:
    chat_server.script = script_by_prompt(
        {
            "standalone": {
                "facts": [
                    {
                        "text": "User promised Maria to send the signed contract by 2025-03-07",
                        "category": "commitment",
                        "temporal_type": "time_bounded",
                        "valid_until": "2025-03-07T00:00:00+00:00",
                        "entities": ["Maria"],
                        "confidence": 0.9,
                    },
                    {
                        "text": "Maria is User's business partner",
                        "category": "relationship",
                        "temporal_type": "persistent",
                        "valid_until": None,
                        "entities": ["Maria"],
                        "confidence": 0.9,
                    },
                ]
            },
            "contradict": {"contradicts": False},
            "relation": {"relations": []},
        }
    )
    cfg = {
        "opslog": {"path": str(tmp_path / "ops.jsonl")},
        "llm": {"base_url": chat_server.url, "timeout_s": 0.5, "retries": 0},
    }
    with Memory(store_target, config=cfg, clock=clock, embedder=HashEmbedder(64)) as m:
        res = m.add(
            [{"role": "user", "content": "I promise Maria, my business partner, the signed contract by Friday."}],
            user_id="u",
            session_id="s",
        )
        recs = m.store.get(list(res.ids))
        by_cat = {r.category: r for r in recs.values()}
        assert set(by_cat) == {"commitment", "relationship"}
        commitment = by_cat["commitment"].id
        clock.advance(days=10)  # past its valid_until: resolved, kept through the commitment decay period
        m.dream(steps=["foresight"])
        assert m.store.get([commitment])[commitment].status is Status.ACTIVE
        clock.advance(days=m.settings.dream.forgetting.commitment_decay_days)
        m.dream(steps=["foresight"])
        assert m.store.get([commitment])[commitment].status is not Status.ACTIVE
