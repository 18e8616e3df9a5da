"""engine.crp.query.router."""
