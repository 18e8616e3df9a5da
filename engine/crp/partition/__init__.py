"""CRP's metric-independent half: the nested multi-level partition (nested.py, METIS)
and the overlay topology built on it (overlay.py), with no weights."""
