"""engine.generate.network."""
