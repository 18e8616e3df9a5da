"""Profile the host side of a GPU contraction (launch overhead and waits), to see
which array operations dominate a level.  python scripts/ch_host_profile.py GRAPH..."""
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import backend as backends  # noqa: E402
from engine.ch import contract  # noqa: E402
from engine.io import load  # noqa: E402

g = load(sys.argv[1:])
backend = backends.select("gpu")
contract(g, backend=backend)
profile = cProfile.Profile()
profile.enable()
contract(g, backend=backend)
profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(35)
