"""engine.crp.customization."""
