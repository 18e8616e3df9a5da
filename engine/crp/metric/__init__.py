"""engine.crp.metric."""
