"""reverie inside agent frameworks — thin optional adapters over :class:`reverie.Memory`.

Each module imports its framework only when used and says what to install when it is missing:

* :mod:`reverie.integrations.langgraph` — ``ReverieStore``, a LangGraph ``BaseStore`` (sync and
  async): ``pip install '.[langgraph]'`` (from a checkout of reverie)
* :mod:`reverie.integrations.langchain` — ``ReverieRetriever``, a LangChain retriever:
  ``pip install '.[langchain]'``
* :mod:`reverie.integrations.openai_agents` — ``memory_tools``, function tools for the OpenAI
  Agents SDK: ``pip install '.[openai-agents]'``
"""

from __future__ import annotations

import importlib
from types import ModuleType

from reverie.errors import MissingDependencyError, install_extra


def require(module: str, extra: str) -> ModuleType:
    """Import a framework module or raise a clear :class:`MissingDependencyError`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"this integration needs {module.split('.')[0]}: {install_extra(extra)}") from exc


__all__ = ["require"]
