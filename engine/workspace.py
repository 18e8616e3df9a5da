"""Workspace: the engine's state for one graph, with no Qt.

It holds the graph, the backend, the routing model (engine.model: the turn-expanded
graph where turns matter), the current contraction hierarchy and the query objects
built on them (routers, tree queries, PHAST). Whoever queries owns one: the
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
        self.gpu_devices = None          # CUDA ids CRP customizes on (None: every visible GPU)
        self.cell_metric = None          # engine.crp.CellMetric: the last customization
        self._crp_query = None           # CrpQuery on (overlay, cell_metric)
        self._turns = None               # engine.core.turns.Turns of ``graph``
        self._models: dict = {}          # ((metric, hash), ...) -> engine.model.TurnModel
        self.input_files: tuple = ()     # (label, path) of the files the graph came from: never written
        # a run that answers one query and exits (the command line): no router warm-up
        # (its query runs once untimed anyway), and plain routes by SciPy's compiled
        # Dijkstra, so that the process never loads Numba for them (routing.scipy_dijkstra)
        self.one_shot = False

    # ------------------------------------------------------------ the model
    def turns(self):
        """Every allowed turn of the graph (engine.core.turns), built once."""
        if self._turns is None:
            from engine.core.turns import turn_graph
            self._turns = turn_graph(self.graph)
        return self._turns

    def turn_model(self, metrics, force: bool = False):
        """The TurnModel (engine.model) of these metric names under their default
        decoders, built once; None when no metric needs turns, so that the node-based
        search on the road graph is the same answer, unless ``force``."""
        from engine.model.defaults import default_decoder, needs_turns, turns_change_nothing
        names = tuple(self.graph.metric_of(m).name for m in metrics)
        if not force and all(turns_change_nothing(self.graph, n) for n in names):
            return None                 # known without building a decoder (engine.crp)
        decoders = {n: default_decoder(self.graph, n) for n in names}
        if not force and not any(needs_turns(self.graph, d) for d in decoders.values()):
            return None
        key = tuple((n, self.graph.metric_of(n).hash) for n in names)
        if key not in self._models:
            from engine.model.expanded import turn_model
            self._models[key] = turn_model(self.graph, decoders, self.turns())
        return self._models[key]

    def model_for(self, metric: str | None = None, node_based: bool = False):
        """The TurnModel that searches for ``metric`` run on, or None for the road graph
        itself: when ``node_based`` is asked for, or when turns change nothing and no
        turn-aware hierarchy of the metric is loaded."""
        if node_based:
            return None
        name = self.graph.metric_of(metric).name
        h = self.hierarchy
        return self.turn_model((name,), force=h is not None and h.turn_aware and h.metric == name)

    # --------------------------------------------------------------- hierarchy
    def set_hierarchy(self, hierarchy, path=None) -> None:
        """Use ``hierarchy`` (None drops it); routers and PHAST built on the old one go.
        A turn-aware one belongs to the turn model's expanded graph of its metric."""
        if hierarchy is not None:
            graph = self._hierarchy_graph(hierarchy, path)
            if hierarchy.graph is not graph:
                hierarchy.attach(graph, path)
        self.hierarchy = hierarchy
        self._phast = None
        # routers of the old hierarchy go, and so do the searches without one that the new
        # one serves (its CH query answers them; a turn-aware bidirectional Dijkstra holds
        # about 600 B per road node)
        self._routers = {k: r for k, r in self._routers.items()
                         if k[2] is None and not (hierarchy is not None and
                                                  self.hierarchy_serves(k[0], node_based=k[3]))}

    def load_hierarchy(self, path):
        from engine.ch import Hierarchy
        h = Hierarchy.load(path)
        self.set_hierarchy(h, path)
        return h

    def _hierarchy_graph(self, hierarchy, path=None):
        if not hierarchy.turn_aware:
            return self.graph
        from engine.io import LoadError
        g, p = self.graph, hierarchy.params
        if (p.get("road_nodes"), p.get("road_arcs")) != (g.num_nodes, g.num_arcs):
            raise LoadError(path, f"this turn-aware hierarchy belongs to a graph of "
                                  f"{p.get('road_nodes', 0):,} nodes and {p.get('road_arcs', 0):,} "
                                  f"arcs, not to {g.num_nodes:,} / {g.num_arcs:,}")
        if hierarchy.metric not in self.graph.metrics:
            raise LoadError(path, f"this hierarchy is for the metric {hierarchy.metric!r}, which "
                                  f"this graph does not have ({', '.join(self.graph.metrics)})")
        return self.turn_model((hierarchy.metric,), force=True).expanded

    # ----------------------------------------------------------------- queries
    def hierarchy_serves(self, metric: str | None = None, node_based: bool = False) -> bool:
        """Whether the current hierarchy answers ``metric``'s queries in the model asked
        for (its graph is the one searches run on, its weights that metric's)."""
        h = self.hierarchy
        if h is None:
            return False
        model = self.model_for(metric, node_based)
        graph = self.graph if model is None else model.expanded
        return h.graph is graph and h.serves(graph.metric_of(self.graph.metric_of(metric).name))

    def router(self, metric: str | None = None, node_based: bool = False):
        """The best point-to-point router for ``metric``, warmed up once: turn-aware
        (engine.model.router) unless turns change nothing or ``node_based`` is asked
        for (engine.routing.router_for); the CH query where the hierarchy serves it."""
        m = self.graph.metric_of(metric)
        model = self.model_for(m.name, node_based)
        h = self.hierarchy if self.hierarchy_serves(m.name, node_based) else None
        key = (m.name, m.hash, None if h is None else id(h), model is None)
        if key not in self._routers:
            if model is None and h is None and self.one_shot and self._scipy_exact(m.name):
                from engine.routing.scipy_dijkstra import ScipyDijkstra
                router = ScipyDijkstra(self.graph, m.name)
            elif model is None:
                from engine.routing import router_for
                router = router_for(self.graph, m.name, h)
            else:
                from engine.model.router import turn_aware_router
                router = turn_aware_router(model, m.name, h)
            if not self.one_shot:
                self._warm_up_router(router)
            self._routers[key] = router
        return self._routers[key]

    def prepare(self, metric: str | None = None) -> None:
        """What a graph load does for the first click: the road graph's router is built
        and warmed up. Where turns matter the turn model and its router (1 M road nodes:
        about 4 s and 0.7 GB) are left to the prepare job (engine.capabilities.prepare)
        or the first route, and only their code is compiled now, on a tiny network."""
        from engine.model.hierarchy import turns_matter
        name = self.graph.metric_of(metric).name
        if not turns_matter(self.graph, name):
            self.router(name)
        elif not self.one_shot:
            compile_turn_aware_router(self.backend)

    def _scipy_exact(self, metric: str) -> bool:
        from engine.routing.scipy_dijkstra import exact_in_float
        return exact_in_float(self.graph.metric(metric))

    def _warm_up_router(self, router) -> None:
        """Compile the router with a short route (node 0 to a neighbour: a path is found,
        so the code that reads it is compiled too) rather than a search across the map,
        which on a graph load held the engine thread for seconds."""
        g = self.graph
        if not g.num_nodes:
            return
        near = int(g.head[g.first_out[0]]) if g.first_out[1] > g.first_out[0] else g.num_nodes - 1
        # the CH query is cheap across the map too, and a far pair compiles its core join
        for target in (near, g.num_nodes - 1) if router.name == "ch" else (near,):
            try:
                router.route(0, target)
            except Unreachable:
                pass

    def warm_up_hierarchy(self) -> None:
        """Build and compile the router of the current hierarchy's metric now (in the job
        that made or opened it), so that the first click after it is not a compilation."""
        if self.hierarchy is not None:
            self.router(self.hierarchy.metric)

    def tree_query(self, metric: str | None = None, model=None):
        """The direct SSSP TreeQuery for ``metric`` on this backend: on the road graph,
        or on ``model``'s expanded graph (engine.model)."""
        from engine.sssp import TreeQuery
        graph = self.graph if model is None else model.expanded
        m = graph.metric_of(metric)
        key = (m.name, m.hash, id(graph))
        if key not in self._trees:
            self._trees[key] = TreeQuery(graph, m.name, self.backend)
        return self._trees[key]

    def phast_query(self, metric: str | None = None):
        """PHAST on the current hierarchy, which must have been built for ``metric``
        (on the graph it is attached to: the road graph or a turn model's)."""
        h = self.hierarchy
        if h is None:
            raise ValueError("there is no contraction hierarchy: contract the graph first")
        h.check_metric(h.graph.metric_of(metric or h.metric))
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
            devices = self._device_backends()
            self._customizer = Customizer(overlay, devices[0], devices=devices)
        return self._customizer

    def use_devices(self, ids) -> None:
        """Customize CRP on these CUDA devices (ids; None: every visible GPU); the
        customizer is rebuilt for new ones. ValueError on the CPU backend."""
        ids = tuple(ids) if ids is not None else None
        if ids is not None and not self.backend.is_gpu:
            raise ValueError(f"GPU devices {','.join(map(str, ids))} were asked for, but this "
                             f"run uses the CPU ({self.backend.describe()})")
        if ids != self.gpu_devices:
            self.gpu_devices, self._customizer = ids, None

    def _device_backends(self) -> list:
        """The Backends customization runs on: ``backend`` alone on the CPU, else one per
        GPU of ``gpu_devices`` (the workspace's own for its device)."""
        if not self.backend.is_gpu:
            return [self.backend]
        ids = self.gpu_devices or tuple(range(backends.device_count())) or (self.backend.device_id,)
        return [self.backend if i == self.backend.device_id else backends.gpu_backend(i)
                for i in ids]

    def customize(self, decoder, cancel=None, on_level=None, timed: bool = True):
        """Customize the overlay for ``decoder`` on this backend; becomes the metric
        that CRP routes use. When its times are shown (``timed``), the first
        customization per backend is preceded by an untimed one, so they exclude
        compilation."""
        customizer = self.customizer(cancel=cancel)
        if timed:
            self.warm_once(("crp", id(customizer.overlay), self.backend.name,
                            tuple(d.device_id for d in customizer.devices)),
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
            customizer = self.customizer()
            self._crp_query = CrpQuery(self._overlay, metric, customizer.query_space,
                                       customizer.backend)
            if not self.one_shot:               # a one-shot route's query runs untimed first
                self._warm_up_router(self._crp_query)
        return self._crp_query

    def csp_graph(self, minimize: str, budget_metric: str):
        """(graph, model) cost-budgeted paths of these metrics search on: the turn model's
        expanded graph of both (engine.model), or the road graph where turns change
        nothing (model None)."""
        model = self.turn_model((minimize, budget_metric))
        return (self.graph, None) if model is None else (model.expanded, model)

    def csp_query(self, minimize: str, budget_metric: str, bounds: bool = True,
                  lagrangian: str = "auto", hierarchy: bool = False):
        """The cost-budgeted path query for (length, cost) metrics, compiled and warmed
        up once (a first query's time never includes compilation); with ``hierarchy``
        on the bi-criteria hierarchy of the two metrics (set, loaded, or built once)."""
        h = self.csp_hierarchy(minimize, budget_metric) if hierarchy else None
        key = (minimize, budget_metric, bounds, lagrangian, None if h is None else id(h))
        if key not in self._csp:
            from engine.csp import CspQuery
            from engine.csp.query.budgeted import require_metrics
            require_metrics(self.graph, minimize, budget_metric)
            graph, model = self.csp_graph(minimize, budget_metric)
            query = CspQuery(graph, minimize, budget_metric, bounds=bounds,
                             backend=self.backend, lagrangian=lagrangian, hierarchy=h)
            if graph.num_arcs:
                a = 0
                try:
                    query.solve(int(graph.tail[a]), int(graph.head[a]), 2**40, pareto=True)
                except Unreachable:
                    pass
            if model is not None:
                from engine.model.budgeted import TurnAwareCsp
                query = TurnAwareCsp(model, query)
            self._csp[key] = query
        return self._csp[key]

    def csp_hierarchy(self, minimize: str, budget_metric: str, build: bool = True,
                      progress=None):
        """The bi-criteria hierarchy of two metrics (engine.csp.hierarchy.build) on the
        graph their queries search (csp_graph): the one set or loaded for them, else
        built now (``progress(done, total)`` per round) and kept; None when there is
        none and ``build`` is False."""
        graph, _ = self.csp_graph(minimize, budget_metric)
        h = self._csp_hierarchies.get((minimize, budget_metric))
        if h is not None and h.serves(graph, minimize, budget_metric):
            return h
        if not build:
            return None
        from engine.csp.hierarchy.build import pareto_hierarchy_for
        from engine.csp.query.budgeted import require_metrics
        require_metrics(self.graph, minimize, budget_metric)
        return self._keep_csp_hierarchy(pareto_hierarchy_for(graph, minimize, budget_metric,
                                                             progress=progress))

    def set_csp_hierarchy(self, h):
        """Use ``h`` for its two metrics (refused unless built from the graph they search)."""
        from engine.csp.hierarchy.file import check_fits
        check_fits(h, self.csp_graph(*h.metrics)[0], *h.metrics)
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
        """A saved bi-criteria hierarchy (.rlb) for the graph its metrics search (and
        these metrics, when given), validated and checked as it loads, then used."""
        from engine.csp.hierarchy.file import check_fits, load_pareto_hierarchy
        h = load_pareto_hierarchy(path)
        known = all(name in self.graph.metrics for name in h.metrics)
        graph = self.csp_graph(*h.metrics)[0] if known else self.graph
        check_fits(h, graph, minimize or h.metrics[0], budget_metric or h.metrics[1], path)
        return self._keep_csp_hierarchy(h)

    def warm_once(self, key, fn) -> None:
        """Run ``fn()`` untimed the first time ``key`` is seen: compilation, tuning and
        first-touch allocation happen there, not in a timed run."""
        if key not in self._warm:
            fn()
            self._warm.add(key)


WARM_UP_NODES = 400        # a generated network this small builds its turn model in ms
_turn_router_compiled = False     # compile_turn_aware_router ran in this process


def compile_turn_aware_router(backend) -> None:
    """Compile (or load from Numba's cache) the turn model's build and the turn-aware
    router by routing once on a tiny generated network (it has banned turns); once per
    process."""
    global _turn_router_compiled
    if _turn_router_compiled:
        return
    from engine.generate.network import generate_road_network
    tiny = Workspace(generate_road_network(WARM_UP_NODES, seed=1), backend)
    tiny.router(tiny.graph.default_metric)
    _turn_router_compiled = True
