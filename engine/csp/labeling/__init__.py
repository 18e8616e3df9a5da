"""Exact label-setting for cost-budgeted paths: the CPU search (cpu.py), Vine's
parallel labeling on the GPU (gpu.py) and its adaptive parallelism (parallelism.py)."""
