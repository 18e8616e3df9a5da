"""The engine thread (DESIGN principle 6): one long-lived QThread owns the graph and the device.

``EngineWorker`` lives in that thread and holds the current RoadGraph. ``EngineClient``
lives in the GUI thread: its methods send requests to the worker as queued signals, and
it re-emits every answer as its own signal, so GUI code (and tests) only ever connect to
an object of the GUI thread.

Long jobs get a ``CancelToken``; ``EngineClient.cancel()`` calls ``token.cancel()``
directly (thread-safe) and the job ends with ``job_cancelled``. Any exception becomes a
readable message (``job_failed`` / ``route_failed`` / ``tree_failed`` /
``compare_failed`` / ``error``) and the previous graph stays loaded.

Shortest-path trees (engine.sssp) run with the chosen method on the worker's backend and
come back as host NumPy arrays (``TreeAnswer``); ``compare`` runs every method and the
CPU reference from one source and checks that their distances agree (``Comparison``).

Contraction (engine.ch.contract) runs here too: every finished level comes back at once
as ``contract_iteration`` (its step times), the result as ``hierarchy_ready`` with the
``Hierarchy`` (host arrays, read-only for the GUI). ``EngineClient.hierarchy`` is the
current one until another graph is adopted; PHAST tree requests (method ``PHAST``) and
saves carry it to the worker, and an ``.rlh`` file can be opened (``Hierarchy.load``
refuses a hierarchy of another graph).
"""
from __future__ import annotations

import atexit
import inspect
import itertools
import sys
import time
import traceback
import weakref
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from engine import backend as engine_backend
from engine import paths, phast, reference, sssp
from engine.ch import Hierarchy, contract
from engine.graph import RoadGraph
from engine.io.errors import LoadError
from engine.progress import Cancelled, CancelToken
from engine.summary import route_summary

from app.network_geometry import NetworkDrawing, build_drawing, route_polyline

DEFAULT_NETWORK_NODES = 100_000
DEFAULT_NETWORK_SEED = 1
PROGRESS_INTERVAL_S = 0.05
COMPARE_RUNS = 3            # timed runs per method after one warm-up run ...
COMPARE_BUDGET_S = 1.0      # ... fewer when a method has used this much time
REFERENCE = "reference"
REFERENCE_LABEL = "CPU reference (scipy Dijkstra)"
PHAST = "phast"                       # tree method: PHAST on the current hierarchy
PHAST_LABEL = "PHAST (hierarchy)"


def method_label(name: str) -> str:
    """A tree method's name as people read it (engine.sssp.METHODS, or PHAST)."""
    return PHAST_LABEL if name == PHAST else sssp.METHODS[name][1]

# job(progress, cancel) -> RoadGraph; runs on the engine thread, must not touch Qt.
GraphFn = Callable[..., RoadGraph]


@dataclass(frozen=True)
class GraphJob:
    job_id: int
    label: str            # shown while it runs, e.g. "Opening NY.gr"
    fn: GraphFn
    token: CancelToken


@dataclass(frozen=True)
class LoadedGraph:
    job_id: int
    serial: int                      # changes with every graph the worker adopts
    graph: RoadGraph
    drawing: NetworkDrawing | None   # None when the graph has no coordinates
    seconds: float


@dataclass(frozen=True)
class RouteRequest:
    request_id: int
    graph_serial: int
    source: int           # internal node indices
    target: int
    metric: str


@dataclass(frozen=True)
class RouteResult:
    request_id: int
    source: int
    target: int
    metric: str
    path: paths.Path
    xy: np.ndarray | None    # [k, 2] polyline along arc geometry, None without coordinates
    summary: str
    compute_ms: float


@dataclass(frozen=True)
class TreeRequest:
    request_id: int
    graph_serial: int
    source: int
    metric: str
    method: str           # "auto", a key of engine.sssp.METHODS, or PHAST
    hierarchy: Hierarchy | None = None    # for PHAST


@dataclass(frozen=True)
class TreeAnswer:
    request_id: int
    source: int
    metric: str
    method: str           # the method that ran ("auto" resolved)
    backend: str          # e.g. "GPU: NVIDIA H100 80GB HBM3 (80 GiB)"
    compute_ms: float     # on the device
    total_ms: float       # with the copy to host memory
    tree: paths.ShortestPathTree
    stats: dict
    level_ms: dict | None = None   # PHAST: {"up": [ms per level], "core": ms, "down": [...]}


@dataclass(frozen=True)
class CompareRequest:
    request_id: int
    graph_serial: int
    source: int
    metric: str
    token: CancelToken


@dataclass(frozen=True)
class MethodTiming:
    name: str             # a METHODS key or REFERENCE
    label: str
    ms: float             # best of ``runs`` timed runs after a warm-up, host arrays included
    runs: int
    mismatches: int       # nodes whose distance differs from the reference's
    example: str = ""     # one mismatch, "node ID: got X, reference Y"


@dataclass(frozen=True)
class Comparison:
    request_id: int
    source: int
    metric: str
    backend: str
    timings: tuple[MethodTiming, ...]   # METHODS order, the reference last

    @property
    def exact(self) -> bool:
        return all(t.mismatches == 0 for t in self.timings)

    @property
    def verdict(self) -> str:
        bad = [f"{t.name}: {t.mismatches:,} distances differ ({t.example})"
               for t in self.timings if t.mismatches]
        return "all exact" if not bad else "MISMATCH — " + "; ".join(bad)


@dataclass(frozen=True)
class ContractRequest:
    job_id: int
    graph_serial: int
    metric: str
    K: int
    C: float
    token: CancelToken


@dataclass(frozen=True)
class HierarchyFileRequest:
    job_id: int
    graph_serial: int
    path: str


@dataclass(frozen=True)
class HierarchyAnswer:
    job_id: int
    graph_serial: int
    hierarchy: Hierarchy
    origin: str           # "contracted", or the file it was opened from
    seconds: float        # wall time of the job


def readable(exc: BaseException) -> str:
    """A message a person can act on: LoadError text as is, else type and message."""
    if isinstance(exc, (LoadError, paths.Unreachable)):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "out of memory"
    text = str(exc) or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}" if not isinstance(exc, KeyError) else text.strip("'\"")


def generate_default_network(num_nodes: int, seed: int, progress, cancel) -> RoadGraph:
    try:
        from engine.generate import generate_road_network
    except ImportError as e:
        raise RuntimeError(f"the road network generator is not available ({e})") from None
    params = inspect.signature(generate_road_network).parameters
    extra = {k: v for k, v in (("progress", progress), ("cancel", cancel)) if k in params}
    return generate_road_network(num_nodes=num_nodes, seed=seed, **extra)


def _open_files(paths: list[str], progress, cancel) -> RoadGraph:
    from engine import io
    return io.load(paths, progress=progress, cancel=cancel)


class EngineWorker(QObject):
    """Runs on the engine thread. Slots are called through queued signals only."""

    backend_ready = Signal(str, str)            # name, description
    job_started = Signal(int, str)              # job id, label
    job_progress = Signal(int, float, str)      # job id, fraction, message
    job_cancelled = Signal(int, str)
    job_failed = Signal(int, str)
    graph_loaded = Signal(object)               # LoadedGraph
    route_found = Signal(object)                # RouteResult
    route_failed = Signal(int, str)             # request id, message
    tree_found = Signal(object)                 # TreeAnswer
    tree_failed = Signal(int, str)              # request id, message
    compare_progress = Signal(int, float, str)  # request id, fraction, message
    compare_done = Signal(object)               # Comparison
    compare_failed = Signal(int, str)           # request id, message
    compare_cancelled = Signal(int)
    contract_progress = Signal(int, float, str)  # job id, fraction, message
    contract_iteration = Signal(int, object)    # job id, iteration record (dict)
    contract_cancelled = Signal(int)
    hierarchy_ready = Signal(object)            # HierarchyAnswer (contracted or opened)
    hierarchy_failed = Signal(int, str)         # job id, message
    saved = Signal(str)
    error = Signal(str)

    def __init__(self, backend_choice: str = "auto") -> None:
        super().__init__()
        self.backend_choice = backend_choice
        self.backend = None
        self.graph: RoadGraph | None = None
        self.drawing: NetworkDrawing | None = None
        self.serial = 0
        self._warm: set[tuple] = set()     # (graph serial, metric, method) run once already
        self._phast: phast.PhastQuery | None = None

    @Slot()
    def on_started(self) -> None:
        """Thread started: choose the backend here, so device state belongs to this thread."""
        try:
            self.backend = engine_backend.select(self.backend_choice)
        except Exception as e:
            self.error.emit(f"{readable(e)}; using the CPU")
            self.backend = engine_backend.select("cpu")
        self.backend_ready.emit(self.backend.name, self.backend.describe())

    @Slot(object)
    def run_graph_job(self, job: GraphJob) -> None:
        self.job_started.emit(job.job_id, job.label)
        started = time.perf_counter()
        progress = self._progress_fn(job.job_id)
        try:
            job.token.check()
            graph = job.fn(progress=progress, cancel=job.token)
            job.token.check()
            progress(0.97, "Preparing the map")
            _ = graph.tail, graph.xy            # fill the lazy caches on this thread
            drawing = build_drawing(graph)
            reference.scipy_matrix(graph, graph.default_metric)   # built once, cached by the engine
            job.token.check()
        except Cancelled:
            self.job_cancelled.emit(job.job_id, f"{job.label}: cancelled")
            return
        except BaseException as e:  # noqa: BLE001 - nothing may kill the window
            if not isinstance(e, LoadError):   # bad input is expected; anything else is a bug
                traceback.print_exc(file=sys.stderr)
            self.job_failed.emit(job.job_id, readable(e))
            return
        self.graph, self.drawing = graph, drawing
        self.serial += 1
        self.graph_loaded.emit(LoadedGraph(job.job_id, self.serial, graph, drawing,
                                           time.perf_counter() - started))

    @Slot(object)
    def route(self, req: RouteRequest) -> None:
        graph = self.graph
        try:
            if graph is None or req.graph_serial != self.serial:
                raise RuntimeError("the graph changed; route again")
            matrix = reference.scipy_matrix(graph, req.metric)
            t0 = time.perf_counter()
            tree = reference.sssp(graph, req.source, req.metric, matrix)
            path = paths.path_from_tree(graph, tree, req.target)
            ms = (time.perf_counter() - t0) * 1000
            xy = None if self.drawing is None else route_polyline(self.drawing.points, graph, path.arcs)
            text = route_summary(graph, path).text(ms)
        except BaseException as e:  # noqa: BLE001
            if not isinstance(e, paths.Unreachable):
                traceback.print_exc(file=sys.stderr)
            self.route_failed.emit(req.request_id, readable(e))
            return
        self.route_found.emit(RouteResult(req.request_id, req.source, req.target, req.metric,
                                          path, xy, text, ms))

    def _graph_for(self, graph_serial: int) -> RoadGraph:
        if self.graph is None or graph_serial != self.serial:
            raise RuntimeError("the graph changed; try again")
        return self.graph

    def _tree(self, graph: RoadGraph, source: int, metric: str, method: str) -> sssp.TreeResult:
        """One tree; the first run of a method on a graph compiles and tunes it, so it
        runs once untimed first (DESIGN principle 4: warm up before showing timings)."""
        key = (self.serial, metric, method)
        if key not in self._warm:
            sssp.shortest_path_tree(graph, source, metric, method, self.backend)
            self._warm.add(key)
        return sssp.shortest_path_tree(graph, source, metric, method, self.backend)

    def _phast_tree(self, h: Hierarchy | None, source: int, metric: str) -> phast.PhastResult:
        """A PHAST tree with per-level times on hierarchy ``h`` (warmed up once)."""
        if h is None:
            raise RuntimeError("there is no contraction hierarchy: contract the graph first")
        if h.metric != metric:
            raise RuntimeError(f"the hierarchy was built for the metric {h.metric!r}; contract "
                               f"again for {metric!r} or choose another method")
        if self._phast is None or self._phast.hierarchy is not h:
            self._phast = phast.PhastQuery(h, self.backend)
            self._phast.tree(source, per_level=True)        # warm-up
        return self._phast.tree(source, per_level=True)

    @Slot(object)
    def tree(self, req: TreeRequest) -> None:
        try:
            graph = self._graph_for(req.graph_serial)
            if req.method == PHAST:
                r = self._phast_tree(req.hierarchy, req.source, req.metric)
                method, stats, level_ms = PHAST, {}, r.level_ms
            else:
                r = self._tree(graph, req.source, req.metric, req.method)   # "auto": engine's choice
                method, stats, level_ms = r.method, r.stats, None
        except BaseException as e:  # noqa: BLE001
            traceback.print_exc(file=sys.stderr)
            self.tree_failed.emit(req.request_id, readable(e))
            return
        self.tree_found.emit(TreeAnswer(req.request_id, req.source, r.tree.metric, method,
                                        self.backend.describe(), r.compute_ms, r.total_ms,
                                        r.tree, stats, level_ms))

    @Slot(object)
    def contract(self, req: ContractRequest) -> None:
        """Contract the graph; every level's record goes out as it is done."""
        started = time.perf_counter()
        try:
            graph = self._graph_for(req.graph_serial)
            req.token.check()
            h = contract(graph, req.metric, K=req.K, C=req.C, backend=self.backend,
                         progress=self._progress_fn(req.job_id, self.contract_progress),
                         cancel=req.token,
                         on_iteration=lambda r: self.contract_iteration.emit(req.job_id, dict(r)))
        except Cancelled:
            self.contract_cancelled.emit(req.job_id)
            return
        except BaseException as e:  # noqa: BLE001
            if not isinstance(e, ValueError):       # bad K or C is the person's input
                traceback.print_exc(file=sys.stderr)
            self.hierarchy_failed.emit(req.job_id, readable(e))
            return
        self.hierarchy_ready.emit(HierarchyAnswer(req.job_id, req.graph_serial, h, "contracted",
                                                  time.perf_counter() - started))

    @Slot(object)
    def open_hierarchy(self, req: HierarchyFileRequest) -> None:
        started = time.perf_counter()
        try:
            graph = self._graph_for(req.graph_serial)
            h = Hierarchy.load(req.path, graph)
        except BaseException as e:  # noqa: BLE001
            if not isinstance(e, LoadError):
                traceback.print_exc(file=sys.stderr)
            self.hierarchy_failed.emit(req.job_id, readable(e))
            return
        self.hierarchy_ready.emit(HierarchyAnswer(req.job_id, req.graph_serial, h, req.path,
                                                  time.perf_counter() - started))

    @Slot(str, object)
    def save_hierarchy(self, path: str, h: Hierarchy) -> None:
        try:
            written = h.save(path)
        except BaseException as e:  # noqa: BLE001
            traceback.print_exc(file=sys.stderr)
            self.error.emit(f"Could not save the hierarchy: {readable(e)}")
            return
        self.saved.emit(str(written))

    @Slot(object)
    def compare(self, req: CompareRequest) -> None:
        """Every method and the reference from one source: best time, agreement."""
        progress = self._progress_fn(req.request_id, self.compare_progress)
        try:
            graph = self._graph_for(req.graph_serial)
            matrix = reference.scipy_matrix(graph, req.metric)
            runs = {name: partial(sssp.shortest_path_tree, graph, req.source, req.metric,
                                  name, self.backend) for name in sssp.METHODS}
            labels = {name: label for name, (_, label) in sssp.METHODS.items()}
            runs[REFERENCE] = partial(_reference_tree, graph, req.source, req.metric, matrix)
            labels[REFERENCE] = REFERENCE_LABEL
            measured = {}
            for i, (name, run) in enumerate(runs.items()):
                progress(i / len(runs), f"Comparing: {labels[name]}")
                measured[name] = _best_of(run, req.token)
            self._warm.update((self.serial, req.metric, name) for name in sssp.METHODS)
            progress(1.0, "Comparing: checking distances")
            ref = measured[REFERENCE][0]
            timings = tuple(MethodTiming(name, labels[name], ms, n, *_mismatches(graph, d, ref))
                            for name, (d, ms, n) in measured.items())
        except Cancelled:
            self.compare_cancelled.emit(req.request_id)
            return
        except BaseException as e:  # noqa: BLE001
            traceback.print_exc(file=sys.stderr)
            self.compare_failed.emit(req.request_id, readable(e))
            return
        self.compare_done.emit(Comparison(req.request_id, req.source, req.metric,
                                          self.backend.describe(), timings))

    @Slot(str)
    def save_cache(self, path: str) -> None:
        try:
            if self.graph is None:
                raise RuntimeError("no graph is loaded")
            from engine.io.cache import save_cache
            written = save_cache(self.graph, path)
        except BaseException as e:  # noqa: BLE001
            traceback.print_exc(file=sys.stderr)
            self.error.emit(f"Could not save the cache: {readable(e)}")
            return
        self.saved.emit(str(written or path))

    def _progress_fn(self, job_id: int, signal=None):
        """progress(fraction, message) for engine code; emits at most every 50 ms."""
        last = [0.0, None]
        signal = signal or self.job_progress

        def progress(fraction: float, message: str = "") -> None:
            now = time.perf_counter()
            if message != last[1] or now - last[0] >= PROGRESS_INTERVAL_S or fraction >= 1:
                last[0], last[1] = now, message
                signal.emit(job_id, float(fraction), message)
        return progress


def _reference_tree(graph: RoadGraph, source: int, metric: str, matrix):
    t0 = time.perf_counter()
    tree = reference.sssp(graph, source, metric, matrix)
    return tree, (time.perf_counter() - t0) * 1000


def _best_of(run, token: CancelToken) -> tuple[np.ndarray, float, int]:
    """(distances, best ms, timed runs) of ``run() -> TreeResult | (tree, ms)``: one
    warm-up run, then up to COMPARE_RUNS timed ones within COMPARE_BUDGET_S."""
    def once():
        token.check()
        r = run()
        return (r.tree, r.total_ms) if isinstance(r, sssp.TreeResult) else r
    once()
    times, spent = [], time.perf_counter()
    while len(times) < COMPARE_RUNS and (not times or time.perf_counter() - spent < COMPARE_BUDGET_S):
        tree, ms = once()
        times.append(ms)
    return tree.distance, min(times), len(times)


def _mismatches(graph: RoadGraph, distance: np.ndarray, ref: np.ndarray) -> tuple[int, str]:
    bad = np.flatnonzero(distance != ref)
    if bad.size == 0:
        return 0, ""
    v = int(bad[0])
    return int(bad.size), f"node {graph.node_id[v]}: got {distance[v]}, reference {ref[v]}"


class EngineClient(QObject):
    """GUI-thread face of the engine thread: typed requests, answers re-emitted here."""

    backend_ready = Signal(str, str)
    job_started = Signal(int, str)
    job_progress = Signal(int, float, str)
    job_cancelled = Signal(int, str)
    job_failed = Signal(int, str)
    graph_loaded = Signal(object)
    route_found = Signal(object)
    route_failed = Signal(int, str)
    tree_found = Signal(object)
    tree_failed = Signal(int, str)
    compare_progress = Signal(int, float, str)
    compare_done = Signal(object)
    compare_failed = Signal(int, str)
    compare_cancelled = Signal(int)
    contract_progress = Signal(int, float, str)
    contract_iteration = Signal(int, object)
    contract_cancelled = Signal(int)
    hierarchy_ready = Signal(object)
    hierarchy_failed = Signal(int, str)
    saved = Signal(str)
    error = Signal(str)

    # requests, delivered to the worker's thread
    _run_graph_job = Signal(object)
    _route = Signal(object)
    _tree = Signal(object)
    _compare = Signal(object)
    _save_cache = Signal(str)
    _contract = Signal(object)
    _open_hierarchy = Signal(object)
    _save_hierarchy = Signal(str, object)

    def __init__(self, backend_choice: str = "auto", parent=None) -> None:
        super().__init__(parent)
        self.backend_name = ""
        self.backend_description = ""
        self.graph: RoadGraph | None = None
        self.serial = 0
        self._ids = itertools.count(1)
        self._token: CancelToken | None = None
        self.current_job: int | None = None
        self.current_compare: int | None = None
        self._compare_token: CancelToken | None = None
        self.hierarchy: Hierarchy | None = None
        self.current_hierarchy_job: int | None = None     # a contraction or an .rlh being opened
        self._contract_token: CancelToken | None = None
        self._routes = _Newest(self._route)
        self._trees = _Newest(self._tree)

        self._thread = QThread()
        self._thread.setObjectName("RouteLab engine")
        self.worker = EngineWorker(backend_choice)
        self.worker.moveToThread(self._thread)
        self._thread.started.connect(self.worker.on_started)
        self._run_graph_job.connect(self.worker.run_graph_job)
        self._route.connect(self.worker.route)
        self._tree.connect(self.worker.tree)
        self._compare.connect(self.worker.compare)
        self._save_cache.connect(self.worker.save_cache)
        self._contract.connect(self.worker.contract)
        self._open_hierarchy.connect(self.worker.open_hierarchy)
        self._save_hierarchy.connect(self.worker.save_hierarchy)
        w = self.worker
        w.backend_ready.connect(self._on_backend_ready)
        w.job_started.connect(self._on_job_started)
        w.job_progress.connect(self._on_job_progress)
        w.job_cancelled.connect(self._on_job_cancelled)
        w.job_failed.connect(self._on_job_failed)
        w.graph_loaded.connect(self._on_graph_loaded)
        w.route_found.connect(self._on_route_found)
        w.route_failed.connect(self._on_route_failed)
        w.tree_found.connect(self._on_tree_found)
        w.tree_failed.connect(self._on_tree_failed)
        w.compare_progress.connect(self._on_compare_progress)
        w.compare_done.connect(self._on_compare_done)
        w.compare_failed.connect(self._on_compare_failed)
        w.compare_cancelled.connect(self._on_compare_cancelled)
        w.contract_progress.connect(self._on_contract_progress)
        w.contract_iteration.connect(self._on_contract_iteration)
        w.contract_cancelled.connect(self._on_contract_cancelled)
        w.hierarchy_ready.connect(self._on_hierarchy_ready)
        w.hierarchy_failed.connect(self._on_hierarchy_failed)
        w.saved.connect(self._on_saved)
        w.error.connect(self._on_error)
        self._thread.start()
        _running_clients.add(self)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------- requests
    @property
    def busy(self) -> bool:
        return self.current_job is not None

    def open_files(self, paths) -> int:
        paths = [str(p) for p in paths]
        names = ", ".join(p.replace("\\", "/").rsplit("/", 1)[-1] for p in paths)
        return self.load_with(f"Opening {names}", partial(_open_files, paths))

    def generate_default(self, num_nodes: int = DEFAULT_NETWORK_NODES,
                         seed: int = DEFAULT_NETWORK_SEED) -> int:
        return self.load_with(f"Generating a road network of {num_nodes:,} nodes",
                              partial(generate_default_network, num_nodes, seed))

    def adopt_graph(self, graph: RoadGraph, label: str = "Preparing graph") -> int:
        """Hand an already built graph to the engine (tests, future producers)."""
        return self.load_with(label, lambda progress, cancel: graph)

    def load_with(self, label: str, fn: GraphFn) -> int:
        """Run ``fn(progress=, cancel=) -> RoadGraph`` on the engine thread; a running
        load is cancelled first, the newest request wins."""
        self.cancel()
        job = GraphJob(next(self._ids), label, fn, CancelToken())
        self._token, self.current_job = job.token, job.job_id
        self._run_graph_job.emit(job)
        return job.job_id

    def cancel(self) -> None:
        """Cancel the running load, comparison and contraction."""
        for token in (self._token, self._compare_token, self._contract_token):
            if token is not None:
                token.cancel()

    def route(self, source: int, target: int, metric: str) -> int:
        """Ask for a route; while one is computing only the newest request waits."""
        req = RouteRequest(next(self._ids), self.serial, int(source), int(target), metric)
        self._routes.send(req)
        return req.request_id

    def drop_pending_route(self) -> None:
        self._routes.pending = None

    def tree(self, source: int, metric: str, method: str = "auto") -> int:
        """Ask for the shortest-path tree from ``source`` (coalesced like routes);
        method PHAST runs on the current hierarchy."""
        req = TreeRequest(next(self._ids), self.serial, int(source), metric, method,
                          self.hierarchy if method == PHAST else None)
        self._trees.send(req)
        return req.request_id

    def drop_pending_tree(self) -> None:
        self._trees.pending = None

    def compare(self, source: int, metric: str) -> int:
        """Time every SSSP method and the reference from ``source``; a running
        comparison is cancelled first."""
        if self._compare_token is not None:
            self._compare_token.cancel()
        req = CompareRequest(next(self._ids), self.serial, int(source), metric, CancelToken())
        self._compare_token, self.current_compare = req.token, req.request_id
        self._compare.emit(req)
        return req.request_id

    @property
    def comparing(self) -> bool:
        return self.current_compare is not None

    def save_cache(self, path: str) -> None:
        self._save_cache.emit(str(path))

    def contract(self, metric: str, K: int, C: float) -> int:
        """Build a contraction hierarchy of the graph; a running one is cancelled first.
        Ends with ``hierarchy_ready``, ``hierarchy_failed`` or ``contract_cancelled``."""
        self.cancel_contraction()
        req = ContractRequest(next(self._ids), self.serial, metric, int(K), float(C), CancelToken())
        self._contract_token, self.current_hierarchy_job = req.token, req.job_id
        self._contract.emit(req)
        return req.job_id

    def cancel_contraction(self) -> None:
        if self._contract_token is not None:
            self._contract_token.cancel()

    @property
    def contracting(self) -> bool:
        return self._contract_token is not None

    def open_hierarchy(self, path) -> int:
        """Open an .rlh file for the current graph (``hierarchy_ready`` / ``hierarchy_failed``)."""
        self.cancel_contraction()
        req = HierarchyFileRequest(next(self._ids), self.serial, str(path))
        self.current_hierarchy_job, self._contract_token = req.job_id, None
        self._open_hierarchy.emit(req)
        return req.job_id

    def save_hierarchy(self, path) -> None:
        """Save the current hierarchy (``saved`` with the path, or ``error``)."""
        if self.hierarchy is None:
            self.error.emit("There is no contraction hierarchy to save: contract the graph first.")
            return
        self._save_hierarchy.emit(str(path), self.hierarchy)

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        if self._thread.isRunning():
            self.cancel()
            self._thread.quit()
            self._thread.wait(timeout_ms)

    # ---------------------------------------------------- answers (GUI thread)
    def _job_done(self, job_id: int) -> None:
        if job_id == self.current_job:
            self.current_job, self._token = None, None

    @Slot(str, str)
    def _on_backend_ready(self, name: str, description: str) -> None:
        self.backend_name, self.backend_description = name, description
        self.backend_ready.emit(name, description)

    @Slot(int, str)
    def _on_job_started(self, job_id: int, label: str) -> None:
        self.job_started.emit(job_id, label)

    @Slot(int, float, str)
    def _on_job_progress(self, job_id: int, fraction: float, message: str) -> None:
        self.job_progress.emit(job_id, fraction, message)

    @Slot(int, str)
    def _on_job_cancelled(self, job_id: int, message: str) -> None:
        self._job_done(job_id)
        self.job_cancelled.emit(job_id, message)

    @Slot(int, str)
    def _on_job_failed(self, job_id: int, message: str) -> None:
        self._job_done(job_id)
        self.job_failed.emit(job_id, message)

    @Slot(object)
    def _on_graph_loaded(self, loaded: LoadedGraph) -> None:
        self._job_done(loaded.job_id)
        self.graph, self.serial, self.hierarchy = loaded.graph, loaded.serial, None
        self._routes.pending = self._trees.pending = None
        self.graph_loaded.emit(loaded)

    @Slot(object)
    def _on_route_found(self, result: RouteResult) -> None:
        self._routes.done(self.serial)
        self.route_found.emit(result)

    @Slot(int, str)
    def _on_route_failed(self, request_id: int, message: str) -> None:
        self._routes.done(self.serial)
        self.route_failed.emit(request_id, message)

    @Slot(object)
    def _on_tree_found(self, answer: TreeAnswer) -> None:
        self._trees.done(self.serial)
        self.tree_found.emit(answer)

    @Slot(int, str)
    def _on_tree_failed(self, request_id: int, message: str) -> None:
        self._trees.done(self.serial)
        self.tree_failed.emit(request_id, message)

    def _compare_ended(self, request_id: int) -> bool:
        """True when the answer is for the newest comparison."""
        if request_id != self.current_compare:
            return False
        self.current_compare = self._compare_token = None
        return True

    @Slot(int, float, str)
    def _on_compare_progress(self, request_id: int, fraction: float, message: str) -> None:
        if request_id == self.current_compare:
            self.compare_progress.emit(request_id, fraction, message)

    @Slot(object)
    def _on_compare_done(self, result: Comparison) -> None:
        if self._compare_ended(result.request_id):
            self.compare_done.emit(result)

    @Slot(int, str)
    def _on_compare_failed(self, request_id: int, message: str) -> None:
        if self._compare_ended(request_id):
            self.compare_failed.emit(request_id, message)

    @Slot(int)
    def _on_compare_cancelled(self, request_id: int) -> None:
        if self._compare_ended(request_id):
            self.compare_cancelled.emit(request_id)

    def _hierarchy_ended(self, job_id: int) -> bool:
        """True when the answer is for the newest contraction or opened file."""
        if job_id != self.current_hierarchy_job:
            return False
        self.current_hierarchy_job = self._contract_token = None
        return True

    @Slot(int, float, str)
    def _on_contract_progress(self, job_id: int, fraction: float, message: str) -> None:
        if job_id == self.current_hierarchy_job:
            self.contract_progress.emit(job_id, fraction, message)

    @Slot(int, object)
    def _on_contract_iteration(self, job_id: int, record: dict) -> None:
        if job_id == self.current_hierarchy_job:
            self.contract_iteration.emit(job_id, record)

    @Slot(int)
    def _on_contract_cancelled(self, job_id: int) -> None:
        if self._hierarchy_ended(job_id):
            self.contract_cancelled.emit(job_id)

    @Slot(object)
    def _on_hierarchy_ready(self, answer: HierarchyAnswer) -> None:
        if self._hierarchy_ended(answer.job_id) and answer.graph_serial == self.serial:
            self.hierarchy = answer.hierarchy
            self.hierarchy_ready.emit(answer)

    @Slot(int, str)
    def _on_hierarchy_failed(self, job_id: int, message: str) -> None:
        if self._hierarchy_ended(job_id):
            self.hierarchy_failed.emit(job_id, message)

    @Slot(str)
    def _on_saved(self, path: str) -> None:
        self.saved.emit(path)

    @Slot(str)
    def _on_error(self, message: str) -> None:
        self.error.emit(message)


class _Newest:
    """Requests of one kind: one in flight, and only the newest of the others waits."""

    def __init__(self, signal) -> None:
        self.signal = signal
        self.in_flight = False
        self.pending = None

    def send(self, req) -> None:
        if self.in_flight:
            self.pending = req
        else:
            self.in_flight = True
            self.signal.emit(req)

    def done(self, graph_serial: int) -> None:
        self.in_flight = False
        req, self.pending = self.pending, None
        if req is not None and req.graph_serial == graph_serial:
            self.send(req)


# A QThread destroyed while running aborts the process: stop any engine thread left
# running when Python exits (a script that never closed its window).
_running_clients: "weakref.WeakSet[EngineClient]" = weakref.WeakSet()


@atexit.register
def _stop_engine_threads() -> None:
    for client in list(_running_clients):
        try:
            client.shutdown()
        except RuntimeError:   # its Qt objects are already gone
            pass
