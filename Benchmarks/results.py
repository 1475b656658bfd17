"""The figures of one `make bench` run, collected by each benchmark script and printed together at the end by
`summary.py`: one table with cyclelog and its peers, measured in the same run, and the machine."""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, ".build", "bench", "results.jsonl")


def add(capability, label, best=None, median=None, unit="s", peak_mb=None, target="", met=None):
    """One row: `best` and `median` in `unit` ("s", "ms", or any unit of a single value given as `median`)."""
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps({"capability": capability, "label": label, "best": best, "median": median, "unit": unit,
                            "peak_mb": peak_mb, "target": target, "met": met}) + "\n")

