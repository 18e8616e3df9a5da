"""Graphs: File ▸ Open / Open default network / Save cache, and the "Network" box."""
