"""CRP customization: a decoder's costs to every cell's entry-to-exit costs, level by
level, bottom-up. customize.py holds the Customizer (one per overlay: it picks the
CPU twin (cpu.py, microcode.py) or the GPU (gpu.py, microcode_gpu.py, layout.py)); the
result is a CellMetric of host arrays (cell_metric.py)."""
