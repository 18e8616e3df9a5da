"""Nested CRP partition files (``.rlp``, read and written by
engine.crp.partition.nested.Partition through engine.io.npz): the validator, run on
every load before the overlay indexes anything with its cell ids.

A partition belongs to one graph topology (its ``graph_key``: a hash of first_out
and head); it is refused for any other. Cells are checked to be dense per level,
nested (every level-l cell lies inside one level-(l+1) cell) and numbered in the
order of their parents, which keeps the subcells of a parent contiguous. All
O(L·n), vectorised.
"""
from __future__ import annotations

import hashlib

import numpy as np

from engine.io.errors import LoadError
from engine.io.checks import in_range, need

PARTITION_KEYS = {"num_nodes": int, "graph_key": str, "seed": int}
MAX_LOG2 = 30            # cells of 2^30 nodes: ids and sizes stay within int32


def graph_key(graph) -> str:
    """Content hash of a graph's topology (first_out and head): 16 hex digits."""
    digest = hashlib.blake2b(digest_size=8)
    for a in (graph.first_out, graph.head):
        a = np.ascontiguousarray(a)
        digest.update(f"{a.dtype.str}:{a.size}:".encode())
        digest.update(a.view(np.uint8))
    return digest.hexdigest()


def max_log2(num_nodes: int) -> int:
    """The largest cell size (log2) a graph of ``num_nodes`` nodes admits: 2^k <= n
    (at least 1, so that tiny graphs still have a level)."""
    return max(1, min(MAX_LOG2, int(num_nodes).bit_length() - 1))


def check_meta(path, meta: dict, graph) -> None:
    """The metadata's graph is ``graph``; the time is a number."""
    ms = meta.get("partition_ms")
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not ms >= 0:
        raise LoadError(path, "damaged partition: metadata 'partition_ms' is not a time")
    if meta["num_nodes"] != graph.num_nodes or meta["graph_key"] != graph_key(graph):
        raise LoadError(path, f"this partition belongs to another graph ({meta['num_nodes']:,} "
                              f"nodes, key {meta['graph_key']}), not to this one "
                              f"({graph.num_nodes:,} nodes, key {graph_key(graph)}); "
                              "partition this graph again")


def check_partition(path, *, cell_sizes_log2, query_level, cell_of, num_nodes: int) -> None:
    """Refuse, with ``path`` and the reason, arrays that are not a nested partition of
    ``num_nodes`` nodes."""
    sizes = need(path, cell_sizes_log2, "cell_sizes_log2", np.int32, (None,))
    levels = sizes.size
    if not 1 <= levels <= MAX_LOG2:
        raise LoadError(path, f"a partition needs 1..{MAX_LOG2} levels, this one has {levels}")
    top = max_log2(num_nodes)
    in_range(path, sizes, "cell_sizes_log2", 1, top)
    if np.any(sizes[1:] <= sizes[:-1]):
        raise LoadError(path, f"cell_sizes_log2 {sizes.tolist()} is not strictly ascending")
    flags = need(path, query_level, "query_level", np.bool_, (levels,))
    if not flags[-1]:
        raise LoadError(path, "the top level is a mezzanine level (it must be a query level)")
    cells = need(path, cell_of, "cell_of", np.int32, (levels, num_nodes))
    in_range(path, cells, "cell_of", 0, max(num_nodes - 1, 0))
    for level in range(levels):
        _check_dense(path, cells[level], level)
    for level in range(levels - 1):
        _check_nested(path, cells[level], cells[level + 1], level)


def _check_dense(path, cell: np.ndarray, level: int) -> None:
    """Ids 0..k-1 with every id used."""
    if cell.size and np.any(np.bincount(cell) == 0):
        raise LoadError(path, f"cell ids of level {level} are not dense (an id in "
                              f"0..{int(cell.max())} has no node)")


def _check_nested(path, cell: np.ndarray, parent_cell: np.ndarray, level: int) -> None:
    """Each level-l cell has one parent, and parents never decrease with the cell id."""
    if not cell.size:
        return
    parent = np.empty(int(cell.max()) + 1, dtype=np.int32)
    parent[cell] = parent_cell               # any one node's parent; checked next
    if np.any(parent[cell] != parent_cell):
        raise LoadError(path, f"cells of level {level} are not nested in level {level + 1} "
                              "(a cell's nodes lie in different parent cells)")
    if np.any(parent[1:] < parent[:-1]):
        raise LoadError(path, f"cells of level {level} are not numbered in the order of their "
                              f"parents at level {level + 1}")
