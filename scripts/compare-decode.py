#!/usr/bin/env python3
"""Compares what two builds of cyclelog print for `decode`, as JSON and as the readable table, byte for byte: for
every characteristic, its real payloads from Fixtures/captures and a seeded corpus of what a fuzzer throws at a
decoder (random lengths and bytes, real payloads cut short, lengthened and with bits flipped), each written as a
user or a log would write it (plain digits, upper case, spaced, dashed, with 0x, padded with whitespace) among
lines that are not values at all (odd digit counts, groups too long, letters that are not hex, comments, blank
lines, bytes that are not UTF-8, control characters). Then the Cycling Power payloads of the decode benchmark, a
million lines. Exit status 1 when any output or exit status differs.

    scripts/compare-decode.py OLD_CYCLELOG NEW_CYCLELOG
"""
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CHARACTERISTICS = ["2a63", "2a64", "2a65", "2a5d", "2a66", "2a5b", "2a5c", "2a55", "2a37", "2a38", "2ad2", "2ad3",
                   "2ad5", "2ad6", "2ad8", "2acc", "2ad9", "2ada", "2a19", "2a29", "2a24", "2a25", "2a27", "2a26",
                   "2a28"]
VALUES_PER_CHARACTERISTIC = 20_000
BENCH_LINES = 1_000_000


def real_payloads():
    """Payload hex by characteristic, from every capture table of the fixtures."""
    found = {}
    folder = os.path.join(ROOT, "Fixtures", "captures")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".tsv"):
            continue
        with open(os.path.join(folder, name)) as table:
            for line in table.readlines()[1:]:
                columns = line.rstrip("\n").split("\t")
                if len(columns) > 5 and columns[5]:
                    found.setdefault(columns[2].lower(), []).append(bytes.fromhex(columns[5]))
    return found


def written(value, rng):
    """`value` as someone might write it."""
    digits = value.hex()
    style = rng.randrange(8)
    if style == 1:
        digits = digits.upper()
    elif style == 2:
        digits = " ".join("%02x" % byte for byte in value)
    elif style == 3:
        digits = "-".join("%x" % byte for byte in value)
    elif style == 4:
        digits = "0x" + digits
    elif style == 5:
        digits = "\t " + digits + "  "
    elif style == 6:
        digits = ":".join("%02X" % byte for byte in value)
    return digits.encode()


def not_a_value(rng):
    return rng.choice([b"", b"   ", b"# a comment", b"abc", b"2c0g", b"2c 100 8b", b"0x", b"\xff\xfe", b"2c\x01",
                       b"\xc2\xa02c00\xc2\xa0", b"2c,00,8b", b"zz", b"2c008b00\x1b[31m", b"-", b"::"])


def corpus(payloads, rng):
    lines = []
    for _ in range(VALUES_PER_CHARACTERISTIC):
        roll = rng.random()
        if payloads and roll < 0.4:
            value = bytearray(rng.choice(payloads))
            mutation = rng.randrange(4)
            if mutation == 1 and value:
                del value[rng.randrange(len(value)):]
            elif mutation == 2:
                value += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
            elif mutation == 3 and value:
                value[rng.randrange(len(value))] ^= 1 << rng.randrange(8)
            lines.append(written(bytes(value), rng))
        elif roll < 0.95:
            value = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
            lines.append(written(value, rng) if value else b"00")
        else:
            lines.append(not_a_value(rng))
    return b"\n".join(lines) + b"\n"


def run(program, arguments, source):
    with open(source, "rb") as standard_input:
        done = subprocess.run([program] + arguments, stdin=standard_input, capture_output=True)
    return done.returncode, done.stdout, done.stderr


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare-decode.py OLD_CYCLELOG NEW_CYCLELOG")
    old, new = sys.argv[1:]
    rng = random.Random(20261202)
    payloads = real_payloads()
    differences = 0
    compared = 0
    with tempfile.TemporaryDirectory() as work:
        inputs = []
        for characteristic in CHARACTERISTICS:
            source = os.path.join(work, characteristic + ".txt")
            with open(source, "wb") as file:
                file.write(corpus(payloads.get(characteristic, []), rng))
            inputs.append((characteristic, source))
        bench = os.path.join(work, "bench.txt")
        conformant = [value.hex() for value in payloads["2a63"]]
        with open(bench, "w") as file:
            for index in range(BENCH_LINES):
                file.write(conformant[index % len(conformant)] + "\n")
        inputs.append(("2a63", bench))
        for characteristic, source in inputs:
            for form in (["--json"], []):
                arguments = ["decode", characteristic] + form
                answers = [run(program, arguments, source) for program in (old, new)]
                compared += 1
                if answers[0] != answers[1]:
                    differences += 1
                    print("differs: %s %s (%s)" % (" ".join(arguments), os.path.basename(source),
                                                   "status" if answers[0][0] != answers[1][0] else "output"))
    print("decode: %d inputs and forms compared, %d differences" % (compared, differences))
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
