"""Optional LLM: an OpenAI-compatible chat client answering JSON objects (retries, circuit breaker),
or the official ``openai`` client (sync or async) through :class:`OpenAIChat`."""

from reverie.llm.client import ChatJSON, LLMClient, make_llm
from reverie.llm.official import OpenAIChat, as_llm

__all__ = ["ChatJSON", "LLMClient", "OpenAIChat", "as_llm", "make_llm"]
