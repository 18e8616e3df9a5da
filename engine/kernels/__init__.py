"""CUDA sources (*.cu), shipped as package data and compiled by engine.core.backend.load_module."""
