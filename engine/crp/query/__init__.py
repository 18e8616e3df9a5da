"""CRP queries on (overlay, cell metric): router.py is the CrpQuery, search.py its
bidirectional multilevel search (pruned by bounds.py's top-level lower bounds, on
engine.core.heaps' packed heap), unpack.py turns shortcuts back into arcs, and query_space.py and
flat.py are the arrays they run on."""
