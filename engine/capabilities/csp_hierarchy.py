"""The bi-criteria hierarchy of two metrics (engine.csp.hierarchy) for the window's
cost-budgeted paths: build, open and save it (hidden capabilities: the same job
channel, not on the command line, where ``csp --hierarchy-file`` does it, or the menus).
The workspace keeps the hierarchies; the window gets their metrics and summary."""
from __future__ import annotations

from engine.capabilities import EVERY, Capability, register


def build(workspace, params: dict, ctx) -> dict:
    """Progress per contraction round and cancel between rounds."""
    def progress(done: int, total: int) -> None:
        ctx.cancel.check()
        ctx.progress(done / max(total, 1), f"Contracting: {done:,} of {total:,} nodes")
    h = workspace.csp_hierarchy(params["minimize"], params["budget_metric"], progress=progress)
    return answer(h)


def open_file(workspace, params: dict, ctx) -> dict:
    return answer(workspace.load_csp_hierarchy(params["path"], params["minimize"],
                                               params["budget_metric"]))


def save_file(workspace, params: dict, ctx) -> str:
    from engine.capabilities.files import check_target
    from engine.csp.hierarchy.file import save_pareto_hierarchy
    check_target(workspace, params)
    h = workspace.csp_hierarchy(params["minimize"], params["budget_metric"], build=False)
    if h is None:
        raise RuntimeError("there is no bi-criteria hierarchy of these metrics to save: build "
                           "one first")
    return str(save_pareto_hierarchy(h, params["path"]))


def answer(h) -> dict:
    """What the window keeps of a bi-criteria hierarchy (the arrays stay in the engine)."""
    return {"metrics": tuple(h.metrics), "summary": h.summary()}


HIDDEN = dict(params=(), hidden=True, order=1000)
register(Capability(name="csp_hierarchy", label="Building the bi-criteria hierarchy",
                    help="build a bi-criteria hierarchy", run=build, **HIDDEN))
register(Capability(name="open_csp_hierarchy", label="Opening a bi-criteria hierarchy",
                    help="open a .rlb", run=open_file, lane="csp_hierarchy", **HIDDEN))
register(Capability(name="save_csp_hierarchy", label="Saving the bi-criteria hierarchy",
                    help="save a .rlb", run=save_file, policy=EVERY, **HIDDEN))
