#!/usr/bin/env python3
"""The peer of `cyclelog decode 2a63 --json` as a whole process: pycycling 0.4.1 reading hex lines from standard
input and printing one JSON object per line (its measurement's fields), as a Python tool around it would."""
import json
import sys

from pycycling.cycling_power_service import _parse_cycling_power_measurement

out = sys.stdout
for line in sys.stdin:
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    out.write(json.dumps(_parse_cycling_power_measurement(bytearray.fromhex(line))._asdict()) + "\n")
