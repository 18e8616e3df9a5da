"""Loading road graphs: DIMACS, OpenStreetMap, and RouteLab's own cache.

``load(paths)`` picks the reader from the file names; every reader raises
``LoadError`` (file, line, reason) for bad input and never returns a half-built graph.
"""
from __future__ import annotations

import os
from pathlib import Path

from engine.core.graph import GraphError, RoadGraph
from engine.io.errors import LoadError
from engine.io.limits import check_regular_file
from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

__all__ = ["LoadError", "load", "file_kind", "siblings_used", "companion_files"]

OSM_SUFFIXES = (".osm.pbf", ".pbf", ".osm", ".osm.gz", ".osm.bz2")
DIMACS_GR_SUFFIXES = (".gr", ".gr.gz")
DIMACS_CO_SUFFIXES = (".co", ".co.gz")
CACHE_SUFFIXES = (".rlg", ".npz")


def file_kind(path) -> str:
    name = os.fspath(path).lower()
    for kind, suffixes in (("osm", OSM_SUFFIXES), ("dimacs-gr", DIMACS_GR_SUFFIXES),
                           ("dimacs-co", DIMACS_CO_SUFFIXES), ("cache", CACHE_SUFFIXES)):
        if name.endswith(suffixes):
            return kind
    raise LoadError(path, "unknown file type (expected .gr[.gz], .co[.gz], "
                          ".osm.pbf/.osm[.gz], or a RouteLab cache .rlg/.npz)")


def load(paths, progress: ProgressFn = no_progress,
         cancel: CancelToken = NEVER_CANCELLED, siblings: bool = True) -> RoadGraph:
    """Load one graph from one or more files of the same kind.

    DIMACS: one or more ``.gr`` files with the same arcs (one metric each) and an
    optional ``.co``. With ``siblings`` (the default), a ``.co`` beside the first
    ``.gr`` (when none is named) and the other metric file (``-d``/``-t``) of the
    DIMACS USA naming scheme are added when they match the graph; a sibling that
    does not match is skipped with a ``dimacs.SiblingWarning``, never an error.
    ``siblings_used(graph)`` names the siblings that were added.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise LoadError(None, "no file given")
    for p in paths:
        check_regular_file(p)   # no FIFO (hangs), device (endless) or directory
    kinds = {file_kind(p) for p in paths}
    try:
        if kinds <= {"dimacs-gr", "dimacs-co"}:
            from engine.io import dimacs
            return dimacs.load_dimacs(paths, progress=progress, cancel=cancel,
                                      siblings=siblings)
        if kinds == {"osm"} and len(paths) == 1:
            from engine.io import osm
            return osm.load_osm(paths[0], progress=progress, cancel=cancel)
        if kinds == {"cache"} and len(paths) == 1:
            from engine.io import cache
            return cache.load_cache(paths[0])
    except GraphError as e:  # a consistency check of RoadGraph caught bad data
        raise LoadError(paths[0], str(e)) from None
    raise LoadError(paths[0], "cannot combine these files into one graph: give DIMACS "
                              ".gr/.co files together, or one OSM or cache file")


def siblings_used(graph) -> list[str]:
    """The sibling files a load added without being asked (marked in ``graph.source``)."""
    from engine.io.dimacs import SIBLING
    return [part[:-len(SIBLING)] for part in graph.source.split(" + ") if part.endswith(SIBLING)]


def companion_files(paths) -> list[Path]:
    """The files beside ``paths`` that ``load(paths)`` may read without being asked (the
    DIMACS siblings: the other metric's ``.gr``, the ``.co``), whether they match or
    not: known before loading, so that no output is written over one."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    grs = [Path(p) for p in paths if os.fspath(p).lower().endswith(DIMACS_GR_SUFFIXES)]
    if not grs:
        return []
    from engine.io.dimacs import companions
    extra_grs, co = companions(grs[0])
    return extra_grs + ([co] if co is not None else [])
