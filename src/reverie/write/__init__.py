"""The write path (DESIGN.md): observer → buffer → formation → gate → score → store.

Every stage is LLM-primary with a deterministic heuristic fallback (seed 001); the
:class:`~reverie.write.pipeline.WritePipeline` composes them and records each decision.
"""
