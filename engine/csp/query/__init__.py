"""engine.csp.query.budgeted."""
