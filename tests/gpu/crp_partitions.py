"""Partitions for the CRP GPU tests: the device has no METIS, so a partition saved
beside the data (``DATA/crp/NAME.rlp``, seed 0, made by scripts or a CPU run) is
loaded when present; otherwise one is computed, or the test skips without pymetis."""
from __future__ import annotations

import pytest

from tests.conftest import DATA


def partition_for(graph, name: str | None = None):
    from engine.crp.partition.nested import Partition, partition_graph
    path = DATA / "crp" / f"{name}.rlp" if name else None
    if path is not None and path.exists():
        return Partition.load(path, graph)
    pytest.importorskip("pymetis", reason=f"no {path or 'saved partition'} and no METIS to partition")
    return partition_graph(graph, seed=0)
