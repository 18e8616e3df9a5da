"""Parameters and helpers that several capabilities share."""
from __future__ import annotations

from engine.capabilities import Param

METRIC = Param("metric", str, None, "metric name (default: the graph's first)")
SOURCE = Param("source", int, None, "source node (the file's node id)", flag="--from",
               required=True, node=True)
TARGET = Param("target", int, None, "target node (the file's node id)", flag="--to",
               required=True, node=True)
NODE_BASED = Param("node_based", bool, False, flag="--node-based",
                   help="the classic node-based search, which ignores turn restrictions and "
                   "turn costs (for comparison)")
HIERARCHY = Param("hierarchy", str, None, "use this contraction hierarchy (.rlh)", file=True)
GEOJSON = Param("geojson", str, None, "also write the path as GeoJSON (a LineString and its "
                "properties)", file=True, output=True)
GPX = Param("gpx", str, None, "also write the path as a GPX track", file=True, output=True)


def use_hierarchy_file(workspace, params: dict) -> None:
    """Load the ``hierarchy`` file parameter into the workspace, refusing one built
    for another metric or another routing model than the one asked for."""
    path = params.get("hierarchy")
    if not path:
        return
    from engine.io import LoadError
    h = workspace.load_hierarchy(path)
    metric = params.get("metric")
    if metric and metric != h.metric:
        raise LoadError(path, f"the hierarchy was built for {h.metric!r}, not {metric!r}")
    params["metric"] = h.metric
    node_based = bool(params.get("node_based"))
    if h.turn_aware and node_based:
        raise LoadError(path, "this hierarchy is turn-aware; --node-based needs one contracted "
                              "with --node-based")
    if not h.turn_aware and not node_based and workspace.turn_model((h.metric,)) is not None:
        from engine.model.defaults import restrictions_in_force
        raise LoadError(path, "this hierarchy is node-based: it ignores the graph's "
                              f"{restrictions_in_force(workspace.graph):,} turn restrictions "
                              "and its turn costs. Contract again without --node-based for a "
                              "turn-aware one, or ask for --node-based")


def text_lines(lines: list[str], written: str | None, what: str) -> str:
    """Command-line text: ``lines``, then where the result was written, if it was."""
    return "\n".join(lines + ([f"  {what} written to {written}"] if written else []))


def file_ids(graph, nodes):
    """Internal node indices as the file's node ids (a list of ints)."""
    return graph.node_id[nodes].tolist()


PARTITION = Param("partition", str, None, "CRP partition (.rlp); made with default levels "
                  "when absent", file=True)
DECODER = Param("decoder", str, None, "CRP metric decoder: a shipped name (car-fastest, "
                "dimacs-time, ...), a .toml file, or 'default': the metric's own column "
                "and the turn costs a plain route pays (README, turn-aware routing)")
CURRENT_METRIC = "current"      # a route's decoder: the workspace's current customization


def use_partition_file(workspace, params: dict) -> None:
    """Load the ``partition`` file parameter into the workspace (refused for another graph)."""
    path = params.get("partition")
    if path:
        workspace.load_partition(path)


def decoder_for(workspace, params: dict):
    """The ``decoder`` parameter as a Decoder: itself when it is one (the window's editor
    parsed it once; it is never parsed again), else the shipped decoder or .toml file it
    names (the command line), else the graph's natural default."""
    from engine.crp.metric.decoder import Decoder, load_decoder
    name = params.get("decoder")
    if isinstance(name, Decoder):
        return name
    if name == "default":
        from engine.model.defaults import default_decoder
        return default_decoder(workspace.graph, params.get("metric"))
    if not name:
        g = workspace.graph
        name = ("car-fastest" if "road_class" in g.arc_attrs else
                "dimacs-time" if "travel_time" in g.metrics else "dimacs-distance")
    return load_decoder(name)
