"""CrpQuery: exact turn-aware point-to-point queries on (overlay, cell metric), behind
the Router interface (engine.routing).

From a node: the first arc costs its own cost (no turn before it); to a node: any arc
into it ends the path. From or to an arc: the path starts having driven along it, or
ends having driven along it. Paths come back as original arc ids, checked against the
reported cost, with the turns they take.
"""
from __future__ import annotations

import time

import numpy as np

from engine.crp.query.bounds import TopBounds
from engine.crp.query.flat import flatten
from engine.crp.query.query_space import query_space
from engine.crp.metric import FORBIDDEN
from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.query.search import bidirectional, clear, reaches
from engine.crp.query.staged import staged
from engine.crp.query.lanes import Lanes, column_stamp
from engine.crp.query.unpack import bottom_space, search_steps, tree_space
from engine.core.arrays import huge, huge_zeros
from engine.core.cores import side_thread
from engine.core.paths import Unreachable, check_node, path_from_arcs, unreachable


class CrpQuery:
    name = "crp"
    label = "CRP query"
    two_stage = True     # s and t in different top cells: staged.py (False: search.py alone)

    def __init__(self, overlay, metric, space=None, backend=None) -> None:
        """``space``: the overlay's query numbering when one is kept (the Customizer's),
        else it is built here; ``backend``: a GPU builds the top-level bound tables
        (bounds_gpu.py), the searches run here either way."""
        if metric.overlay is not overlay:
            raise ValueError("the metric was customized for another overlay")
        self.overlay = overlay
        self.graph = g = overlay.graph
        self.space = space if space is not None else query_space(overlay, flatten(overlay))
        self._tree_space = tree_space(overlay, self.space)    # the unpacking hints' layout
        self._bottom = bottom_space(overlay, self.space)      # level 0's cells, for unpacking
        self._use(metric)
        m = g.num_arcs
        q = self.space
        # every level the overlay has, mezzanines included: a finer cell that holds
        # neither s nor t still skips its inside (exact either way; ~7% faster on NY)
        self.query_level = np.ones(overlay.num_levels, dtype=bool)
        self._cells = (self.query_level, q.head_rec, q.tail_rec, q.entry_first, q.entry_q,
                       q.exit_first, q.exit_q)
        # distances fit int32: only costs below best <= FORBIDDEN are stored (sums are
        # taken in int64). Costs and records per arc (search.py), on 2 MB pages
        self._dist = huge(np.full((m, 2), FORBIDDEN, dtype=np.int32))
        self._rec = huge(np.full((m, 4), -1, dtype=np.int32))
        # the forward search may list a target arc start() listed (staged.py): room for
        # the seeds twice; the backward search's own list in stage 1
        seeds = int(np.diff(g.first_out).max(initial=0)) + \
            int(np.diff(g.backward.first_in).max(initial=0))
        self._touched = np.empty(m + 1 + seeds, dtype=np.int32)
        self._back = np.empty(m + 1, dtype=np.int32)
        self._side = side_thread()
        self._heaps = (np.empty(m, np.int64), np.empty(m, np.int64))
        self._ntouched = 0
        # the unpacking's scratch, one set per thread (lanes.py)
        self._lanes = Lanes(int(q.crossing[0]) if q.crossing.size else 0, self._bottom[1])
        self._in_q = q.q_of_arc[g.backward.in_arc]          # the arcs into each node
        # global cell index of every node per level, for the s and t cells
        self._node_cell = np.ascontiguousarray(
            (overlay.cell_of + q.cell_base[:, None]).T.astype(np.int32))
        self._bounds = TopBounds(overlay, q, backend)
        self._levels_of = None                              # the last search's (for steps)
        # the last route's split, ms: the top-level bound tables (bounds.py: all built
        # by the first route after a metric), the search, the unpacking; the search's
        # two stages where it took them (staged.py; 0 otherwise)
        self.last_ms = {"bounds": 0.0, "search": 0.0, "unpack": 0.0, "inside": 0.0, "across": 0.0}
        self._meet = -1                                     # the last search's meeting arc

    def _use(self, metric) -> None:
        """Route on ``metric`` (its turn weights in query order, its matrices as one array)."""
        q = self.space
        self.cell_metric, self.metric = metric, metric.name
        self.turn_weight_q = (metric.turn_weight_q if metric.turn_weight_q is not None
                              else metric.turn_weight[q.turn_order])
        self.shortcuts = metric.flat_shortcuts          # the GPU's: on 2 MB pages already
        if self.shortcuts is None:                      # the A* reads rows all over them
            sizes = [s.size for s in metric.shortcuts]
            self.shortcuts = huge_zeros(sum(sizes), np.int32)
            if sizes:
                np.concatenate(metric.shortcuts, out=self.shortcuts)
        self._graph = (q.first_turn, q.to_q, q.first_turn_in, q.turn_in, q.from_q,
                       self.turn_weight_q, q.arc_level)
        self._unpack_space = (q.first_turn, q.to_q, self.turn_weight_q, q.crossing, q.head_rec,
                              q.exit_first, q.exit_q)
        first, vertex_first, vertex_q, entry_first, dtype = self._tree_space
        trees = metric.trees if metric.trees is not None else np.zeros(0, dtype)
        self._hints = (first, vertex_first, vertex_q, entry_first, trees.astype(dtype, copy=False),
                       self._bottom[0], self.turn_weight_q, self._bottom[1])
        # the backward searches' column-major copy of the matrices (search._column),
        # filled per cell on first use (no page is touched until then) and
        # stamped by who filled it; the last array is the search's own stamp
        self._columns = (huge_zeros(self.shortcuts.size, self.shortcuts.dtype),
                         np.zeros(q.entry_first.size, np.int64), q.clique_first,
                         np.zeros(1, np.int64))
        if hasattr(self, "_bounds"):
            self._bounds.reset()

    def set_metric(self, metric) -> None:
        """Route on another customization of the same overlay, keeping this query's
        buffers (a metric edit then costs no allocation)."""
        if metric.overlay is not self.overlay:
            raise ValueError("the metric was customized for another overlay")
        self.reset()
        self._use(metric)

    def reset(self) -> None:
        """Forget the last search (only the arcs it touched are cleared)."""
        clear(self._touched, self._ntouched, self._dist, self._rec)
        self._ntouched, self._meet = 0, -1

    # ------------------------------------------------------------------ queries
    def route(self, source: int, target: int):
        """Cheapest turn-aware path between internal node indices; raises Unreachable."""
        g = self.graph
        check_node(g, source)
        check_node(g, target)
        self._meet = -1
        if source == target:
            return path_from_arcs(g, source, target, self.metric, 0, [])
        lo, hi = g.first_out[source], g.first_out[source + 1]    # slices, not gathers
        first_in = g.backward.first_in
        cost, arcs = self._search(source, target, self.space.q_of_arc[lo:hi],
                                  self.cell_metric.arc_cost[lo:hi],
                                  self._in_q[first_in[target]:first_in[target + 1]])
        if arcs is None:
            raise unreachable(g, source, target)
        return path_from_arcs(g, source, target, self.metric, cost, arcs)

    def route_arcs(self, from_arc: int, to_arc: int):
        """Cheapest path that starts having driven along ``from_arc`` and ends having
        driven along ``to_arc``; the Path's arcs include both, its cost excludes
        from_arc's own cost. Raises Unreachable."""
        g = self.graph
        src, dst = int(g.tail[from_arc]), int(g.head[to_arc])
        q_of_arc = self.space.q_of_arc
        cost, arcs = self._search(int(g.head[from_arc]), dst, q_of_arc[[from_arc]],
                                  np.zeros(1, np.int32), q_of_arc[[to_arc]])
        if arcs is None:
            raise Unreachable(f"arc {to_arc} cannot be reached from arc {from_arc}")
        return path_from_arcs(g, src, dst, self.metric, cost, arcs)

    def _search(self, s_node, t_node, sources, source_cost, targets):
        """Sources and targets as query ids, source costs int32."""
        cs, ct = self._node_cell[s_node], self._node_cell[t_node]
        stamps, query = self._bounds.steps
        query[0] += 1                      # this search's number (staged.py's steps)
        self._columns[3][0] = column_stamp(int(query[0]), 0, unpacking=False)
        t0 = time.perf_counter()
        bounds = self._bounds.get(cs, ct, self.shortcuts)
        t1 = time.perf_counter()
        args = (sources, source_cost, targets, self._graph, self._cells, cs, ct, self.shortcuts,
                self._dist, self._rec, self._touched, self._ntouched, self._heaps, bounds,
                self._columns)
        top = self._bounds.top
        stages = {}
        if self.two_stage and top >= 0 and cs[top] != ct[top]:   # different top cells
            best, meet, nt = staged(*args, self._back, self._side, stages)
        else:
            best, meet, nt = bidirectional(*args)
        t2 = time.perf_counter()
        self.last_ms = {"bounds": (t1 - t0) * 1e3, "search": (t2 - t1) * 1e3, "unpack": 0.0,
                        "inside": stages.get("inside", 0.0), "across": stages.get("across", 0.0)}
        self._ntouched, self._meet = nt, meet
        q = self.space
        self._levels_of = (q.arc_level, self.query_level, q.head_rec, q.tail_rec, cs, ct,
                           stamps, int(query[0]), self._bounds.top)
        if meet < 0:
            # costs are int32 below FORBIDDEN: a path at 2^31-1 or more is dropped
            # by the search, so a legal path means it overflowed
            if reaches(sources, np.asarray(source_cost, dtype=np.int32), targets, q.first_turn,
                       q.to_q, self.turn_weight_q):
                raise CostOverflow.on_route(self.metric)
            return FORBIDDEN, None
        arcs = self._unpack(meet)
        self.last_ms["unpack"] = (time.perf_counter() - t2) * 1e3
        return int(best), arcs

    def steps(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The last found path as the search took it, before unpacking: original arc
        ids and, for each, the level of the step into it (-1: a turn or the first arc;
        l: a level-l shortcut from the arc before). None before any path."""
        if self._meet < 0:
            return None
        arcs, levels = search_steps(self._meet, self._rec, self._levels_of)
        return self.space.arc_of_q[arcs].astype(np.int64), levels

    @property
    def turns(self):
        return self.overlay.turns

    def _unpack(self, meet: int) -> np.ndarray:
        """Original arcs of the search path through ``meet`` (on several threads where
        the metric has no trees: lanes.py)."""
        q = self.space
        arcs, levels = search_steps(meet, self._rec, self._levels_of)
        back = (q.tail_rec, q.entry_first, q.entry_q, self._columns)
        arcs = self._lanes.unpack(arcs, levels, int(self._levels_of[7]),
                                  self._hints[4].size == 0, self._unpack_space,
                                  self.shortcuts, q.clique_first, self._hints, back)
        return q.arc_of_q[arcs]


def path_turns(query: CrpQuery, arcs) -> dict:
    """The turns a path takes, counted by type, and the turn costs it pays (the turn
    weights less the next arcs' own costs), in the customization's unit."""
    from engine.core.turns import TURN_TYPES
    turns, metric = query.overlay.turns, query.cell_metric
    arcs = np.asarray(arcs, dtype=np.int64)
    t = turns.ids(arcs[:-1], arcs[1:])
    if (t < 0).any():
        i = int(np.argmax(t < 0))
        raise IndexError(f"arc {arcs[i]} -> arc {arcs[i + 1]} is not an allowed turn")
    counts = np.bincount(turns.turn_type[t], minlength=len(TURN_TYPES))
    cost = metric.turn_weight[t].astype(np.int64).sum() - \
        metric.arc_cost[arcs[1:]].astype(np.int64).sum()
    return {"by_type": {name: int(c) for name, c in zip(TURN_TYPES, counts)},
            "cost": int(cost), "unit": metric.unit}
