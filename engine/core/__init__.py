"""The core every layer stands on: the road graph as flat arrays, paths and trees, metrics
and units, the turn-aware graph, the device backend (the one module that imports
CuPy), timing, progress and cancellation, jobs, and the Numba heaps and buffers the
searches share."""
