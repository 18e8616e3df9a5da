"""Cost-budgeted paths: csp mode, the budget slider, the charts, the bi-criteria hierarchy."""
