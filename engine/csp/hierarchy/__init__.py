"""engine.csp.hierarchy."""
