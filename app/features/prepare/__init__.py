"""Turn-aware routing prepared after a load, as a job of its own (engine.capabilities.prepare)."""
