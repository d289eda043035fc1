"""Long-term memory for the OpenAI Agents SDK: function tools over :class:`reverie.Memory`.

```python
from agents import Agent, Runner
from reverie import AsyncMemory
from reverie.integrations.openai_agents import memory_tools

mem = AsyncMemory("memory.db")
agent = Agent(name="assistant", instructions="Use recall before answering; remember what matters.",
              tools=memory_tools(mem, user_id="maya"))
result = await Runner.run(agent, "I'm allergic to penicillin")
```

Three tools: ``remember`` (``Memory.add``: the write path decides create, update, supersede or
skip), ``recall`` (``Memory.search``: the best memories with their ids) and ``mark_outdated``
(``Memory.invalidate``: a memory that is no longer true is kept but no longer recalled). Without a
fixed ``user_id``, each run's context names the user (``Runner.run(agent, text,
context={"user_id": "maya"})``, or any context object with a ``user_id`` attribute), so one agent
serves many users with their memories kept apart. The tools await an :class:`~reverie.AsyncMemory`:
the event loop never waits for the store or the model.
"""

from __future__ import annotations

from typing import Any

from reverie.aio import AsyncMemory
from reverie.errors import InvalidInputError, MissingDependencyError, ReverieError, install_extra
from reverie.memory import Memory

try:
    from agents import RunContextWrapper, function_tool
except ImportError as exc:  # pragma: no cover - the extra is installed in the test environment
    raise MissingDependencyError(f"memory_tools needs the OpenAI Agents SDK: {install_extra('openai-agents')}") from exc


def _scope(ctx: Any, name: str, fixed: str | None) -> str | None:
    if fixed is not None:
        return fixed
    context = getattr(ctx, "context", None)
    value = context.get(name) if isinstance(context, dict) else getattr(context, name, None)
    return value if isinstance(value, str) else None


def memory_tools(
    memory: Memory | AsyncMemory,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    k: int = 5,
) -> list[Any]:
    """``[remember, recall, mark_outdated]`` as Agents SDK function tools over ``memory`` (see the
    module docs). Reverie's errors (bad input, an unknown id) go back to the model as the tool's
    answer, so it can correct itself; nothing is written when a call is refused."""
    amem = memory if isinstance(memory, AsyncMemory) else AsyncMemory(memory=memory)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError("k must be a positive integer")

    def scope(ctx: Any) -> dict[str, str | None]:
        user = _scope(ctx, "user_id", user_id)
        if user is None:
            raise InvalidInputError("no user: pass user_id to memory_tools or put user_id in the run context")
        return {"user_id": user, "agent_id": _scope(ctx, "agent_id", agent_id)}

    @function_tool
    async def remember(ctx: RunContextWrapper[Any], fact: str) -> str:
        """Remember a fact about the user worth keeping across conversations: a preference, a decision,
        a plan, a correction. One self-contained statement, e.g. "Maya is allergic to penicillin".

        Args:
            fact: The statement to remember.
        """
        try:
            res = await amem.add(fact, session_id=_scope(ctx, "session_id", session_id), **scope(ctx))
        except ReverieError as exc:
            return f"not remembered: {exc}"
        return f"{res.action.value.lower()}: {res.reason} (id {res.id})" if res.id else f"not stored: {res.reason}"

    @function_tool
    async def recall(ctx: RunContextWrapper[Any], query: str) -> str:
        """Recall what you know about the user that is relevant to a question, best first, with ids.

        Args:
            query: What you want to know, e.g. "what is the user allergic to?".
        """
        try:
            hits = await amem.search(query, k=k, session_id=_scope(ctx, "session_id", session_id), **scope(ctx))
        except ReverieError as exc:
            return f"recall failed: {exc}"
        if not hits:
            return "nothing remembered about that"
        return "\n".join(f"- {h.memory.content} (id {h.memory.id}, score {h.score:.2f})" for h in hits)

    @function_tool
    async def mark_outdated(ctx: RunContextWrapper[Any], memory_id: str, reason: str) -> str:
        """Mark a remembered fact as no longer true (it is kept in the history but no longer recalled).
        Use it when the user corrects something you recalled.

        Args:
            memory_id: The id shown by recall.
            reason: Why it is no longer true.
        """
        try:
            rec = await amem.peek(memory_id)
            if rec.user_id != scope(ctx)["user_id"]:
                return f"no memory with id {memory_id} for this user"
            await amem.invalidate(rec.id, reason)
        except ReverieError as exc:
            return f"not changed: {exc}"
        return f"marked outdated: {rec.content}"

    return [remember, recall, mark_outdated]


__all__ = ["memory_tools"]
