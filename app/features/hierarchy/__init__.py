"""Contraction hierarchies: contraction, its charts, colour by level, inspect mode."""
