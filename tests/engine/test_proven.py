"""A hierarchy's witness check runs once per file (engine.io.proven): a file that
passed loads the next time without it; any write to the file (a damaged copy saved
over it included) makes the check run again; `routelab check` always runs it; a
cache folder that cannot be written only costs the check's time."""
from __future__ import annotations

import os

import numpy as np
import pytest

from engine.ch import Hierarchy, contract
from engine.ch.proof import Proof
from engine.csp.hierarchy.build import pareto_hierarchy_for
from engine.csp.hierarchy.file import load_pareto_hierarchy, save_pareto_hierarchy
from engine.generate.network import generate_road_network
from engine.io import LoadError, proven
from tests.hierarchy_damage import droppable, edited, pareto_droppable, pareto_edited
from tests.strategies import random_two_metric_graph


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("ROUTELAB_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def generated():
    g = generate_road_network(1500, seed=8)
    return g, contract(g, "distance")


def test_a_file_proves_itself_once(tmp_path, cache, generated):
    g, h = generated
    path = h.save(tmp_path / "g.rlh")
    assert isinstance(Hierarchy.load(path, g).proof, Proof)            # checked
    again = Hierarchy.load(path, g)
    assert isinstance(again.proof, proven.Remembered) and "unchanged" in again.proof.text()
    with proven.always_prove():
        assert isinstance(Hierarchy.load(path, g).proof, Proof)
    os.utime(path)                                                     # touched: checked again
    assert isinstance(Hierarchy.load(path, g).proof, Proof)


def test_a_damaged_file_saved_over_a_proven_one_is_refused(tmp_path, cache, generated):
    g, h = generated
    path = h.save(tmp_path / "g.rlh")
    Hierarchy.load(path, g)
    assert proven.known(path, "rlh")
    rng = np.random.default_rng(3)
    can = droppable(h)
    for count in (can.size // 4, can.size):
        damaged = edited(h, rng.choice(can, count, replace=False))
        damaged.save(path)
        with pytest.raises(LoadError, match="a shortcut is missing"):
            Hierarchy.load(path, g)
        assert not proven.known(path, "rlh")


def test_a_read_only_cache_costs_only_time(tmp_path, monkeypatch, generated):
    g, h = generated
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("ROUTELAB_CACHE_DIR", str(blocker))
    path = h.save(tmp_path / "g.rlh")
    for _ in range(2):
        assert isinstance(Hierarchy.load(path, g).proof, Proof)


def test_a_pareto_file_proves_itself_once(tmp_path, cache):
    g = random_two_metric_graph(5, n=60, m=240)
    h = pareto_hierarchy_for(g, "distance", "travel_time")
    path = save_pareto_hierarchy(h, tmp_path / "g.rlb")
    assert not isinstance(load_pareto_hierarchy(path, g).proof, proven.Remembered)
    assert isinstance(load_pareto_hierarchy(path, g).proof, proven.Remembered)
    drop = pareto_droppable(h)
    if drop.size:
        save_pareto_hierarchy(pareto_edited(h, drop), path)      # a new file: checked again
        try:
            loaded = load_pareto_hierarchy(path, g)   # every drop may have had a detour
        except LoadError as e:
            assert str(path) in str(e)
        else:
            assert not isinstance(loaded.proof, proven.Remembered)
