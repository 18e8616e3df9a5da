"""The engine thread (DESIGN principle 6): one long-lived QThread owns the graph and the device.

``EngineWorker`` lives in that thread. It owns the ``Workspace`` of the adopted graph
(engine state: backend, hierarchy, query objects) and its ``NetworkDrawing``; the
backend, and with it any CUDA state, is created in its ``started`` slot.

``EngineClient`` lives in the GUI thread and is the one job channel:
``submit(kind, params)`` (signal ``submitted``) runs any registered capability
(engine.capabilities) on the worker's Workspace, the hidden ones (load a graph, open
or save a file) included. Every answer comes back as one of six signals of the
client, each with the ``Job`` (id, kind, label) first: ``started``, ``progress``,
``record``, ``result``, ``error``, ``cancelled``.

A long job pauses between its steps (``JobContext.pause``, e.g. a contraction after each
level): the interactive jobs waiting meanwhile run then, so a click is answered while
a hierarchy is built in the background; other long jobs wait until it ends.

Newest wins per lane, as each capability's ``policy`` says: interactive kinds (QUEUE)
keep one job in flight and only the newest waits; long kinds (CANCEL) cancel the
running job; saves (EVERY) all run; answers of superseded jobs, and of jobs for a
graph that has since been replaced, are dropped. Any exception becomes
a readable message; cancelling goes through the job's CancelToken.
"""
from __future__ import annotations

import atexit
import itertools
import sys
import time
import traceback
import weakref
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from engine.core import backend as engine_backend
from engine import capabilities
from engine.capabilities import CANCEL, QUEUE
from engine.capabilities.load import NewGraph, generate_default_network, open_files
from engine.core.graph import RoadGraph
from engine.core.compilation import told
from engine.core.jobs import JobContext
from engine.core.progress import Cancelled, CancelToken
from engine.workspace import Workspace

from app import errors
from app.network_geometry import NetworkDrawing, build_drawing

DEFAULT_NETWORK_NODES = 100_000
DEFAULT_NETWORK_SEED = 1
PROGRESS_INTERVAL_S = 0.05
SHUTDOWN_WAIT_MS = 1200     # closing the window waits this long for the running step to cancel



@dataclass(frozen=True)
class LoadedGraph:
    serial: int                      # changes with every graph the worker adopts
    graph: RoadGraph
    drawing: NetworkDrawing | None   # None when the graph has no coordinates
    seconds: float
    notes: tuple[str, ...] = ()      # e.g. sibling files skipped because they do not match


@dataclass(frozen=True)
class Job:
    job_id: int
    kind: str                  # a capability's name
    params: dict
    label: str                 # what people read while it runs, e.g. "Opening NY.gr"
    graph_serial: int | None   # the graph it is for; None for a job that makes a graph
    token: CancelToken = field(default_factory=CancelToken, compare=False)
    as_text: bool = False      # answer with the capability's text instead of its result
    policy: str = CANCEL       # its capability's: how a newer job of its lane treats it
    lane: str = ""             # its capability's lane: the jobs that supersede each other


@dataclass(frozen=True)
class Answer:
    job: Job
    event: str                 # started, progress, record, result, error, cancelled
    payload: object = None


class JobRefused(ValueError):
    """The job cannot run now (no graph yet, or another one since): not a bug."""


def readable(exc: BaseException) -> str:
    """A message a person can act on: bad input as its own message, a bug as "internal
    error" with its type (the traceback goes to the terminal)."""
    if errors.is_input_error(exc):
        return errors.describe(exc)
    return f"internal error ({errors.describe(exc, located=False)}) — see the terminal for details"


class EngineWorker(QObject):
    """Runs on the engine thread; ``run`` is reached through a queued signal only."""

    backend_ready = Signal(str, str)      # name, description
    answer = Signal(object)               # Answer

    def __init__(self, backend_choice: str = "auto") -> None:
        super().__init__()
        self.backend_choice = backend_choice
        self.backend = None
        self.workspace: Workspace | None = None
        self.drawing: NetworkDrawing | None = None
        self.serial = 0
        self._paused = False                  # a long job has paused: interactive jobs run
        self._deferred: list[Job] = []        # long jobs that arrived during a pause

    @property
    def graph(self) -> RoadGraph | None:
        return None if self.workspace is None else self.workspace.graph

    @Slot()
    def on_started(self) -> None:
        """Thread started: choose the backend here, so device state belongs to this thread."""
        try:
            self.backend = engine_backend.select(self.backend_choice)
        except Exception as e:  # noqa: BLE001 - no device is not fatal
            self.backend = engine_backend.select("cpu")
            self.answer.emit(Answer(Job(0, "backend", {}, "Choosing the backend", None), "error",
                                    f"{readable(e)}; using the CPU"))
        self.backend_ready.emit(self.backend.name, self.backend.describe())

    def workspace_for(self, job: Job) -> Workspace:
        if self.workspace is None:
            raise JobRefused("no graph is loaded")
        if job.graph_serial != self.serial:
            raise JobRefused("the graph changed; try again")
        return self.workspace

    @Slot(object)
    def run(self, job: Job) -> None:
        if self._paused and job.policy != QUEUE:
            self._deferred.append(job)        # runs when the paused long job has ended
            return
        self._run_now(job)
        while self._deferred and not self._paused:
            self._run_now(self._deferred.pop(0))

    def _pause(self) -> None:
        """Between a long job's steps: run the interactive jobs that wait (not nested)."""
        if self._paused:
            return
        self._paused = True
        try:
            QCoreApplication.processEvents()      # this thread's queued jobs
        finally:
            self._paused = False

    def _run_now(self, job: Job) -> None:
        emit = partial(self._emit, job)
        emit("started", job.label)
        try:
            job.token.check()
            with told(self._progress_fn(emit)) as progress:    # a first run says it compiles
                ctx = JobContext(progress=progress, cancel=job.token,
                                 record=lambda r: emit("record", dict(r) if isinstance(r, dict) else r),
                                 pause=self._pause if job.policy != QUEUE else (lambda: None))
                result = self._dispatch(job, ctx)
        except Cancelled:
            emit("cancelled", f"{job.label}: cancelled")
            return
        except BaseException as e:  # noqa: BLE001 - nothing may kill the window
            if not errors.is_input_error(e):
                traceback.print_exc(file=sys.stderr)     # bad input is expected; the rest is a bug
            emit("error", readable(e))
            return
        emit("result", result)

    def _dispatch(self, job: Job, ctx: JobContext):
        capability = capabilities.get(job.kind)
        params = dict(job.params)
        if capability.makes_graph:
            return self._adopt(capability.run(self.backend, params, ctx), ctx)
        workspace = self.workspace_for(job)          # every other capability runs on a graph
        result = capability.run(workspace, params, ctx)
        if job.as_text:
            return capability.to_text(capability.to_json(workspace, params, result))
        return result

    def _adopt(self, new: NewGraph, ctx: JobContext) -> LoadedGraph:
        """Draw the new graph's network (app code: the engine knows no drawing) and
        make its workspace the one jobs run on."""
        started = time.perf_counter()
        graph = new.workspace.graph
        drawing = build_drawing(graph)
        ctx.cancel.check()
        self.workspace, self.drawing = new.workspace, drawing
        self.serial += 1
        return LoadedGraph(self.serial, graph, drawing,
                           new.seconds + time.perf_counter() - started, new.notes)

    def _emit(self, job: Job, event: str, payload=None) -> None:
        self.answer.emit(Answer(job, event, payload))

    @staticmethod
    def _progress_fn(emit):
        """progress(fraction, message) for engine code; emits at most every 50 ms."""
        last = [0.0, None]

        def progress(fraction: float, message: str = "") -> None:
            now = time.perf_counter()
            if message != last[1] or now - last[0] >= PROGRESS_INTERVAL_S or fraction >= 1:
                last[0], last[1] = now, message
                emit("progress", (float(fraction), message))
        return progress


class EngineClient(QObject):
    """GUI-thread face of the engine thread: ``submit`` in, six answer signals out."""

    backend_ready = Signal(str, str)          # name, description
    submitted = Signal(object)                # Job, at once (the worker may be busy)
    started = Signal(object, str)             # Job, label
    progress = Signal(object, float, str)     # Job, fraction, message
    record = Signal(object, object)           # Job, record (e.g. a contraction level's dict)
    result = Signal(object, object)           # Job, result
    error = Signal(object, str)               # Job, readable message
    cancelled = Signal(object, str)           # Job, message

    _run = Signal(object)                     # Job, delivered to the worker's thread

    def __init__(self, backend_choice: str = "auto", parent=None) -> None:
        super().__init__(parent)
        self.backend_name = self.backend_description = ""
        self.graph: RoadGraph | None = None
        self.serial = 0
        self._ids = itertools.count(1)
        self._live: dict[int, Job] = {}       # sent to the worker, answers wanted
        self._in_flight: dict[str, Job] = {}  # QUEUE lanes: the job the worker has
        self._pending: dict[str, Job] = {}    # QUEUE lanes: the newest waiting job
        self._sent: dict[int, Job] = {}       # every job the worker has not finished (shutdown cancels them)
        self._stuck = False                   # shutdown gave up waiting for a step that ignores cancel

        self._thread = QThread()
        self._thread.setObjectName("RouteLab engine")
        self.worker = EngineWorker(backend_choice)
        self.worker.moveToThread(self._thread)
        self._thread.started.connect(self.worker.on_started)
        self._run.connect(self.worker.run)
        self.worker.backend_ready.connect(self._on_backend_ready)
        self.worker.answer.connect(self._on_answer)
        self._thread.start()
        _running_clients.add(self)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------- requests
    def submit(self, kind: str, params: dict | None = None, *, label: str = "",
               as_text: bool = False) -> int:
        """Run capability ``kind`` (hidden ones included) with ``params`` on the engine thread."""
        capability = capabilities.get(kind)
        serial = None if capability.makes_graph else self.serial
        job = Job(next(self._ids), kind, dict(params or {}), label or capability.label, serial,
                  as_text=as_text, policy=capability.policy, lane=capability.job_lane)
        if job.policy == CANCEL:          # the running one is superseded: cancelled, never heard of
            self.cancel(job.lane)
            self.drop(job.lane)
        if capability.makes_graph:        # work in the background was for the old graph
            for live in list(self._live.values()):
                if live.params.get("background"):
                    live.token.cancel()
        if job.policy == QUEUE and job.lane in self._in_flight:
            self._pending[job.lane] = job
        else:
            self._send(job)
        self.submitted.emit(job)
        return job.job_id

    def load_with(self, label: str, make: Callable[..., RoadGraph], files=()) -> int:
        """Run ``make(progress=, cancel=) -> RoadGraph`` and adopt the graph (read from
        ``files``, which no save then writes over)."""
        return self.submit("load", {"make": make, "files": list(files)}, label=label)

    def open_files(self, file_paths) -> int:
        file_paths = [str(p) for p in file_paths]
        names = ", ".join(p.replace("\\", "/").rsplit("/", 1)[-1] for p in file_paths)
        return self.load_with(f"Opening {names}", partial(open_files, file_paths), file_paths)

    def generate_default(self, num_nodes: int = DEFAULT_NETWORK_NODES,
                         seed: int = DEFAULT_NETWORK_SEED) -> int:
        return self.load_with(f"Generating a road network of {num_nodes:,} nodes",
                              partial(generate_default_network, num_nodes, seed))

    def adopt_graph(self, graph: RoadGraph, label: str = "Preparing graph") -> int:
        """Hand an already built graph to the engine (tests, future producers)."""
        return self.load_with(label, lambda progress, cancel: graph)

    def cancel(self, lane: str | None = None) -> None:
        """Cancel the running long jobs (of one lane, or all); each ends with ``cancelled``."""
        for job in self._live.values():
            if job.policy == CANCEL and lane in (None, job.lane):
                job.token.cancel()

    def drop(self, kind: str) -> None:
        """Forget the waiting job of ``kind`` and drop the answer of the running one."""
        self._pending.pop(kind, None)
        for job in list(self._live.values()):
            if job.lane == kind:
                del self._live[job.job_id]

    def job_of(self, kind: str) -> Job | None:
        """The job of ``kind`` whose answer is still wanted (running or waiting), if any."""
        return next((job for job in self._live.values() if job.kind == kind), None)

    def running(self, kind: str) -> bool:
        return any(job.lane == kind for job in self._live.values())

    @property
    def busy(self) -> bool:
        """A long job (load, contraction, comparison, ...) is running."""
        return any(job.policy == CANCEL for job in self._live.values())

    def shutdown(self, timeout_ms: int = SHUTDOWN_WAIT_MS) -> bool:
        """Cancel every job (running, waiting, superseded), stop the thread and wait for
        it; False when a step that does not check its cancel flag outlived the wait."""
        self._pending.clear()
        self._live.clear()
        for job in self._sent.values():
            job.token.cancel()
        if not self._thread.isRunning():
            return True
        self._thread.quit()
        if not self._stuck and self._thread.wait(timeout_ms):
            return True
        if not self._stuck:           # say it once; waiting again would only delay the exit
            print("RouteLab: the engine is still busy with a step that does not check for "
                  "cancellation; leaving it", file=sys.stderr)
        self._stuck = True
        return False

    def _send(self, job: Job) -> None:
        self._live[job.job_id] = job
        self._sent[job.job_id] = job
        if job.policy == QUEUE:
            self._in_flight[job.lane] = job
        self._run.emit(job)

    # ---------------------------------------------------- answers (GUI thread)
    @Slot(str, str)
    def _on_backend_ready(self, name: str, description: str) -> None:
        self.backend_name, self.backend_description = name, description
        self.backend_ready.emit(name, description)

    @Slot(object)
    def _on_answer(self, a: Answer) -> None:
        job = a.job
        final = a.event in ("result", "error", "cancelled")
        wanted = job.job_id in self._live or job.kind == "backend"
        if a.event == "error" and job.lane in self._pending:
            wanted = False                    # a newer job of its kind is waiting: it answers instead
        if final:
            self._sent.pop(job.job_id, None)
            self._live.pop(job.job_id, None)
            if self._in_flight.get(job.lane) is job:
                del self._in_flight[job.lane]
        if a.event == "result" and isinstance(a.payload, LoadedGraph) and wanted:
            self.graph, self.serial = a.payload.graph, a.payload.serial
            self._pending.clear()
        if wanted and job.graph_serial in (None, self.serial):
            self._signal(a)
        if final and job.lane in self._pending and job.lane not in self._in_flight:
            waiting = self._pending.pop(job.lane)
            if waiting.graph_serial == self.serial:
                self._send(waiting)

    def _signal(self, a: Answer) -> None:
        if a.event == "progress":
            self.progress.emit(a.job, *a.payload)
        else:
            getattr(self, a.event).emit(a.job, a.payload)


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
