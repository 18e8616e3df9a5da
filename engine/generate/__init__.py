"""The generated road network RouteLab opens when no file is given (deterministic from
a seed): network.py builds the graph, layout.py decides where things lie."""
