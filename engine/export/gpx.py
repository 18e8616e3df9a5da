"""GPX 1.1 (gpxpy): a path as one track (trk / trkseg) of the same points as its GeoJSON
LineString."""
from __future__ import annotations

import gpxpy.gpx

from engine.io.atomic import atomic_write
from engine.core.polylines import path_lonlat, require_coordinates

FORMAT = "GPX"


def path_gpx(graph, path, name: str, description: str = "") -> gpxpy.gpx.GPX:
    require_coordinates(graph, "a GPX track")
    gpx = gpxpy.gpx.GPX()
    gpx.creator = "RouteLab"
    gpx.name, gpx.description = name, description or None
    if graph.data_license:
        gpx.copyright_author = graph.data_license
    track = gpxpy.gpx.GPXTrack(name=name, description=description or None)
    segment = gpxpy.gpx.GPXTrackSegment()
    segment.points = [gpxpy.gpx.GPXTrackPoint(latitude=lat, longitude=lon)
                      for lon, lat in path_lonlat(graph, path.nodes, path.arcs).tolist()]
    track.segments.append(segment)
    gpx.tracks.append(track)
    return gpx


def write_route(out, graph, path, name: str, description: str = "") -> None:
    xml = path_gpx(graph, path, name, description).to_xml(version="1.1")
    with atomic_write(out) as f:
        f.write(xml.encode("utf-8"))
