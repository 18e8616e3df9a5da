"""Workspace: the engine's state for one graph, with no Qt.

It holds the graph, the backend, the current contraction hierarchy and the query
objects built on them (routers, tree queries, PHAST). Whoever queries owns one: the
window's engine thread, or one command-line run. Query objects are made on first use
and warmed up there, so a time shown to a person never includes one-off compilation.
A new hierarchy or a changed metric drops exactly the objects built on the old one.
"""
from __future__ import annotations

from engine.core import backend as backends
from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable


class Workspace:
    def __init__(self, graph: RoadGraph, backend=None) -> None:
        self.graph = graph
        self.backend = backend or backends.current()
        self.hierarchy = None            # engine.ch.Hierarchy, attached to ``graph``
        self._routers: dict = {}         # (metric name, metric hash, hierarchy id) -> Router
        self._csp: dict = {}             # CspQuery by its options (and hierarchy's id)
        self._csp_hierarchies: dict = {}  # (minimize, budget metric) -> ParetoHierarchy
        self._trees: dict = {}           # (metric name, metric hash) -> TreeQuery
        self._phast = None               # PhastQuery on ``hierarchy``
        self._warm: set = set()          # keys of work already run once
        self.partition = None            # engine.crp.Partition of ``graph``
        self._overlay = None             # engine.crp.Overlay on ``partition``
        self._customizer = None          # engine.crp.Customizer of that overlay on ``backend``
        self.cell_metric = None          # engine.crp.CellMetric: the last customization
        self._crp_query = None           # CrpQuery on (overlay, cell_metric)

    # --------------------------------------------------------------- hierarchy
    def set_hierarchy(self, hierarchy) -> None:
        """Use ``hierarchy`` (None drops it); routers and PHAST built on the old one go."""
        if hierarchy is not None and hierarchy.graph is not self.graph:
            hierarchy.attach(self.graph)
        self.hierarchy = hierarchy
        self._phast = None
        self._routers = {k: r for k, r in self._routers.items() if k[2] is None}

    def load_hierarchy(self, path):
        from engine.ch import Hierarchy
        h = Hierarchy.load(path, self.graph)
        self.set_hierarchy(h)
        return h

    # ----------------------------------------------------------------- queries
    def router(self, metric: str | None = None):
        """The best point-to-point router for ``metric`` (engine.routing.router_for),
        warmed up once."""
        from engine.routing import router_for
        m = self.graph.metric_of(metric)
        h = self.hierarchy if self.hierarchy is not None and self.hierarchy.serves(m) else None
        key = (m.name, m.hash, None if h is None else id(h))
        if key not in self._routers:
            router = router_for(self.graph, m.name, h)
            self._warm_up_router(router)
            self._routers[key] = router
        return self._routers[key]

    def _warm_up_router(self, router) -> None:
        if self.graph.num_nodes:
            try:
                router.route(0, self.graph.num_nodes - 1)
            except Unreachable:
                pass

    def tree_query(self, metric: str | None = None):
        """The direct SSSP TreeQuery for ``metric`` on this backend."""
        from engine.sssp import TreeQuery
        m = self.graph.metric_of(metric)
        key = (m.name, m.hash)
        if key not in self._trees:
            self._trees[key] = TreeQuery(self.graph, m.name, self.backend)
        return self._trees[key]

    def phast_query(self, metric: str | None = None):
        """PHAST on the current hierarchy, which must have been built for ``metric``."""
        h = self.hierarchy
        if h is None:
            raise ValueError("there is no contraction hierarchy: contract the graph first")
        h.check_metric(self.graph.metric_of(metric or h.metric))
        if self._phast is None:
            from engine.ch.phast import PhastQuery
            self._phast = PhastQuery(h, self.backend)
        return self._phast

    # -------------------------------------------------------------------- CRP
    def set_partition(self, partition) -> None:
        """Use ``partition`` (refused for another graph); the overlay and the
        customization built on the old one go."""
        if partition is not None and not partition.matches(self.graph):
            raise ValueError("the partition was made for another graph")
        self.partition = partition
        self._overlay = self._customizer = self.cell_metric = self._crp_query = None

    def load_partition(self, path):
        from engine.crp.partition.nested import Partition
        p = Partition.load(path, self.graph)
        self.set_partition(p)
        return p

    def overlay(self, progress=None, cancel=None):
        """The CRP overlay, built on first use (partitioning with defaults if needed)."""
        if self.partition is None:
            from engine.crp.partition.nested import partition_graph
            self.set_partition(partition_graph(self.graph, progress=progress, cancel=cancel))
        if self._overlay is None:
            from engine.crp.partition.overlay import Overlay
            self._overlay = Overlay(self.graph, self.partition)
        return self._overlay

    def customizer(self, cancel=None):
        """The CRP Customizer of the overlay on this backend: one per overlay, so its
        uploads, microcode and device layout serve every metric edit."""
        overlay = self.overlay(cancel=cancel)
        if self._customizer is None or self._customizer.overlay is not overlay:
            from engine.crp.customization.customize import Customizer
            self._customizer = Customizer(overlay, self.backend)
        return self._customizer

    def customize(self, decoder, cancel=None, on_level=None, timed: bool = True):
        """Customize the overlay for ``decoder`` on this backend; becomes the metric
        that CRP routes use. When its times are shown (``timed``), the first
        customization per backend is preceded by an untimed one, so they exclude
        compilation."""
        customizer = self.customizer(cancel=cancel)
        if timed:
            self.warm_once(("crp", id(customizer.overlay), self.backend.name),
                           lambda: customizer.customize(decoder))
        metric = customizer.customize(decoder, cancel=cancel, on_level=on_level)
        self.cell_metric = metric
        if self._crp_query is not None:
            self._crp_query.set_metric(metric)        # same overlay: its buffers are reused
        return metric

    def current_metric(self):
        """The CRP customization routes use now; ValueError when there is none."""
        if self.cell_metric is None:
            raise ValueError("there is no CRP customization: customize a decoder first")
        return self.cell_metric

    def crp_router(self):
        """The CRP query on the current customization, warmed up once."""
        metric = self.current_metric()
        if self._crp_query is None:
            from engine.crp.query.router import CrpQuery
            self._crp_query = CrpQuery(self._overlay, metric, self.customizer().query_space)
            self._warm_up_router(self._crp_query)
        return self._crp_query

    def csp_query(self, minimize: str, budget_metric: str, bounds: bool = True,
                  lagrangian: str = "auto", hierarchy: bool = False):
        """The cost-budgeted path query for (length, cost) metrics, compiled and warmed
        up once (a first query's time never includes compilation); with ``hierarchy``
        on the bi-criteria hierarchy of the two metrics (set, loaded, or built once)."""
        h = self.csp_hierarchy(minimize, budget_metric) if hierarchy else None
        key = (minimize, budget_metric, bounds, lagrangian, None if h is None else id(h))
        if key not in self._csp:
            from engine.csp import CspQuery
            query = CspQuery(self.graph, minimize, budget_metric, bounds=bounds,
                             backend=self.backend, lagrangian=lagrangian, hierarchy=h)
            if self.graph.num_arcs:
                a = 0
                try:
                    query.solve(int(self.graph.tail[a]), int(self.graph.head[a]), 2**40, pareto=True)
                except Unreachable:
                    pass
            self._csp[key] = query
        return self._csp[key]

    def csp_hierarchy(self, minimize: str, budget_metric: str, build: bool = True,
                      progress=None):
        """The bi-criteria hierarchy of two metrics (engine.csp.hierarchy.build): the one
        set or loaded for them, else built now (``progress(done, total)`` per round) and
        kept; None when there is none and ``build`` is False."""
        h = self._csp_hierarchies.get((minimize, budget_metric))
        if h is not None and h.serves(self.graph, minimize, budget_metric):
            return h
        if not build:
            return None
        from engine.csp.hierarchy.build import pareto_hierarchy_for
        from engine.csp.query.budgeted import require_metrics
        require_metrics(self.graph, minimize, budget_metric)
        return self._keep_csp_hierarchy(pareto_hierarchy_for(self.graph, minimize, budget_metric,
                                                             progress=progress))

    def set_csp_hierarchy(self, h):
        """Use ``h`` for its two metrics (refused unless built from this graph's)."""
        from engine.csp.hierarchy.file import check_fits
        check_fits(h, self.graph, *h.metrics)
        return self._keep_csp_hierarchy(h)

    def _keep_csp_hierarchy(self, h):
        """``h``, known to fit this graph, for its two metrics; the queries made on the
        one it replaces go."""
        self._csp_hierarchies[tuple(h.metrics)] = h
        live = {id(x) for x in self._csp_hierarchies.values()}
        self._csp = {k: q for k, q in self._csp.items() if k[4] is None or k[4] in live}
        return h

    def load_csp_hierarchy(self, path, minimize: str | None = None,
                           budget_metric: str | None = None):
        """A saved bi-criteria hierarchy (.rlb) for this graph (and these metrics, when
        given), validated and checked against the graph as it loads, then used."""
        from engine.csp.hierarchy.file import load_pareto_hierarchy
        return self._keep_csp_hierarchy(load_pareto_hierarchy(path, self.graph, minimize,
                                                              budget_metric))

    def warm_once(self, key, fn) -> None:
        """Run ``fn()`` untimed the first time ``key`` is seen: compilation, tuning and
        first-touch allocation happen there, not in a timed run."""
        if key not in self._warm:
            fn()
            self._warm.add(key)
