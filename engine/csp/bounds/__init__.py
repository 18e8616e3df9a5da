"""engine.csp.bounds.cpu."""
