"""The window's file jobs (hidden capabilities: not on the command line or the menus,
the same job channel): open and save a contraction hierarchy, save a graph cache, and
write an export the window prepared."""
from __future__ import annotations

from engine.capabilities import EVERY, Capability, register


def open_hierarchy(workspace, params: dict, ctx):
    h = workspace.load_hierarchy(params["path"])
    workspace.warm_up_hierarchy()
    return h


def save_hierarchy(workspace, params: dict, ctx) -> str:
    h = workspace.hierarchy
    if h is None:
        raise RuntimeError("there is no contraction hierarchy to save: contract the graph first")
    return str(h.save(params["path"]))


def save_cache(workspace, params: dict, ctx) -> str:
    from engine.io.cache import save_cache as save
    return str(save(workspace.graph, params["path"]) or params["path"])


def export(workspace, params: dict, ctx) -> str:
    """Write a file the window prepared (``params["write"]() -> what was written``): a
    tree of NY as GeoJSON takes a second, which the window must not wait for."""
    return params["write"]()


HIDDEN = dict(params=(), hidden=True, order=1000)
register(Capability(name="open_hierarchy", label="Opening a hierarchy", help="open a .rlh",
                    run=open_hierarchy, lane="contract", **HIDDEN))   # it supersedes a contraction
register(Capability(name="save_hierarchy", label="Saving the hierarchy", help="save a .rlh",
                    run=save_hierarchy, policy=EVERY, **HIDDEN))
register(Capability(name="save_cache", label="Saving the cache", help="save a graph cache",
                    run=save_cache, policy=EVERY, **HIDDEN))
register(Capability(name="export", label="Exporting", help="write a prepared export",
                    run=export, policy=EVERY, **HIDDEN))
