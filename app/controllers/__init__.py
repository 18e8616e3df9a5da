"""One controller per capability (DESIGN principle 11): registered, not wired.

``CONTROLLERS`` maps a job kind to the controller class that handles it; the window
makes one of each, and a ``GenericController`` for every registered capability that
has a menu and no controller of its own. A new capability is engine modules, an
``engine.capabilities.register(...)`` entry, and (optionally) one module here with a
``@register_controller`` class imported below.
"""
from app.controllers.base import CONTROLLERS, Controller, controller_classes, register_controller
from app.controllers import graph, route, tree, hierarchy, crp, csp  # noqa: E402,F401  (they register)
from app.controllers import isochrone, export  # noqa: E402,F401  (after tree: the service area extends its box)
from app.controllers import csp_hierarchy  # noqa: E402,F401  (after csp: it extends its box)
from app.controllers.generic import GenericController  # noqa: E402

__all__ = ["CONTROLLERS", "Controller", "GenericController", "controller_classes",
           "register_controller"]
