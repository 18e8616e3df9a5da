"""CUDA sources (*.cu), shipped as package data and compiled by engine.backend.load_module."""
