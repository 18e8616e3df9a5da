"""The service area (isochrones) of the tree on the map."""
