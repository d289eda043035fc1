"""One BLAS thread for query-sized numeric work.

On small machines (2 cores) a multi-threaded BLAS makes the small matrix products of a
single search slower, not faster: the threads contend. The search
path and the embedding of a handful of texts run under :func:`single_blas_thread`; batch work
(bulk embedding, index builds) keeps the library's default. The controller is built once, so
setting a limit is cheap.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from typing import Any

_lock = threading.Lock()
_controller: Any = None


def single_blas_thread() -> AbstractContextManager[Any]:
    """A context manager limiting BLAS libraries to one thread while it is open."""
    global _controller
    if _controller is None:
        with _lock:
            if _controller is None:
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
    limited: AbstractContextManager[Any] = _controller.limit(limits=1, user_api="blas")
    return limited


__all__ = ["single_blas_thread"]
