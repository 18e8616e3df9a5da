"""A bi-criteria contraction hierarchy stopped at a core: its build (build.py,
contract.py, witness.py), its file (file.py) and the layered graph the labeling
searches on it (layered.py)."""
