"""engine.crp.partition.nested."""
