"""One GPU contraction under Nsight Compute, kernel durations summed by name, to
see which device work dominates (the host side: scripts/ch_host_profile.py).

    ncu --metrics gpu__time_duration.sum --csv --log-file K.csv \\
        python scripts/ch_kernel_times.py GRAPH...        # then
    python scripts/ch_kernel_times.py --summarize K.csv
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def summarize(path: str) -> None:
    total, calls = defaultdict(float), defaultdict(int)
    with open(path) as f:
        rows = [line for line in f if line.startswith('"')]
    for row in csv.DictReader(rows):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        ns = float(row["Metric Value"].replace(",", ""))
        scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(row["Metric Unit"], 1e-6)
        name = row["Kernel Name"][:70]
        total[name] += ns * scale
        calls[name] += 1
    print(f"{'kernel':72s} {'calls':>6s} {'ms':>9s}")
    for name, ms in sorted(total.items(), key=lambda kv: -kv[1])[:30]:
        print(f"{name:72s} {calls[name]:6d} {ms:9.3f}")
    print(f"{'all':72s} {sum(calls.values()):6d} {sum(total.values()):9.3f}")


if __name__ == "__main__":
    if sys.argv[1] == "--summarize":
        summarize(sys.argv[2])
    else:
        from engine import backend as backends
        from engine.ch import contract
        from engine.io import load
        contract(load(sys.argv[1:]), backend=backends.select("gpu"))
