"""DB state as persistent JSON-like trees with copy-on-write and tau2's canonical hash.

A state is a plain tree of dicts, lists and scalars whose top-level entity
collections (``{"orders": {id: order, ...}}``) are ``Collection`` objects: a
shared, never-mutated base plus this state's own changes. A ``Store`` hands out
private copies on ``edit`` and copies only the containers on the path to what
changes, so a snapshot (``freeze``) is just a root reference and keeping one per
step costs what changed, not the size of the DB.

The hash is tau2's: sha256 over ``json.dumps(model_dump(), sort_keys=True,
default=str)``. It is assembled from cached per-entity JSON for everything
that came unchanged from the shared base.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from enum import Enum
from itertools import compress
from operator import is_not
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _hashlib import HASH

_MISSING = object()


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class CollectionBase:
    """The shared, immutable part of a collection, with its canonical JSON cached once per process.

    ``full()`` is the collection's canonical JSON; ``spans`` locate each
    entity's ``"key": value`` piece in it, so a state that changed a few
    entities is hashed by splicing those pieces into the cached bytes.
    """

    __slots__ = ("data", "_sorted", "_index", "_full", "_spans")

    def __init__(self, data: dict[Any, Any]):
        self.data = data
        self._sorted: list[Any] | None = None
        self._index: dict[Any, int] | None = None
        self._full: bytes | None = None
        self._spans: list[tuple[int, int]] = []

    def sorted_keys(self) -> list[Any]:
        if self._sorted is None:
            self._sorted = sorted(self.data)
            self._index = {k: i for i, k in enumerate(self._sorted)}
        return self._sorted

    def index(self) -> dict[Any, int]:
        self.sorted_keys()
        assert self._index is not None
        return self._index

    def full(self) -> bytes:
        if self._full is None:
            pieces = [_piece(k, self.data[k]) for k in self.sorted_keys()]
            spans, pos = [], 1
            for piece in pieces:
                spans.append((pos, pos + len(piece)))
                pos += len(piece) + 2
            self._spans = spans
            self._full = b"{" + b", ".join(pieces) + b"}"
        return self._full

    def spans(self) -> list[tuple[int, int]]:
        self.full()
        return self._spans


def _piece(key: Any, value: Any) -> bytes:
    return f"{json.dumps(key)}: {_dumps(value)}".encode()


class Collection(Mapping[Any, Any]):
    """A dict of entities: a shared base plus own changes. Copying costs the changes only."""

    __slots__ = ("_base", "_over", "_gone")

    def __init__(
        self, base: CollectionBase | dict[Any, Any], over: dict[Any, Any] | None = None, gone: set[Any] | None = None
    ):
        self._base = base if isinstance(base, CollectionBase) else CollectionBase(base)
        self._over: dict[Any, Any] = over if over is not None else {}
        self._gone: set[Any] = gone if gone is not None else set()

    # Mapping protocol -------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        value = self._over.get(key, _MISSING)
        if value is not _MISSING:
            return value
        if key in self._gone:
            raise KeyError(key)
        return self._base.data[key]

    def __contains__(self, key: object) -> bool:
        if key in self._over:
            return True
        return key not in self._gone and key in self._base.data

    def __iter__(self) -> Iterator[Any]:
        base = self._base.data
        gone = self._gone
        for key in base:
            if key not in gone:
                yield key
        for key in self._over:
            if key not in base:
                yield key

    def __len__(self) -> int:
        base = self._base.data
        return len(base) - len(self._gone) + sum(1 for k in self._over if k not in base)

    def __repr__(self) -> str:
        return f"Collection({len(self)} entities, {len(self._over)} changed)"

    # Mutation: only on a private copy (Store.edit hands those out) ----------------
    def __setitem__(self, key: Any, value: Any) -> None:
        self._gone.discard(key)
        self._over[key] = value

    def __delitem__(self, key: Any) -> None:
        if key not in self:
            raise KeyError(key)
        self._over.pop(key, None)
        if key in self._base.data:
            self._gone.add(key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            value = self[key]
            del self[key]
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def copy(self) -> Collection:
        return Collection(self._base, dict(self._over), set(self._gone))

    # Structure sharing --------------------------------------------------------
    @property
    def base(self) -> CollectionBase:
        return self._base

    def changed_keys(self) -> set[Any]:
        """Keys whose entity differs (or may differ) from the shared base."""
        return set(self._over) | self._gone

    def chunks(self) -> list[bytes | memoryview]:
        """The collection's entity pieces in canonical order: unchanged runs are slices of the cached bytes."""
        base = self._base
        full = memoryview(base.full())
        spans, keys, index = base.spans(), base.sorted_keys(), base.index()
        n = len(keys)
        replaced: dict[int, bytes | None] = {i: None for i in (index[k] for k in self._gone if k in index)}
        inserted: dict[int, list[tuple[Any, bytes]]] = {}
        for key, value in self._over.items():
            if key in index:
                replaced[index[key]] = _piece(key, value)
            else:
                inserted.setdefault(bisect_left(keys, key), []).append((key, _piece(key, value)))
        out: list[bytes | memoryview] = []
        prev = 0
        for i in sorted(set(replaced) | set(inserted)):
            if i > prev:
                out.append(full[spans[prev][0] : spans[i - 1][1]])
            out.extend(piece for _, piece in sorted(inserted.get(i, ())))
            if i < n:
                if i in replaced:
                    piece = replaced[i]
                    if piece is not None:
                        out.append(piece)
                else:
                    out.append(full[spans[i][0] : spans[i][1]])
            prev = i + 1
        if prev < n:
            out.append(full[spans[prev][0] : spans[n - 1][1]])
        return out

    def canonical(self) -> bytes:
        """Canonical JSON of the whole collection."""
        if not self._over and not self._gone:
            return self._base.full()
        return b"{" + b", ".join(bytes(c) for c in self.chunks()) + b"}"


def canonical_bytes(node: Any) -> bytes:
    """tau2's canonical JSON of a state tree (``json.dumps(..., sort_keys=True, default=str)``), encoded."""
    if type(node) is Collection:
        return node.canonical()
    if isinstance(node, dict) and any(type(v) is Collection for v in node.values()):
        return b"{" + b", ".join(f"{json.dumps(k)}: ".encode() + canonical_bytes(node[k]) for k in sorted(node)) + b"}"
    return _dumps(node).encode()


def canonical_json(node: Any) -> str:
    return canonical_bytes(node).decode()


def _chunks(node: Any) -> Iterator[bytes | memoryview]:
    """The canonical JSON of a state tree, piece by piece (unchanged runs are slices of cached bytes)."""
    if type(node) is Collection:
        if not node._over and not node._gone:
            yield node._base.full()
            return
        yield b"{"
        for i, chunk in enumerate(node.chunks()):
            if i:
                yield b", "
            yield chunk
        yield b"}"
    elif isinstance(node, dict) and any(type(v) is Collection for v in node.values()):
        yield b"{"
        for i, key in enumerate(sorted(node)):
            yield f"{', ' if i else ''}{json.dumps(key)}: ".encode()
            yield from _chunks(node[key])
        yield b"}"
    else:
        yield _dumps(node).encode()


def _feed(digest: HASH, node: Any) -> None:
    for chunk in _chunks(node):
        digest.update(chunk)


def same_state(a: Any, b: Any, frozen: bool = False) -> bool:
    """Whether two state trees have the same canonical JSON (and so the same hash), compared by their changes.

    Collections over the same shared base compare only the entities either side changed; anything else
    compares its canonical JSON. ``frozen``: both are snapshots that never change (``EnvState``), so plain
    trees compare container by container, with cached pieces (``_same_tree``).
    """
    if a is b:
        return True
    if type(a) is Collection and type(b) is Collection and a._base is b._base:
        for key in {*a._over, *a._gone, *b._over, *b._gone}:
            in_a, in_b = key in a, key in b
            if in_a != in_b or (in_a and _piece(key, a[key]) != _piece(key, b[key])):
                return False
        return True
    if (
        type(a) is dict
        and type(b) is dict
        and a.keys() == b.keys()
        and any(type(v) is Collection for v in (*a.values(), *b.values()))
    ):
        return all(same_state(a[k], b[k], frozen) for k in a)
    if frozen:
        return _same_tree(a, b, 0)
    return canonical_bytes(a) == canonical_bytes(b)


# Canonical JSON pieces of plain (collection-free) frozen state trees, cached by identity. A snapshot never
# changes (``Store`` copies on write), and a replayed state shares every container it did not change with the
# state it started from, so its canonical JSON is mostly cached pieces. The root's values and the items of its
# lists are cached (telecom: each top-level list and object, and each list's entities); an object below the
# root is one piece (a change copies it whole anyway), and anything deeper is part of its ancestor's piece.
# Each entry keeps its node alive, so an id is never reused while cached.
_MEMO_DEPTH = 2
_PIECES: dict[int, tuple[Any, bytes]] = {}
_MAX_PIECES = 1 << 16  # entries, and bytes of JSON held: past either, the cache starts again
_MAX_PIECE_BYTES = 64 << 20
_piece_bytes = 0


def _key_prefix(key: str) -> bytes:
    return f"{json.dumps(key)}: ".encode()


def _memo_bytes(node: Any, depth: int) -> bytes:
    """tau2's canonical JSON of a node of a frozen state tree at ``depth`` (the root is 0), from cached pieces.

    The root object (string keys) and lists above ``_MEMO_DEPTH`` are joined from their items' pieces, exactly
    as ``json.dumps(..., sort_keys=True, default=str)`` writes them; anything else is dumped whole.
    """
    kind = type(node)
    if kind is Collection:
        whole: bytes = node.canonical()
        return whole
    if kind is not dict and kind is not list:
        if isinstance(node, dict) and any(type(v) is Collection for v in node.values()):
            return canonical_bytes(node)
        return _dumps(node).encode()
    if depth:
        hit = _PIECES.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
    if depth >= _MEMO_DEPTH or (depth and kind is dict):
        out = _dumps(node).encode()
    elif kind is list:
        out = b"[" + b", ".join([_memo_bytes(v, depth + 1) for v in node]) + b"]"
    elif all(type(k) is str for k in node):
        out = b"{" + b", ".join([_key_prefix(k) + _memo_bytes(node[k], depth + 1) for k in sorted(node)]) + b"}"
    else:
        out = canonical_bytes(node)
    if depth:
        global _piece_bytes
        if len(_PIECES) >= _MAX_PIECES or _piece_bytes > _MAX_PIECE_BYTES:
            _PIECES.clear()
            _piece_bytes = 0
        _PIECES[id(node)] = (node, out)
        _piece_bytes += len(out)
    return out


_SCALARS = frozenset({str, int, bool, type(None)})
_SAME_TREE_DEPTH = 8


def _same_tree(a: Any, b: Any, depth: int) -> bool:
    """``same_state`` of two frozen trees: shared containers are equal, others compare item by item.

    Two lists of different lengths, or two objects with string keys and different key sets, never have the
    same canonical JSON; two strings, integers, booleans, nulls, floats, dates or str/int enum members of one
    type are compared the way JSON writes them; anything else compares its (cached) canonical JSON.
    """
    if a is b:
        return True
    kind = type(a)
    if kind is type(b) and depth < _SAME_TREE_DEPTH:
        if kind in _SCALARS:
            equal: bool = a == b
            return equal
        if kind is float:  # JSON writes a float's repr (NaN, Infinity and -Infinity for the others)
            return repr(a) == repr(b)
        if kind is datetime.date or kind is datetime.datetime:  # written as str()
            return str(a) == str(b)
        if isinstance(a, Enum) and isinstance(a, (str, int)):  # written as the value
            return bool(a == b)
        if kind is list:  # only the items that are not shared are compared
            return len(a) == len(b) and all(
                _same_tree(x, y, depth + 1) for x, y in compress(zip(a, b, strict=True), map(is_not, a, b))
            )
        if kind is dict and all(type(k) is str for k in a) and all(type(k) is str for k in b):
            if a.keys() != b.keys():
                return False
            keys = list(a)
            if keys == list(b):  # the same order (one is a copy of the other): pair the values as they are
                return all(
                    _same_tree(a[k], b[k], depth + 1) for k in compress(keys, map(is_not, a.values(), b.values()))
                )
            return all(_same_tree(a[k], b[k], depth + 1) for k in keys)
        if kind is Collection:
            return same_state(a, b)
    return _memo_bytes(a, depth) == _memo_bytes(b, depth)


CHECKPOINT_BYTES = 64 * 1024


class _BaseStream:
    """The canonical JSON of a root of untouched collections, with the sha256 state every 64 KiB of it.

    A state whose collections share these bases equals this stream up to its first change: its hash
    starts from the checkpoint before that change instead of from the first byte.
    """

    def __init__(self, keys: list[Any], bases: list[CollectionBase]):
        self.bases = bases  # kept: the cache is keyed by their ids
        data = bytearray(b"{")
        self.starts: dict[Any, int] = {}
        for i, (key, base) in enumerate(zip(keys, bases, strict=True)):
            data += f"{', ' if i else ''}{json.dumps(key)}: ".encode()
            self.starts[key] = len(data)
            data += base.full()
        data += b"}"
        self.data = bytes(data)
        digest = hashlib.sha256()
        self.checkpoints: list[tuple[int, HASH]] = [(0, digest.copy())]
        view = memoryview(self.data)
        for offset in range(CHECKPOINT_BYTES, len(self.data), CHECKPOINT_BYTES):
            digest.update(view[offset - CHECKPOINT_BYTES : offset])
            self.checkpoints.append((offset, digest.copy()))

    def resume(self, upto: int) -> HASH:
        """A sha256 object that has been fed this stream's first ``upto`` bytes."""
        i = bisect_left(self.checkpoints, upto + 1, key=lambda c: c[0]) - 1
        offset, digest = self.checkpoints[i]
        digest = digest.copy()
        digest.update(memoryview(self.data)[offset:upto])
        return digest


_STREAMS: dict[tuple[int, ...], _BaseStream] = {}
_MAX_STREAMS = 64


def _base_stream(node: Any) -> tuple[_BaseStream, list[Any]] | None:
    """The checkpointed stream of a root whose every value is a collection (airline, retail…), else None."""
    if type(node) is not dict or not node:
        return None
    keys = sorted(node)
    values = [node[k] for k in keys]
    if any(type(v) is not Collection for v in values):
        return None
    bases = [v._base for v in values]
    ident = tuple(id(b) for b in bases) + (hash(tuple(keys)),)
    stream = _STREAMS.get(ident)
    if stream is None or any(a is not b for a, b in zip(stream.bases, bases, strict=False)):
        if len(_STREAMS) >= _MAX_STREAMS:
            _STREAMS.clear()
        stream = _STREAMS[ident] = _BaseStream(keys, bases)
    return stream, keys


def _first_change(stream: _BaseStream, node: dict[Any, Any], keys: list[Any]) -> int:
    """How many leading bytes of ``node``'s canonical JSON equal the base stream's (a safe lower bound)."""
    for key in keys:
        coll = node[key]
        if not coll._over and not coll._gone:
            continue
        base = coll._base
        index, sorted_keys = base.index(), base.sorted_keys()
        first = min(index[k] if k in index else bisect_left(sorted_keys, k) for k in (*coll._over, *coll._gone))
        spans = base.spans()
        return stream.starts[key] + (spans[first - 1][1] if first > 0 else 1)
    return len(stream.data)


def state_hash(node: Any, frozen: bool = False) -> str:
    """The tau2-compatible DB hash of a state tree.

    For a root of collections, the untouched prefix is not hashed again: the digest resumes from a
    checkpoint of the base stream (``_BaseStream``), then takes the rest piece by piece. ``frozen``: the
    tree is a snapshot that never changes, so a plain tree is hashed from cached pieces (``_memo_bytes``).
    """
    found = _base_stream(node)
    if found is None:
        if frozen:
            return hashlib.sha256(_memo_bytes(node, 0)).hexdigest()
        digest = hashlib.sha256()
        _feed(digest, node)
        return digest.hexdigest()
    stream, keys = found
    skip = _first_change(stream, node, keys)
    digest = stream.resume(skip)
    for chunk in _chunks(node):
        size = len(chunk)
        if skip >= size:
            skip -= size
            continue
        digest.update(memoryview(chunk)[skip:] if skip else chunk)
        skip = 0
    return digest.hexdigest()


_ATOMS = frozenset({str, int, float, bool, type(None)})


def clone(value: Any) -> Any:
    """Deep copy of a JSON-like tree (scalars, dates and enums are shared)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {k: clone(v) for k, v in value.items()}
    if kind is list:
        return [clone(v) for v in value]
    if type(value) is Collection:
        return Collection(value.base, {k: clone(v) for k, v in value._over.items()}, set(value._gone))
    if isinstance(value, dict):
        return type(value)({k: clone(v) for k, v in value.items()})
    if isinstance(value, list):
        return [clone(v) for v in value]
    if kind is tuple:
        return tuple(clone(v) for v in value)
    return value


def to_plain(node: Any) -> Any:
    """A state tree with every ``Collection`` turned into a plain dict (shares entities)."""
    if type(node) is Collection:
        return {k: node[k] for k in node}
    if isinstance(node, dict) and any(type(v) is Collection for v in node.values()):
        return {k: to_plain(v) for k, v in node.items()}
    return node


_CONTAINERS = (dict, list)


class Store:
    """One side's DB during an episode: read freely, write through ``edit``/``set``/``delete``.

    Reads (``store.root``, ``store.get(...)``, ``store.orders``) return shared
    objects that must not be mutated. ``edit(*path)`` returns a private deep copy
    linked into the current state. ``freeze()`` ends a generation: the current
    root becomes an immutable snapshot and later writes copy again. ``writes``
    counts the write calls (``edit`` included, as its caller may then change
    the copy): the same count means the same state. ``key_writes`` counts them
    per top-level key (a write to the root as a whole counts in ``writes`` only).
    """

    def __init__(self, root: dict[str, Any], kind: str = "DB", schema: Any = None):
        self._root = root
        self.kind = kind
        self.schema = schema
        self._shallow: dict[int, Any] = {}
        self._deep: dict[int, Any] = {}
        self.writes = 0
        self.key_writes: dict[Any, int] = {}

    @property
    def root(self) -> dict[str, Any]:
        return self._root

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        root = self.__dict__["_root"]
        if name in root:
            return root[name]
        raise AttributeError(f"'{self.__dict__['kind']}' object has no attribute '{name}'")

    def get(self, *path: Any) -> Any:
        node: Any = self._root
        for key in path:
            node = node[key]
        return node

    # --- ownership --------------------------------------------------------
    def _owned(self, node: Any) -> bool:
        return id(node) in self._shallow or id(node) in self._deep

    def _own_shallow(self, node: Any) -> Any:
        if self._owned(node):
            return node
        copy: Collection | dict[Any, Any] | list[Any]
        if type(node) is Collection:
            copy = node.copy()
        elif isinstance(node, dict):
            copy = dict(node)
        elif isinstance(node, list):
            copy = list(node)
        else:
            raise TypeError(f"cannot write inside a {type(node).__name__}")
        self._shallow[id(copy)] = copy
        return copy

    def _adopt(self, value: Any) -> Any:
        """Own ``value`` (a private copy, or a value handed to ``set``): writes to it need no copy.

        Only the node itself is registered: a later ``edit`` of a path inside it copies that part again,
        which is never wrong, and walking every container of every copy costs more than it saves.
        """
        kind = type(value)
        if kind is dict or kind is list or kind is Collection or isinstance(value, _CONTAINERS):
            self._deep[id(value)] = value
        return value

    def _written(self, path: tuple[Any, ...]) -> None:
        """Count a write at ``path`` (every write method calls this first)."""
        self.writes += 1
        if path:
            key = path[0]
            self.key_writes[key] = self.key_writes.get(key, 0) + 1

    def _container(self, path: tuple[Any, ...]) -> Any:
        """The container at ``path``, made private along the way."""
        root = self._own_shallow(self._root)
        self._root = root
        node = root
        for key in path:
            child = node[key]
            owned = self._own_shallow(child)
            if owned is not child:
                node[key] = owned
            node = owned
        return node

    # --- writes -------------------------------------------------------------
    def edit(self, *path: Any) -> Any:
        """A private, mutable copy of the node at ``path`` (the root when no path)."""
        self._written(path)
        if not path:
            root = self._root
            if id(root) not in self._deep:
                root = self._adopt(clone(root))
                self._root = root
            return root
        parent = self._container(path[:-1])
        node = parent[path[-1]]
        if id(node) not in self._deep:
            node = self._adopt(clone(node))
            parent[path[-1]] = node
        return node

    def set(self, *path_and_value: Any) -> Any:
        """Put a value at a path (``store.set("orders", oid, order)``); the value is adopted, not copied."""
        *path, value = path_and_value
        if not path:
            raise ValueError("set needs a path")
        self._written(tuple(path))
        parent = self._container(tuple(path[:-1]))
        if isinstance(parent, list) and path[-1] == len(parent):
            parent.append(value)
        else:
            parent[path[-1]] = value
        return self._adopt(value)

    def update(self, path: tuple[Any, ...], changes: Mapping[Any, Any]) -> None:
        """Set keys of the object at ``path``: only the containers on the way are copied, shallowly (once per
        generation). The values are stored as given, neither copied nor owned, so they must not be mutated
        later (an ``edit`` inside one copies it)."""
        self._written(tuple(path))
        self._container(tuple(path)).update(changes)

    def append(self, *path_and_value: Any) -> Any:
        """Append a value to the list at a path."""
        *path, value = path_and_value
        self._written(tuple(path))
        self._container(tuple(path)).append(value)
        return self._adopt(value)

    def delete(self, *path: Any) -> Any:
        self._written(path)
        parent = self._container(tuple(path[:-1]))
        return parent.pop(path[-1])

    def replace_root(self, root: dict[str, Any]) -> None:
        self._written(())
        self._root = root
        self._shallow.clear()
        self._deep.clear()

    def freeze(self) -> dict[str, Any]:
        """End the current generation; the returned root never changes again."""
        self._shallow.clear()
        self._deep.clear()
        return self._root

    def hash(self) -> str:
        return state_hash(self._root)

    def plain(self) -> Any:
        return to_plain(self._root)
