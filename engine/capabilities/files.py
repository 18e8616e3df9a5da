"""The window's file jobs (hidden capabilities: not on the command line or the menus,
the same job channel): open and save a contraction hierarchy, and write an export the
window prepared (a graph cache is the ``cache`` capability: engine/capabilities/cache.py).
A save is refused before any work when its path is one of the files the graph came
from (``Workspace.input_files``), or a device, FIFO or folder (``check_target``)."""
from __future__ import annotations

from engine.capabilities import EVERY, Capability, register


def open_hierarchy(workspace, params: dict, ctx):
    h = workspace.load_hierarchy(params["path"])
    workspace.warm_up_hierarchy()
    return h


def check_target(workspace, params: dict) -> None:
    """The checks of every save job, before it starts: ``params["path"]`` is not a file
    the graph came from, and a regular file or a new path in a writable folder."""
    from engine.io.atomic import check_writable
    if params.get("path"):
        check_writable(params["path"], workspace.input_files)


def save_hierarchy(workspace, params: dict, ctx) -> str:
    check_target(workspace, params)
    h = workspace.hierarchy
    if h is None:
        raise RuntimeError("there is no contraction hierarchy to save: contract the graph first")
    return str(h.save(params["path"]))


def export(workspace, params: dict, ctx) -> str:
    """Write a file the window prepared (``params["write"]() -> what was written``): a
    tree of NY as GeoJSON takes a second, which the window must not wait for; the
    ``path`` it writes is checked first."""
    check_target(workspace, params)
    return params["write"]()


HIDDEN = dict(params=(), hidden=True, order=1000)
register(Capability(name="open_hierarchy", label="Opening a hierarchy", help="open a .rlh",
                    run=open_hierarchy, lane="contract", **HIDDEN))   # it supersedes a contraction
register(Capability(name="save_hierarchy", label="Saving the hierarchy", help="save a .rlh",
                    run=save_hierarchy, policy=EVERY, **HIDDEN))
register(Capability(name="export", label="Exporting", help="write a prepared export",
                    run=export, policy=EVERY, **HIDDEN))
