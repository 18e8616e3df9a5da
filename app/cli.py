"""Headless commands: the engine without a window, for scripts, benchmarks and tests.

Node ids on the command line and in the output are the input file's own ids.
Errors go to stderr with exit status 1 (bad input) or 2 (bad usage).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

COMMANDS = ("info", "route", "tree", "contract")


def _load(files):
    from engine.io import load
    t0 = time.perf_counter()
    graph = load(files)
    return graph, time.perf_counter() - t0


def cmd_info(args) -> dict:
    graph, seconds = _load(args.files)
    restrictions = graph.turn_restrictions
    return {
        "source": graph.source,
        "nodes": graph.num_nodes,
        "arcs": graph.num_arcs,
        "metrics": {name: {"min": int(w.min()) if w.size else 0,
                           "max": int(w.max()) if w.size else 0,
                           "unit": graph.metric_units.get(name, "")}
                    for name, w in graph.metrics.items()},
        "coordinates": graph.has_coordinates,
        "arc_attributes": sorted(graph.arc_attrs),
        "arc_geometry": graph.geometry_first is not None,
        "turn_restrictions": len(restrictions) if restrictions is not None else 0,
        "license": graph.data_license,
        "load_seconds": round(seconds, 4),
    }


def cmd_route(args) -> dict:
    from engine import backend as backends
    from engine.reference import shortest_path
    from engine.summary import route_summary

    graph, load_seconds = _load(args.files)
    backend = backends.select(args.backend)
    s, t = (int(i) for i in graph.index_of([args.source, args.target]))
    t0 = time.perf_counter()
    if args.hierarchy:
        from engine import phast
        h = _hierarchy(args, graph)
        q = phast.PhastQuery(h, backend)
        path = q.path(q.tree(s).tree, t)
        method = "PHAST on the contraction hierarchy"
    else:
        path = shortest_path(graph, s, t, args.metric)
        method = "reference Dijkstra (scipy)"
    compute_ms = (time.perf_counter() - t0) * 1000
    summary = route_summary(graph, path)
    return {
        "from": args.source, "to": args.target, "metric": path.metric,
        "distance": path.distance, "arcs": path.num_arcs,
        "length_m": None if summary.length_m is None else round(summary.length_m, 1),
        "travel_time_s": summary.travel_time_s,
        "path": graph.node_id[path.nodes].tolist(),
        "compute_ms": round(compute_ms, 3), "load_seconds": round(load_seconds, 4),
        "backend": backend.describe(), "method": method,
    }


def cmd_tree(args) -> dict:
    from engine import backend as backends
    from engine.sssp import shortest_path_tree

    graph, load_seconds = _load(args.files)
    backend = backends.select(args.backend)
    source = int(graph.index_of(args.source)[0])
    if args.hierarchy:
        from engine import phast
        h = _hierarchy(args, graph)
        result = phast.PhastQuery(h, backend).tree(source)
        method = "phast"
    else:
        result = shortest_path_tree(graph, source, args.metric, args.method, backend)
        method = result.method
    tree = result.tree
    parent = np.where(tree.parent >= 0, graph.node_id[np.maximum(tree.parent, 0)], -1)
    if args.out:
        with open(args.out, "wb") as f:   # keep the name as given (np.savez would add .npz)
            np.savez(f, node_id=graph.node_id, distance=tree.distance, parent=parent.astype(np.int64))
    reached = tree.distance >= 0
    return {
        "from": args.source, "metric": tree.metric, "method": method,
        "backend": backend.describe(), "reached": int(reached.sum()), "nodes": graph.num_nodes,
        "max_distance": int(tree.distance.max()) if reached.any() else 0,
        "compute_ms": round(result.compute_ms, 3), "total_ms": round(result.total_ms, 3),
        "load_seconds": round(load_seconds, 4), "out": args.out,
    }


def _hierarchy(args, graph):
    from engine.ch import Hierarchy
    from engine.io import LoadError
    h = Hierarchy.load(args.hierarchy, graph)
    if args.metric and args.metric != h.metric:
        raise LoadError(args.hierarchy, f"the hierarchy was built for {h.metric!r}, "
                                        f"not {args.metric!r}")
    return h


def cmd_contract(args) -> dict:
    from engine import backend as backends
    from engine.ch import contract

    graph, load_seconds = _load(args.files)
    backend = backends.select(args.backend)

    def show(record):
        if not args.json:
            ms = record["ms"]
            print(f"  level {record['level']:3d}: |V| {record['nodes']:>9,}  |U| {record['contracted']:>8,}"
                  f"  MIS {record['mis_fraction']:.2f}  deg {record['avg_degree']:6.2f}/{record['max_degree']:<4d}"
                  f"  shortcuts {record['shortcuts']:>8,}  " +
                  "  ".join(f"{k} {v:.1f}" for k, v in ms.items()) + " ms")

    h = contract(graph, args.metric, K=args.K, C=args.C, backend=backend, on_iteration=show)
    if args.out:
        h.save(args.out)
    return {"summary": h.summary(), "iterations": h.iterations, "out": args.out,
            "backend": backend.describe(), "load_seconds": round(load_seconds, 4)}


def _print_human(command: str, result: dict) -> None:
    if command == "info":
        print(f"{result['source']}: {result['nodes']:,} nodes, {result['arcs']:,} arcs")
        for name, m in result["metrics"].items():
            unit = f" {m['unit']}" if m["unit"] else ""
            print(f"  metric {name}: {m['min']:,}..{m['max']:,}{unit}")
        print(f"  coordinates: {'yes' if result['coordinates'] else 'no'}")
        print(f"  arc attributes: {', '.join(result['arc_attributes']) or 'none'}")
        print(f"  arc geometry: {'yes' if result['arc_geometry'] else 'no'}")
        print(f"  turn restrictions: {result['turn_restrictions']:,}")
        if result["license"]:
            print(f"  data: {result['license']}")
        print(f"  loaded in {result['load_seconds']:.3f} s")
    elif command == "contract":
        s = result["summary"]
        print(f"contracted in {s['contract_ms']:.0f} ms on {result['backend']}: {s['levels']} levels, "
              f"core {s['core_nodes']:,} nodes, {s['shortcuts']:,} shortcuts, "
              f"edge growth {s['edge_growth']}")
        if result["out"]:
            print(f"  hierarchy written to {result['out']}")
    elif command == "tree":
        print(f"{result['metric']} tree from {result['from']}: reached {result['reached']:,} of "
              f"{result['nodes']:,} nodes, farthest {result['max_distance']:,}")
        print(f"  computed in {result['compute_ms']:.2f} ms ({result['total_ms']:.2f} ms with the copy "
              f"to host) by {result['method']} on {result['backend']}")
        if result["out"]:
            print(f"  written to {result['out']} (node_id, distance, parent)")
    else:
        print(f"{result['metric']} from {result['from']} to {result['to']}: {result['distance']}")
        extra = []
        if result["length_m"] is not None:
            extra.append(f"{result['length_m'] / 1000:.2f} km")
        extra.append(f"{result['arcs']} arcs")
        print("  " + ", ".join(extra))
        print("  path: " + " ".join(map(str, result["path"])))
        print(f"  computed in {result['compute_ms']:.2f} ms on {result['backend']} "
              f"({result['method']})")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="routelab", description="RouteLab headless commands")
    sub = p.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="describe a graph")
    info.add_argument("files", nargs="+")
    info.add_argument("--json", action="store_true")
    route = sub.add_parser("route", help="shortest path between two nodes")
    route.add_argument("files", nargs="+")
    route.add_argument("--from", dest="source", type=int, required=True, help="file node id")
    route.add_argument("--to", dest="target", type=int, required=True, help="file node id")
    route.add_argument("--metric", default=None)
    route.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    route.add_argument("--hierarchy", default=None, help="query this contraction hierarchy (.rlh)")
    route.add_argument("--json", action="store_true")
    tree = sub.add_parser("tree", help="shortest-path tree from one node, no preprocessing")
    tree.add_argument("files", nargs="+")
    tree.add_argument("--from", dest="source", type=int, required=True, help="file node id")
    tree.add_argument("--metric", default=None)
    tree.add_argument("--method", default="auto", choices=("auto",) + tuple(_sssp_methods()))
    tree.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    tree.add_argument("--out", default=None, help="write node_id, distance, parent to this .npz")
    tree.add_argument("--hierarchy", default=None, help="use PHAST on this contraction hierarchy (.rlh)")
    tree.add_argument("--json", action="store_true")
    con = sub.add_parser("contract", help="build a CU-CH contraction hierarchy")
    con.add_argument("files", nargs="+")
    con.add_argument("--metric", default=None)
    con.add_argument("--K", type=int, default=1025, help="core size at which contraction stops")
    con.add_argument("--C", type=float, default=0.3, help="share of live nodes that are candidates")
    con.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    con.add_argument("--out", default=None, help="write the hierarchy here (.rlh)")
    con.add_argument("--json", action="store_true")
    return p


def _sssp_methods():
    from engine.sssp import METHODS
    return METHODS


def main(argv: list[str]) -> int:
    from engine.backend import BackendError
    from engine.io import LoadError
    from engine.paths import Unreachable

    args = parser().parse_args(argv)
    run = {"info": cmd_info, "route": cmd_route, "tree": cmd_tree,
           "contract": cmd_contract}[args.command]
    try:
        result = run(args)
    except (LoadError, BackendError, Unreachable, ValueError) as e:
        print(f"routelab {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyError as e:  # unknown node id or metric
        print(f"routelab {args.command}: {e.args[0]}", file=sys.stderr)
        return 1
    except OSError as e:   # e.g. --out in a folder that does not exist
        print(f"routelab {args.command}: {e}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(result, sys.stdout, default=_json_default)
        print()
    else:
        _print_human(args.command, result)
    return 0


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
