"""A LangGraph ``BaseStore`` over reverie: ``create_react_agent(model, tools, store=ReverieStore(mem))``.

LangGraph's long-term memory is a key-value store of JSON values under namespaces (tuples of
strings), with semantic search. ``ReverieStore`` keeps each item as one reverie memory:

* the **user** scope is one element of the namespace (``user_level``, default 1: LangGraph's and
  langmem's ``("memories", user_id)`` convention), or a fixed ``user_id`` for every item; so one
  user's items are isolated in their own partition, as every reverie memory is;
* the text reverie embeds and searches is the value's ``content`` (or ``text``, ``memory``) field,
  the fields named by ``put(..., index=[...])``, or else the whole value as JSON; the value itself,
  the namespace and the key are kept in the memory's metadata;
* items are written verbatim (a put replaces the value; the write path does not merge two keys),
  and pinned by default, so the dream cycle never merges or forgets them: a LangGraph item lives
  until it is deleted. ``pin=False`` lets consolidation and forgetting act on them.
* ``delete`` is reverie's ``forget`` (a hard delete, logged).

Every operation runs on one worker thread (an :class:`~reverie.AsyncMemory`), so the synchronous
and the asynchronous API may be used together. A ``get`` or a ``put`` finds an item through the
metadata of its user's memories (a scan of that partition: fine for thousands of items per user).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from reverie.aio import AsyncMemory
from reverie.integrations import require
from reverie.memory import Memory
from reverie.model import MemoryRecord

_base = require("langgraph.store.base", "langgraph")
BaseStore = _base.BaseStore
GetOp, PutOp, SearchOp, ListNamespacesOp = _base.GetOp, _base.PutOp, _base.SearchOp, _base.ListNamespacesOp
Item, SearchItem, MatchCondition = _base.Item, _base.SearchItem, _base.MatchCondition

#: the metadata keys an item is kept under
TAG, NS, KEY, VALUE = "langgraph_store", "langgraph_namespace", "langgraph_key", "langgraph_value"
#: every status and store: an item is found by get until it is deleted
_ANYWHERE = {
    "status": ["active", "superseded", "dormant", "archived", "expired", "invalidated"],
    "store": ["hot", "cold"],
}
_PAGE = 500
_TEXT_FIELDS = ("content", "text", "memory")


def _ns_path(namespace: Sequence[str]) -> str:
    return json.dumps(list(namespace), ensure_ascii=False)


def _level(i: int) -> str:
    return f"langgraph_ns_{i}"


class ReverieStore(BaseStore):  # type: ignore[misc, valid-type]
    """LangGraph's ``BaseStore`` with reverie as the storage and search (see the module docs).

    ``memory`` is a :class:`~reverie.Memory` or an :class:`~reverie.AsyncMemory` (pass the
    ``AsyncMemory`` your code already uses, so that every call shares its worker thread)."""

    supports_ttl = False

    def __init__(
        self,
        memory: Memory | AsyncMemory,
        *,
        user_level: int | None = 1,
        user_id: str | None = None,
        agent_id: str | None = None,
        pin: bool = True,
    ) -> None:
        from reverie.errors import InvalidInputError

        if user_id is not None and user_level is not None and user_level != 1:
            raise InvalidInputError("give either user_level or user_id, not both")
        if user_level is not None and (
            isinstance(user_level, bool) or not isinstance(user_level, int) or user_level < 0
        ):
            raise InvalidInputError(
                "user_level must be a non-negative integer (the namespace element that is the user) or None"
            )
        self.amem = memory if isinstance(memory, AsyncMemory) else AsyncMemory(memory=memory)
        self.memory = self.amem.memory
        self.user_level = None if user_id is not None else user_level
        self.user_id = user_id
        self.agent_id = agent_id
        self.pin = pin

    # scopes ------------------------------------------------------------------------------
    def _user(self, namespace: Sequence[str]) -> str | None:
        if self.user_id is not None:
            return self.user_id
        if self.user_level is not None and len(namespace) > self.user_level:
            return str(namespace[self.user_level])
        return None

    def _prefix_scope(self, prefix: Sequence[str]) -> tuple[str | None, bool]:
        """(user, all_users) a namespace prefix reaches: one user's partition when the prefix names
        the user, every partition otherwise."""
        if self.user_id is not None:
            return self.user_id, False
        if self.user_level is not None and len(prefix) > self.user_level and prefix[self.user_level] != "*":
            return str(prefix[self.user_level]), False
        return None, True

    def _filters(self, prefix: Sequence[str], *, exact: bool = False, anywhere: bool = False) -> dict[str, Any]:
        meta: dict[str, Any] = {TAG: True}
        if exact:
            meta[NS] = _ns_path(prefix)
        else:
            meta.update({_level(i): part for i, part in enumerate(prefix) if part != "*"})
        return {"metadata": meta, **(_ANYWHERE if anywhere else {})}

    # items -------------------------------------------------------------------------------
    def _find(self, namespace: Sequence[str], key: str) -> MemoryRecord | None:
        user = self._user(namespace)
        flt = self._filters(namespace, exact=True, anywhere=True)
        flt["metadata"][KEY] = key
        found = self.memory.list(user_id=user, all_users=user is None, filters=flt, limit=1)
        return found[0] if found else None

    @staticmethod
    def _item(rec: MemoryRecord, score: float | None = None, *, search: bool = False) -> Any:
        meta = rec.metadata
        fields = {
            "namespace": tuple(json.loads(meta[NS])),
            "key": meta[KEY],
            "value": meta[VALUE],
            "created_at": rec.created_at,
            "updated_at": rec.updated_at,
        }
        return SearchItem(**fields, score=score) if search else Item(**fields)

    def _text(self, value: dict[str, Any], index: Any) -> str:
        if isinstance(index, list) and index:
            texts = [t for path in index for t in _base.get_text_at_path(value, path) if t]
            if texts:
                return "\n".join(texts)
        for name in _TEXT_FIELDS:
            if isinstance(value.get(name), str) and value[name].strip():
                return str(value[name])
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    def _put(self, op: Any) -> None:
        existing = self._find(op.namespace, op.key)
        if op.value is None:
            if existing is not None:
                self.memory.forget(existing.id)
            return
        meta = {
            TAG: True,
            NS: _ns_path(op.namespace),
            KEY: op.key,
            VALUE: op.value,
            **{_level(i): part for i, part in enumerate(op.namespace)},
        }
        text = self._text(op.value, op.index)
        if existing is not None:
            self.memory.update(existing.id, text, metadata=meta, reason="LangGraph store put")
            return
        res = self.memory.add(
            text, user_id=self._user(op.namespace), agent_id=self.agent_id, metadata=meta, infer=False
        )
        if self.pin and res.id is not None:
            self.memory.pin(res.id)

    def _get(self, op: Any) -> Any:
        rec = self._find(op.namespace, op.key)
        if rec is None:
            return None
        return self._item(self.memory.get(rec.id))  # the agent read it: a recall, as Memory.get counts

    def _search(self, op: Any) -> list[Any]:
        user, all_users = self._prefix_scope(op.namespace_prefix)
        flt = self._filters(op.namespace_prefix)
        want = op.offset + op.limit
        if op.query:
            limit = self.memory.settings.limits.max_k
            k = min(limit, want * (5 if op.filter else 1))
            hits = self.memory.search(op.query, user_id=user, all_users=all_users, filters=flt, k=max(k, 1))
            pairs: list[tuple[MemoryRecord, float | None]] = [(h.memory, h.score) for h in hits]
        else:
            pairs = [(r, None) for r in self._all(user, all_users, flt, need=None if op.filter else want)]
        kept = [(r, s) for r, s in pairs if _matches(r.metadata[VALUE], op.filter)]
        return [self._item(r, s, search=True) for r, s in kept[op.offset : want]]

    def _all(self, user: str | None, all_users: bool, flt: dict[str, Any], *, need: int | None) -> list[MemoryRecord]:
        """Items in a scope, oldest first (insertion order, as LangGraph's in-memory store lists them)."""
        out: list[MemoryRecord] = []
        offset = 0
        while True:
            page = self.memory.list(
                user_id=user,
                all_users=all_users,
                filters=flt,
                limit=_PAGE,
                offset=offset,
                order_by="created_at",
                descending=False,
            )
            out += page
            offset += len(page)
            if len(page) < _PAGE or (need is not None and len(out) >= need):
                return out

    def _list_namespaces(self, op: Any) -> list[tuple[str, ...]]:
        records = self._all(None, True, self._filters((), anywhere=True), need=None)
        spaces = {tuple(json.loads(r.metadata[NS])) for r in records}
        if op.match_conditions:
            spaces = {ns for ns in spaces if all(_does_match(c, ns) for c in op.match_conditions)}
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]

    def _run(self, ops: Iterable[Any]) -> list[Any]:
        results: list[Any] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown operation {type(op).__name__}")
        return results

    # BaseStore ---------------------------------------------------------------------------
    def batch(self, ops: Iterable[Any]) -> list[Any]:
        """Run the operations in order on the memory's worker thread."""
        return self.amem.run_blocking(self._run, list(ops))

    async def abatch(self, ops: Iterable[Any]) -> list[Any]:
        """Await the operations, run in order on the memory's worker thread."""
        return await self.amem.run(self._run, list(ops))


def _does_match(condition: Any, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"unsupported match type {condition.match_type!r}")
    return all(p == "*" or k == p for k, p in pairs)


def _matches(value: dict[str, Any], flt: dict[str, Any] | None) -> bool:
    return not flt or all(_compare(value.get(k), v) for k, v in flt.items())


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: equality, nested objects, and $eq/$ne/$gt/$gte/$lt/$lte."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            try:
                return all(_OPERATORS[op](value, arg) for op, arg in wanted.items())
            except KeyError as exc:
                raise ValueError(f"unsupported filter operator {exc.args[0]}") from None
            except (TypeError, ValueError):
                return False
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=False))
        )
    return bool(value == wanted)


__all__ = ["ReverieStore"]
