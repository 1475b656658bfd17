#!/usr/bin/env python3
"""pycycling 0.4.1 decoding the same payloads offline (its parse functions take bytes).
Usage: pycycling_bench.py FILE — FILE has lines "<characteristic> <hex>". Prints JSON {uuid: payloads/s}."""
import json
import sys
import time

from pycycling.cycling_power_service import _parse_cycling_power_measurement
from pycycling.cycling_speed_cadence_service import _parse_csc_measurement
from pycycling.heart_rate_service import _parse_hr_measurement
from pycycling.ftms_parsers.indoor_bike_data import parse_indoor_bike_data

PARSERS = {"2a63": _parse_cycling_power_measurement, "2a5b": _parse_csc_measurement,
           "2a37": _parse_hr_measurement, "2ad2": parse_indoor_bike_data}


def rate(parse, payloads, rounds=7, seconds=0.2):
    """Best of `rounds` rounds, as the Swift side measures."""
    best = 0.0
    for _ in range(rounds):
        count, start = 0, time.perf_counter()
        while True:
            for payload in payloads:
                try:
                    parse(payload)
                except Exception:  # pycycling raises on some real payloads; it still did the work
                    pass
            count += len(payloads)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        best = max(best, count / elapsed)
    return best


def main():
    corpus = {}
    for line in open(sys.argv[1]):
        uuid, hx = line.split()
        corpus.setdefault(uuid, []).append(bytearray.fromhex(hx))
    print(json.dumps({uuid: rate(PARSERS[uuid], payloads) for uuid, payloads in corpus.items() if uuid in PARSERS}))


if __name__ == "__main__":
    main()
