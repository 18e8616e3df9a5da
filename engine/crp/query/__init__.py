"""CRP queries on (overlay, cell metric): router.py is the CrpQuery, search.py its
bidirectional multilevel search, unpack.py turns shortcuts back into arcs, and
query_space.py and flat.py are the arrays they run on."""
