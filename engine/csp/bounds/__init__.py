"""Bounds that prune the labeling: exact distances to the target by each metric (cpu.py,
gpu.py) and a Lagrangian bound from LARAC's multiplier (lagrangian.py,
lagrangian_gpu.py)."""
