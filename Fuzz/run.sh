#!/usr/bin/env bash
# Builds the decoder fuzzer with libFuzzer + AddressSanitizer and runs every entry point for $1 seconds
# (default 60), seeded with the real payloads from Fixtures/captures. Any crash fails the run; the
# crashing input is left in .build-fuzz/ for reproduction (.build-fuzz/fuzz-decoders FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build-fuzz
mkdir -p "$out"
binary="$out/fuzz-decoders"
sources=(Sources/CyclingSensors/*.swift Fuzz/FuzzDecoders.swift)
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" -newer "$binary")" ]; then
    echo "fuzz: building $binary"
    # ld.gold warns about every ASan register helper it cannot export; those lines say nothing.
    swiftc -sanitize=fuzzer,address -parse-as-library -module-name CyclingSensors -O -g \
        "${sources[@]}" -o "$binary" 2>&1 | { grep -v "Cannot export local symbol" || true; }
    [ -x "$binary" ]
fi

targets=(cycling-power-measurement cycling-power-vector cycling-power-feature sensor-location
    cycling-power-control-point csc-measurement csc-feature sc-control-point heart-rate-measurement
    body-sensor-location indoor-bike-data indoor-bike-data-assembler training-status
    supported-resistance-level-range supported-power-range fitness-machine-feature
    fitness-machine-control-point fitness-machine-status battery-level manufacturer-name-string)

# Seeds shared by every target: each fixture payload (all characteristics: foreign shapes are good
# mutations too). libFuzzer reads them as a second corpus and writes new inputs only to the first.
seeds="$out/seeds"
mkdir -p "$seeds"
tail -q -n +2 Fixtures/captures/*.tsv | cut -f6 | sort -u | while read -r hex; do
    [ -e "$seeds/$hex" ] || printf '%s' "$hex" | xxd -r -p > "$seeds/$hex"
done

passed=0
failed=0
for target in "${targets[@]}"; do
    corpus="$out/corpus/$target"
    mkdir -p "$corpus"
    if CYCLELOG_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -max_len=64 \
        -artifact_prefix="$out/crash-$target-" "$corpus" "$seeds" > "$out/$target.log" 2>&1; then
        runs=$(grep -Eo '^#[0-9]+' "$out/$target.log" | tail -1 | tr -d '#' || true)
        echo "fuzz: $target ok (${runs:-?} inputs in ${seconds}s)"
        passed=$((passed + 1))
    else
        echo "fuzz: $target FAILED — see $out/$target.log"
        tail -n 30 "$out/$target.log"
        failed=$((failed + 1))
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
