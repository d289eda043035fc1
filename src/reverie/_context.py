"""Context shared between the async front and the engine's worker thread (no imports of weight)."""

from __future__ import annotations

import asyncio
import contextvars

#: the event loop of the AsyncMemory call running now, set on its worker thread: an async LLM client
#: makes its requests on that loop, where the client belongs
CALLER_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "reverie_caller_loop", default=None
)

__all__ = ["CALLER_LOOP"]
