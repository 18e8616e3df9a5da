"""What the window shows, with no Qt (an import-linter contract keeps it so).

One ``Session`` per window: the graph and its drawing, the route's endpoints, the
mode clicks act in, and the current results (route, tree, hierarchy, CRP metric).
Controllers change it and draw from it; tests read it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

@dataclass(frozen=True)
class ShownRoute:
    """A path on the map: a routed one, or one read from the shortest-path tree."""
    source: int
    target: int
    metric: str
    path: object                  # engine.core.paths.Path
    xy: np.ndarray | None         # [k, 2] polyline along arc geometry, None without coordinates
    summary: str                  # what the side panel says about it
    method_label: str = ""        # the router that found it ("CH query", ...), "" from a tree
    turns: dict | None = None     # CRP: turns by type and the turn costs paid (path_turns)
    steps: tuple | None = None    # CRP: (arcs, levels) before unpacking (CrpQuery.steps)


@dataclass
class Session:
    graph: object = None          # engine.core.graph.RoadGraph
    drawing: object = None        # app.network_geometry.NetworkDrawing, None without coordinates
    metric: str = ""
    source: int | None = None     # internal node indices
    target: int | None = None
    mode: str = "route"
    route: ShownRoute | None = None
    route_message: str = ""       # the route's summary, or why there is none
    ghost: ShownRoute | None = None   # the route before the last metric change, drawn faint
    tree: object = None           # engine.capabilities.tree.TreeAnswer on the map
    tree_bins: object = None      # app.features.tree.distance_bins.DistanceBins of that tree
    hierarchy: object = None      # engine.ch.Hierarchy in use
    level_bins: object = None     # app.features.hierarchy.level_bins.LevelBins of that hierarchy
    levels_on: bool = False       # colour by level asked for
    inspected_node: int | None = None
    crp_routes: bool = False          # CRP: routes use the engine's current customization
    cell_metric: object = None        # CRP: engine.crp.CellMetric (host arrays) of the last good edit
    cells_level: int | None = None    # CRP: the partition level coloured on the map
    crp_cell: int | None = None       # CRP: the cell clicked in cells mode
    # build the turn-aware hierarchy in the background when a graph whose turns matter
    # loads (a setting: kept across graphs)
    background_hierarchy: bool = True
    node_level: object = None         # the hierarchy's level per road node (for the map)

    def adopt(self, graph, drawing) -> None:
        """A new graph: nothing of the old one stays."""
        self.__init__(graph=graph, drawing=drawing, metric=graph.default_metric,
                      mode=self.mode, background_hierarchy=self.background_hierarchy)

    def file_stem(self) -> str:
        """The graph's file name without its extensions: the default name of its files."""
        return os.path.basename(getattr(self.graph, "source", None) or "graph").split(".")[0] or "graph"

    def node_id(self, node: int) -> int:
        return int(self.graph.node_id[node])

    def swap(self) -> bool:
        if self.source is None and self.target is None:
            return False
        self.source, self.target = self.target, self.source
        return True

    def clear_results(self) -> None:
        self.source = self.target = self.route = self.tree = self.tree_bins = None
        self.route_message = ""

    def colouring_key(self) -> tuple | None:
        """What the map's colours show: the tree while there is one, else the levels
        when asked for and a hierarchy exists, else the partition's cells when a level
        is chosen and customized, else the road classes (None)."""
        if self.tree is not None:
            return "tree", id(self.tree)
        if self.levels_on and self.hierarchy is not None:
            return "levels", id(self.hierarchy)
        if self.cells_level is not None and self.cell_metric is not None:
            return "cells", id(self.cell_metric.overlay), self.cells_level
        return None
