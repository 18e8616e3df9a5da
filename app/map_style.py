"""How the map looks: road-class groups, their colours, widths and stacking order, and
what is drawn at which zoom (the level of detail's budget and thresholds).

Road classes (engine.core.graph.ROAD_CLASSES) are binned into a few groups; each group is
one big curve on the map, so the number of drawn items stays small (DESIGN principle 7).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.graph import ROAD_CLASS_INDEX, ROAD_CLASSES


@dataclass(frozen=True)
class RoadGroup:
    label: str
    classes: tuple[str, ...]
    color: tuple[int, int, int]
    width: float      # pixels (cosmetic pen)
    z: float          # stacking order: major roads on top
    major: bool       # kept when zoomed far out


ROAD_GROUPS: tuple[RoadGroup, ...] = (
    RoadGroup("motorway", ("motorway",), (190, 30, 60), 2.6, 8, True),
    RoadGroup("trunk", ("trunk",), (230, 95, 30), 2.2, 7, True),
    RoadGroup("primary", ("primary",), (240, 160, 20), 1.8, 6, True),
    RoadGroup("secondary", ("secondary",), (150, 150, 30), 1.4, 5, True),
    RoadGroup("tertiary", ("tertiary",), (120, 120, 120), 1.0, 4, False),
    RoadGroup("minor", ("unclassified", "residential", "living_street"), (170, 170, 170), 1.0, 3, False),
    RoadGroup("service", ("service",), (200, 200, 200), 1.0, 2, False),
    RoadGroup("ferry", ("ferry",), (70, 130, 200), 1.0, 1, False),
)

# A graph without road classes is drawn as one group in this style.
PLAIN_GROUP = RoadGroup("road", (), (105, 105, 105), 1.0, 3, True)

# road_class value -> group index into ROAD_GROUPS
CLASS_TO_GROUP = np.zeros(len(ROAD_CLASSES), dtype=np.int8)
for _g, _group in enumerate(ROAD_GROUPS):
    for _name in _group.classes:
        CLASS_TO_GROUP[ROAD_CLASS_INDEX[_name]] = _g
assert {c for g in ROAD_GROUPS for c in g.classes} == set(ROAD_CLASSES)

# Level of detail: what the map (app/map_view.py) draws at which zoom (metres per pixel)
CROP_MARGIN = 0.5              # cropped region: the view plus this share of it on each side
MAX_NODE_DOTS = 2_000
NODE_DOTS_BELOW_MPP = 2.5      # node dots only when a pixel covers less than this
MINOR_HIDDEN_ABOVE_MPP = 60.0  # minor classes are hidden when a pixel covers more metres
SEGMENT_BUDGET = 200_000      # segments drawn at most: pan <= ~100 ms at any size
PINNED_NEAR_PX = 60           # a pinned group over the budget is drawn this far around the markers

BACKGROUND = (246, 244, 238)
ROUTE_COLOR = (25, 95, 235)
ROUTE_CASING = (255, 255, 255)
ROUTE_WIDTH = 5.0
GHOST_COLOR = (120, 120, 140, 110)   # the route before the last metric edit, faint
GHOST_WIDTH = 7.0
SOURCE_COLOR = (20, 160, 70)
TARGET_COLOR = (215, 30, 120)
NODE_COLOR = (70, 70, 70, 200)
MARKER_SIZE = 16

# Hierarchy inspection: a node's upward and downward arcs (shortcuts dashed), and a
# shortcut unpacked onto the road with the node it bypasses.
# (colours apart from the road classes, so an original arc is not mistaken for a road)
UP_COLOR = (75, 25, 190)
DOWN_COLOR = (245, 120, 175)
UP_WIDTH = 2.0      # drawn over the wider downward arcs: a two-way pair shows both colours
DOWN_WIDTH = 6.0
INSPECTED_COLOR = (20, 20, 20)
UNPACKED_COLOR = (0, 170, 90)
UNPACKED_WIDTH = 5.0
MIDPOINT_COLOR = (255, 200, 0)

# Distances (a tree's bins, a service area's bands): a colour map and the part of it used.
COLORMAP = "plasma"
COLORMAP_SPAN = (0.0, 0.88)      # the palest yellow end is hard to see on the map background
