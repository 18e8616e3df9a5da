"""After a load, where turns matter: the turn model and its router are built as a job
of their own (engine.capabilities.prepare), right after the map is shown, so that the
person pans and zooms meanwhile and the first click is answered at once. It runs
before the background hierarchy (its controller's order is later), which then finds
the turn model built."""
from __future__ import annotations

from engine.model.hierarchy import turns_matter

from app.feature import Controller, register_controller


@register_controller
class PrepareController(Controller):
    order = 35                       # before the hierarchy's background contraction (40)
    kinds = ("prepare",)

    def graph_changed(self) -> None:
        g = self.session.graph
        # background work after a load, as the hierarchy's (tests turn both off at once)
        if self.session.background_hierarchy and g.num_nodes and turns_matter(g):
            # "background": a new load cancels it (EngineClient.submit)
            self.engine.submit("prepare", {"metric": g.default_metric, "background": True})

    def on_result(self, job, prepared) -> None:
        if prepared.expanded_nodes:
            self.window.statusBar().showMessage(
                f"Routes ready: {prepared.router} on the turn model ({prepared.expanded_nodes:,} "
                f"nodes, {prepared.expanded_edges:,} edges, {prepared.model_bytes / 2**20:,.0f} MB) "
                f"in {prepared.seconds:.1f} s", 8000)

    def on_cancelled(self, job, message: str) -> None:
        pass                         # a new graph came: nothing to say
