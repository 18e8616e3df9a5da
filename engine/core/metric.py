"""Metric: what "shortest" means on a graph's arcs — a name, a unit, integral weights
and a content hash.

Everything built for one metric (a contraction hierarchy, a customization) records
the hash of the weights it was built from and is refused for any other weights, so
a metric edited under the same name can never be answered with stale preprocessing.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True, eq=False)
class Metric:
    name: str
    weights: np.ndarray          # int32 [m] per arc, in the graph's arc order
    unit: str = ""               # e.g. "m", "s", "ds"; "" when unknown

    @cached_property
    def hash(self) -> str:
        """Content hash of the weights (dtype, length and values): 16 hex digits."""
        w = np.ascontiguousarray(self.weights)
        digest = hashlib.blake2b(digest_size=8)
        digest.update(f"{w.dtype.str}:{w.size}:".encode())
        digest.update(w.view(np.uint8))
        return digest.hexdigest()

    @classmethod
    def of(cls, graph, name: str | None = None) -> "Metric":
        """The metric ``name`` (default: the graph's first) of ``graph``."""
        name = name or graph.default_metric
        return cls(name, graph.metric(name), graph.metric_units.get(name, ""))

    def __repr__(self) -> str:
        return f"Metric({self.name!r}, {self.weights.size} arcs, unit={self.unit!r}, hash={self.hash})"
