"""RouteLab's data files, shipped inside the wheel and found with importlib.resources
(never by a path relative to the source tree): ``decoders/`` holds the metric
decoders (TOML) that CRP customizes with."""
