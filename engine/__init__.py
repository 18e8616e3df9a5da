"""RouteLab engine: road graphs, loaders and routing algorithms. Never imports Qt."""
