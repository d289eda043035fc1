"""The write path: observer → buffer → formation → gate → score → store.

Every stage is LLM-primary with a deterministic heuristic fallback; the
:class:`~reverie.write.pipeline.WritePipeline` composes them and records each decision.
"""
