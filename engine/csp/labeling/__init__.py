"""engine.csp.labeling."""
