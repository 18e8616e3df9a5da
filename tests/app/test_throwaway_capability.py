"""How to add a capability to RouteLab: one engine module and one feature folder, and
no other edit (DESIGN principle 11, issue 33).

The test writes a throwaway capability, ``out_degree`` (how many arcs leave a node),
into a temporary directory, the way a newcomer would write it into the tree:

- ``engine/capabilities/out_degree.py`` (here ENGINE_MODULE): the work, on a
  ``Workspace`` and with no Qt, and one ``register(Capability(...))`` that names its
  parameters (they become the command line's arguments), its menu entry and its job
  policy;
- ``app/features/out_degree/controller.py`` (here FEATURE_CONTROLLER): what the window
  shows of it, a ``@register_controller`` class that handles its job kind.

Both packages find their members by scanning their ``__path__``, so appending the
temporary directories to ``engine.capabilities.__path__`` and ``app.features.__path__``
is all it takes for the capability to be a command (``routelab out_degree -h``, and it
runs), an entry of the window's menus, and an engine job with the policy it declares.
"""
from __future__ import annotations

import sys

import pytest

from engine import capabilities
from engine.generate.network import generate_road_network

from app import features
from app.feature import CONTROLLERS, unregister_controller
from tests.app.helpers import ROUTE_TIMEOUT_MS, load_graph, routes

NAME = "out_degree"

ENGINE_MODULE = '''
"""out_degree: how many arcs leave a node (a throwaway capability of the tests)."""
from engine.capabilities import QUEUE, Capability, Param, register
from engine.capabilities.common import SOURCE


def run(workspace, params, ctx):
    g, node = workspace.graph, int(params["source"])
    return {"source": node, "arcs": int(g.first_out[node + 1] - g.first_out[node]) * params["times"]}


def to_json(workspace, params, result):
    return {"from": int(workspace.graph.node_id[result["source"]]), "arcs": result["arcs"]}


def to_text(r):
    return f"{r['arcs']} arcs leave node {r['from']}"


register(Capability(
    name="out_degree", label="Out-degree", help="how many arcs leave a node",
    params=(SOURCE, Param("times", int, 1, "count every arc this many times")),
    run=run, to_json=to_json, to_text=to_text,
    menu="&Graph", menu_text="Count the arcs leaving the start", shortcut="Ctrl+Shift+D",
    policy=QUEUE,               # interactive: one job in flight, only the newest waits
    order=95))
'''

FEATURE_CONTROLLER = '''
"""The out-degree of the start, in a side-panel box."""
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout

from app.feature import Controller, register_controller


@register_controller
class OutDegreeController(Controller):
    order = 95
    kinds = ("out_degree",)               # the engine answers of this job kind come here

    def __init__(self, window):
        super().__init__(window)
        box = QGroupBox("Out-degree")
        self.label = QLabel("")
        QVBoxLayout(box).addWidget(self.label)
        window.add_panel(box)

    def trigger(self, capability):        # its menu action (made by the window from the registry)
        if self.session.source is not None:
            self.engine.submit("out_degree", {"source": self.session.source, "times": 2},
                               as_text=True)

    def on_result(self, job, text):
        self.label.setText(text)
'''


@pytest.fixture
def throwaway(tmp_path):
    """The capability's two files, discoverable; everything undone afterwards."""
    engine_dir, features_dir = tmp_path / "engine_side", tmp_path / "features"
    (features_dir / NAME).mkdir(parents=True)
    engine_dir.mkdir()
    (engine_dir / f"{NAME}.py").write_text(ENGINE_MODULE)
    (features_dir / NAME / "__init__.py").write_text('"""The out-degree feature."""\n')
    (features_dir / NAME / "controller.py").write_text(FEATURE_CONTROLLER)
    capabilities.__path__.append(str(engine_dir))
    features.__path__.append(str(features_dir))
    yield
    capabilities.__path__.remove(str(engine_dir))
    features.__path__.remove(str(features_dir))
    capabilities.unregister(NAME)
    for cls in {c for kind, c in CONTROLLERS.items() if kind == NAME}:
        unregister_controller(cls)
    for module in [m for m in sys.modules if m.split(".")[-1] == NAME or f".{NAME}." in m]:
        del sys.modules[module]


def test_it_is_a_command_with_its_parameters_and_runs(throwaway, tmp_path, capsys):
    from app.cli import main
    with pytest.raises(SystemExit) as done:
        main([NAME, "-h"])                          # routelab out_degree -h
    assert done.value.code == 0
    usage = capsys.readouterr().out
    assert "how many arcs leave a node" in usage and "--from" in usage and "--times" in usage
    graph = generate_road_network(300, seed=1)
    from engine.io.cache import save_cache
    path = save_cache(graph, tmp_path / "small.rlg") or tmp_path / "small.rlg"
    node = int(graph.node_id[7])
    assert main([NAME, str(path), "--from", str(node), "--times", "3"]) == 0
    degree = int(graph.first_out[8] - graph.first_out[7])
    assert capsys.readouterr().out.strip().endswith(f"{3 * degree} arcs leave node {node}")


def test_it_is_in_the_menu_and_its_jobs_queue(throwaway, qtbot, graph):
    from app.main_window import MainWindow
    window = MainWindow(backend="cpu")
    qtbot.addWidget(window)
    try:
        menus = {a.text(): a.menu() for a in window.menuBar().actions()}
        action = next(a for a in menus["&Graph"].actions()
                      if a.text() == "Count the arcs leaving the start")
        assert action.shortcut().toString() == "Ctrl+Shift+D"
        load_graph(qtbot, window, graph)
        routes(window).set_source(5)
        controller = window.controller(NAME)
        with qtbot.waitSignal(window.engine.result, timeout=ROUTE_TIMEOUT_MS,
                              check_params_cb=lambda job, text: job.kind == NAME):
            action.trigger()                        # its controller submits the job
        degree = int(graph.first_out[6] - graph.first_out[5])
        assert controller.label.text() == f"{2 * degree} arcs leave node {graph.node_id[5]}"
        _check_queue_policy(qtbot, window.engine)
    finally:
        window.close()


def _check_queue_policy(qtbot, engine) -> None:
    """Three jobs at once: the first runs, the second is superseded while it waits,
    the third runs after the first (QUEUE, as the capability declared)."""
    submitted, answered = [], []
    engine.submitted.connect(submitted.append)
    engine.result.connect(lambda job, result: answered.append(job.job_id))
    ids = [engine.submit(NAME, {"source": s, "times": 1}, as_text=True) for s in (1, 2, 3)]
    qtbot.waitUntil(lambda: ids[2] in answered, timeout=ROUTE_TIMEOUT_MS)
    assert [(job.policy, job.lane) for job in submitted] == [("queue", NAME)] * 3
    assert ids[0] in answered and ids[1] not in answered
