"""Export geometry (issue 15): a polygon's GeoJSON follows the right-hand rule and its
rings are closed. The files the commands write are tested by tests/app/test_cli_export.py."""
from __future__ import annotations

import shapely
from shapely.geometry import shape


def test_polygon_geojson_is_right_hand_and_closed():
    from engine.export.geojson import polygonal
    square = shapely.Polygon([(0, 0), (0, 1), (1, 1), (1, 0)], holes=[[(0.2, 0.2), (0.8, 0.2), (0.8, 0.8)]])
    g = polygonal(square)                              # clockwise in, counter-clockwise out
    outer, hole = g["coordinates"]
    assert outer[0] == outer[-1] and hole[0] == hole[-1]
    assert shapely.LinearRing(outer).is_ccw and not shapely.LinearRing(hole).is_ccw
    assert shape(g).equals(square)


def test_tree_csv_is_rfc_4180_and_its_attribution_is_in_the_csvw_metadata(tmp_path):
    """The header row first (no comment line a CSV reader takes for data), CRLF line
    ends, every row parses to the header's fields (an unreached node's empty ones
    included). The metric, its unit and the data's
    attribution are in T.csv-metadata.json (W3C CSVW), which CSV readers never read."""
    import csv
    import dataclasses
    import json

    import numpy as np

    from engine.core.paths import ShortestPathTree
    from engine.core.units import Unit
    from engine.export.csv import metadata_path, write_tree
    from engine.generate.network import generate_road_network
    g = dataclasses.replace(generate_road_network(num_nodes=200, seed=1),
                            data_license="© OpenStreetMap contributors, ODbL 1.0")
    n = g.num_nodes
    distance = np.arange(n, dtype=np.int64) * 7
    parent = np.arange(n, dtype=np.int32) - 1
    distance[-1], parent[-1] = -1, -1                                   # not reached
    tree = ShortestPathTree(0, "travel_time", distance, parent, parent.copy())
    out = tmp_path / "tree.csv"
    assert write_tree(out, g, tree, Unit("ds")) == metadata_path(out) == f"{out}-metadata.json"
    data = out.read_bytes()
    assert data.startswith(b"node_id,distance,parent,lon,lat\r\n") and data.count(b"\r\n") == n + 1
    assert b"#" not in data and b"\n" not in data.replace(b"\r\n", b"")
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, strict=True))
    assert rows[0] == ["node_id", "distance", "parent", "lon", "lat"] and len(rows) == n + 1
    for v, row in enumerate(rows[1:]):
        assert len(row) == 5 and int(row[0]) == g.node_id[v]
        assert row[1] == ("" if v == n - 1 else str(7 * v))
        assert row[2] == ("" if v in (0, n - 1) else str(g.node_id[v - 1]))
        assert float(row[3]) == g.lon[v] and float(row[4]) == g.lat[v]
    meta = json.loads(open(metadata_path(out), encoding="utf-8").read())
    assert meta["@context"] == "http://www.w3.org/ns/csvw" and meta["url"] == "tree.csv"
    assert meta["dc:rights"] == "© OpenStreetMap contributors, ODbL 1.0"
    columns = meta["tableSchema"]["columns"]
    assert [c["titles"] for c in columns] == rows[0]
    assert "travel_time from node" in columns[1]["dc:description"] and \
        "in ds (deciseconds; 1 ds = 0.1 s)" in columns[1]["dc:description"]
