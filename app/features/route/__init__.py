"""Routes: the "Route" box, the endpoints and their markers, the route on the map."""
