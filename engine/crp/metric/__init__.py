"""engine.crp.metric: what a metric decoder is (decoder.py, expression.py), what it
compiles to for one graph (program.py), its CPU interpreter (interpreter.py) and the
arc costs and turn weights it gives (costs.py).

``FORBIDDEN`` (2^31-1) is the one integral cost that means "no way": an arc or turn a
decoder forbids, or a cell's entry-exit pair with no path. Every CRP step and the
window read it from here.
"""
FORBIDDEN = 2**31 - 1

__all__ = ["FORBIDDEN"]
