"""The engine thread's generic job channel: loading, routing, trees, comparisons,
errors, cancelling, newest-wins per kind, and a GUI that keeps running.

Every wait is on a signal of ``EngineClient`` or the window, objects of the GUI thread.
"""
from __future__ import annotations

from tests.turn_oracle import check_route, model_distances

import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import Qt, QThread, QTimer

from app.engine_thread import EngineClient
from engine.core import paths
from engine.routing import reference
from engine.core.paths import check_path
from engine.core.polylines import route_polyline
from tests.app.helpers import (ISLAND, LOAD_TIMEOUT_MS, ROUTE_TIMEOUT_MS, answer_of, grid_graph,
                               write_dimacs)


@pytest.fixture
def client(qtbot):
    c = EngineClient("cpu")
    yield c
    c.shutdown()


def adopt(qtbot, client, graph):
    with answer_of(qtbot, client, "load", timeout=LOAD_TIMEOUT_MS) as blocker:
        client.adopt_graph(graph)
    return blocker.args[1]


def route(client, source, target, metric="distance") -> int:
    return client.submit("route", {"source": source, "target": target, "metric": metric})


def slow_job(seconds: float, started: threading.Event | None = None,
             stopped: threading.Event | None = None):
    """A load that works in small numpy steps for ``seconds``, checking the cancel flag;
    ``stopped`` is set when it ends, however it ends."""
    def fn(progress, cancel):
        if started is not None:
            started.set()
        end = time.perf_counter() + seconds
        rng = np.random.default_rng(0)
        try:
            while time.perf_counter() < end:
                cancel.check()
                np.sort(rng.random(20_000))
                progress(1 - (end - time.perf_counter()) / seconds, "working")
        finally:
            if stopped is not None:
                stopped.set()
        return grid_graph(source="slow job")
    return fn


def test_backend_is_chosen_on_the_engine_thread(qtbot):
    c = EngineClient("cpu")
    try:
        with qtbot.waitSignal(c.backend_ready, timeout=LOAD_TIMEOUT_MS) as blocker:
            pass
        name, description = blocker.args
        assert name == "cpu" and description.startswith("CPU")
        assert c.worker.thread() is not QThread.currentThread()
    finally:
        c.shutdown()


def test_open_dimacs_file_then_route(qtbot, client, tmp_path, graph):
    gr, co = write_dimacs(tmp_path, graph)
    with answer_of(qtbot, client, "load", timeout=LOAD_TIMEOUT_MS) as blocker:
        client.open_files([gr, co])
    loaded = blocker.args[1]
    assert loaded.graph.num_nodes == graph.num_nodes and loaded.graph.num_arcs == graph.num_arcs
    assert loaded.drawing is not None and loaded.drawing.exact.num_segments > 0
    assert not client.busy
    with answer_of(qtbot, client, "route") as blocker:
        route(client, 0, 20, loaded.graph.default_metric)
    job, result = blocker.args
    assert (job.params["source"], job.params["target"]) == (0, 20)
    check_route(loaded.graph, result.path)
    xy = route_polyline(loaded.drawing.points, loaded.graph, result.path.arcs)
    assert xy.shape == (result.path.num_arcs + 1, 2)   # DIMACS has no arc geometry
    text = result.summary.text(result.compute_ms)
    assert (" km · " in text or " m · " in text) and "computed in" in text
    assert (result.method, result.method_label) == ("bidirectional_dijkstra", "bidirectional Dijkstra")


def test_garbage_file_is_an_error_and_the_graph_stays(qtbot, client, tmp_path, graph):
    first = adopt(qtbot, client, graph)
    bad = tmp_path / "garbage.gr"
    bad.write_bytes(bytes(range(256)) * 4)
    with answer_of(qtbot, client, "load", "error", timeout=LOAD_TIMEOUT_MS) as blocker:
        client.open_files([bad])
    assert "garbage.gr" in blocker.args[1]
    assert client.worker.graph is graph and client.serial == first.serial
    with answer_of(qtbot, client, "route"):
        route(client, 0, 5)


def test_engine_exception_becomes_a_message(qtbot, client, graph):
    adopt(qtbot, client, graph)

    def broken(progress, cancel):
        raise ZeroDivisionError("division by zero")
    with answer_of(qtbot, client, "load", "error", timeout=LOAD_TIMEOUT_MS) as blocker:
        client.load_with("Breaking", broken)
    assert blocker.args[1] == ("internal error (ZeroDivisionError: division by zero) — see the "
                               "terminal for details")
    assert client.worker.graph is graph


def test_unreachable_target_is_a_readable_failure(qtbot, client, graph):
    adopt(qtbot, client, graph)
    with answer_of(qtbot, client, "route", "error") as blocker:
        route(client, 0, ISLAND)
    assert "cannot be reached" in blocker.args[1]


def test_route_requests_are_coalesced_to_the_newest(qtbot, client, graph):
    adopt(qtbot, client, graph)
    results = []
    client.result.connect(lambda job, r: results.append((job.job_id, r)))
    ids = [route(client, 0, t) for t in range(1, 30)]
    qtbot.waitUntil(lambda: bool(results) and results[-1][0] == ids[-1], timeout=ROUTE_TIMEOUT_MS)
    assert len(results) < len(ids)           # intermediate requests were dropped
    assert [i for i, _ in results] == sorted(i for i, _ in results)   # never an older one after
    assert results[-1][1].path.target == 29


def test_cancel_a_load_keeps_the_old_graph(qtbot, client, graph):
    adopt(qtbot, client, graph)
    started = threading.Event()
    with answer_of(qtbot, client, "load", "cancelled", timeout=LOAD_TIMEOUT_MS):
        client.load_with("Slow", slow_job(30, started))
        qtbot.waitUntil(started.is_set, timeout=LOAD_TIMEOUT_MS)
        client.cancel()
    assert client.worker.graph is graph and not client.busy
    with answer_of(qtbot, client, "route"):
        route(client, 0, 5)


def test_a_newer_load_cancels_the_running_one_and_drops_its_answers(qtbot, client, graph):
    answers = []
    for event in ("result", "error", "cancelled"):
        getattr(client, event).connect(lambda job, payload, event=event: answers.append((job.job_id, event)))
    started, stopped = threading.Event(), threading.Event()
    t0 = time.perf_counter()
    first = client.load_with("Slow", slow_job(30, started, stopped))
    qtbot.waitUntil(started.is_set, timeout=LOAD_TIMEOUT_MS)
    with answer_of(qtbot, client, "load", timeout=LOAD_TIMEOUT_MS) as blocker:
        second = client.adopt_graph(graph)
    assert stopped.wait(5) and time.perf_counter() - t0 < 20      # the first one was cancelled
    assert blocker.args[0].job_id == second and client.worker.graph is graph
    qtbot.wait(50)
    assert answers == [(second, "result")] and first not in [i for i, _ in answers]


def test_a_job_for_a_replaced_graph_is_refused_and_its_answer_dropped(qtbot, client, graph):
    adopt(qtbot, client, graph)
    delivered, from_worker = [], []
    client.result.connect(lambda job, r: delivered.append(job.kind))
    client.error.connect(lambda job, msg: delivered.append(f"{job.kind} error"))
    client.worker.answer.connect(lambda a: from_worker.append((a.job.kind, a.event, a.payload)),
                                 Qt.DirectConnection)       # seen on the engine thread
    with answer_of(qtbot, client, "load", timeout=LOAD_TIMEOUT_MS):
        client.adopt_graph(grid_graph(source="newer"))
        route(client, 0, 5)                  # for the graph that is being replaced
    qtbot.waitUntil(lambda: any(k == "route" and e == "error" for k, e, _ in from_worker),
                    timeout=ROUTE_TIMEOUT_MS)
    assert ("route", "error", "the graph changed; try again") in from_worker
    qtbot.wait(50)
    assert delivered == ["load"] and client.graph.source == "newer"


def test_gui_keeps_processing_events_during_a_long_job(qtbot, client):
    """A multi-second engine job (generating and preparing a big network) runs while a
    10 ms QTimer on the GUI thread keeps ticking."""
    ticks = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    progress = []
    client.progress.connect(lambda job, f, msg: progress.append(f))
    timer.start()
    t0 = time.perf_counter()
    with answer_of(qtbot, client, "load", timeout=120_000) as blocker:
        client.generate_default(num_nodes=500_000, seed=3)
    elapsed = time.perf_counter() - t0
    timer.stop()
    assert blocker.args[1].graph.num_nodes == 500_000
    assert elapsed > 1.0, "the job should take seconds for this test to mean something"
    during = np.asarray([t for t in ticks if t <= t0 + elapsed])
    print(f"{during.size} ticks in {elapsed:.2f} s, longest gap {np.diff(during).max() * 1000:.0f} ms")
    assert during.size >= 0.3 * elapsed / 0.010, (during.size, elapsed)
    assert np.diff(during).max() < 0.5       # never frozen for half a second
    assert progress and progress[-1] >= 0.9


def test_tree_comes_back_as_numpy_arrays(qtbot, client, graph):
    adopt(qtbot, client, graph)
    with answer_of(qtbot, client, "tree") as blocker:
        client.submit("tree", {"source": 3, "metric": "travel_time", "method": "bellman_ford"})
    a = blocker.args[1]
    ref = model_distances(graph, 3, "travel_time")
    assert (a.tree.source, a.tree.metric, a.method) == (3, "travel_time", "bellman_ford")
    assert isinstance(a.tree.distance, np.ndarray) and np.array_equal(a.tree.distance, ref)
    assert a.tree.distance[ISLAND] == -1 and a.compute_ms > 0 and a.backend.startswith("CPU")
    path = paths.path_from_tree(graph, a.tree, 20)
    check_route(graph, path)


def test_tree_errors_are_readable(qtbot, client, graph):
    adopt(qtbot, client, graph)
    with answer_of(qtbot, client, "tree", "error") as blocker:
        client.submit("tree", {"source": 0, "metric": "distance", "method": "no_such_method"})
    assert "unknown SSSP method 'no_such_method'" in blocker.args[1]
    with answer_of(qtbot, client, "tree"):   # still serving
        client.submit("tree", {"source": 0, "metric": "distance"})


def test_compare_times_every_method_and_checks_them(qtbot, client, graph):
    from engine.sssp import METHODS
    adopt(qtbot, client, graph)
    with answer_of(qtbot, client, "compare", timeout=LOAD_TIMEOUT_MS) as blocker:
        client.submit("compare", {"source": 5, "metric": "distance"})
    c = blocker.args[1]
    assert [t.name for t in c.timings] == [*METHODS, "reference"] and c.exact
    assert not client.running("compare") and not client.busy


def test_a_comparison_can_be_cancelled(qtbot, client, graph, monkeypatch):
    import engine.sssp as sssp
    started = threading.Event()
    real = sssp.TreeQuery.tree

    def slow(*args, **kwargs):
        started.set()
        time.sleep(0.05)
        return real(*args, **kwargs)
    monkeypatch.setattr(sssp.TreeQuery, "tree", slow)
    adopt(qtbot, client, graph)
    with answer_of(qtbot, client, "compare", "cancelled", timeout=LOAD_TIMEOUT_MS):
        client.submit("compare", {"source": 5, "metric": "distance"})
        qtbot.waitUntil(started.is_set, timeout=LOAD_TIMEOUT_MS)
        client.cancel()
    assert not client.running("compare")
