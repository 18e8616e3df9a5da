"""The cost-budgeted query: CspQuery (budgeted.py) runs the bounds and the labeling on
the CPU or, through GpuSearch (gpu.py), on the GPU; results.py holds what it answers."""
