"""Taking results out of RouteLab in field-standard formats, one module per format:
GeoJSON (RFC 7946, written with the standard library), GPX (gpxpy) and CSV. Every
write is atomic (engine.io.atomic); coordinates are lon/lat (WGS 84) in GeoJSON order;
the data's attribution (e.g. "© OpenStreetMap contributors") travels with them."""
from __future__ import annotations


def write_path(graph, path, params: dict, properties: dict, title: str, description: str) -> None:
    """Write ``path`` to the files its command asked for: ``params["geojson"]`` (a
    LineString with ``properties``), ``params["gpx"]`` (a track named ``title``)."""
    if params.get("geojson"):
        from engine.export import geojson
        geojson.write_route(params["geojson"], graph, path, properties)
    if params.get("gpx"):
        from engine.export import gpx
        gpx.write_route(params["gpx"], graph, path, title, description)


def written_lines(r: dict) -> list[str]:
    """Command-line lines for the files a result says it wrote."""
    return [f"  {name} written to {r[key]}" for key, name in (
        ("geojson", "GeoJSON"), ("gpx", "GPX"), ("csv", "CSV"),
        ("csv_metadata", "its columns, units and attribution (CSVW metadata)")) if r.get(key)]
