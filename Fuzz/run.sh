#!/usr/bin/env bash
# Builds the fuzzers with libFuzzer + AddressSanitizer and runs every entry point for $1 seconds (default 60):
# the decoders, seeded with the real payloads from Fixtures/captures, and the readers of files and stored data
# (btsnoop, journal, compact journal, stored blobs), seeded from the fixtures and a database the built cyclelog
# makes of them. Any crash fails the run; the crashing input is left in .build-fuzz/ for reproduction
# (.build-fuzz/fuzz-decoders FILE, .build-fuzz/fuzz-stored FILE with the same CYCLELOG_FUZZ_TARGET).
# FUZZ_RUNS=N runs each target for N executions instead of a time; FUZZ_TARGETS="journal btsnoop" runs only those.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build-fuzz
mkdir -p "$out"
binary="$out/fuzz-decoders"
sources=(Sources/CyclingSensors/*.swift Fuzz/FuzzDecoders.swift)
build_decoders() {
    [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" -newer "$binary")" ] || return 0
    echo "fuzz: building $binary"
    # ld.gold warns about every ASan register helper it cannot export; those lines say nothing.
    swiftc -sanitize=fuzzer,address -parse-as-library -module-name CyclingSensors -O -g \
        "${sources[@]}" -o "$binary" 2>&1 | { grep -v "Cannot export local symbol" || true; }
    [ -x "$binary" ]
}

# The readers of files and stored data: Formats, Concurrency, CyclingSensors, StructuredWorkouts, FIT, WorkoutFiles,
# Workouts, RideJournal and Capture as instrumented static libraries, WorkoutStore's packing (which needs no GRDB)
# compiled with the entry point.
stored="$out/fuzz-stored"
stored_sources=(Sources/Formats/*.swift Sources/Concurrency/*.swift Sources/CyclingSensors/*.swift
    Sources/StructuredWorkouts/*.swift Sources/FIT/*.swift Sources/WorkoutFiles/*.swift
    Sources/Workouts/*.swift Sources/RideJournal/*.swift
    Sources/Capture/*.swift Sources/WorkoutStore/Packing.swift Fuzz/FuzzStoredData.swift)
build_stored() {
    [ ! -x "$stored" ] || [ -n "$(find "${stored_sources[@]}" -newer "$stored")" ] || return 0
    echo "fuzz: building $stored"
    local flags=(-sanitize=fuzzer,address -parse-as-library -O -g -I "$out" -I Sources/CZlib)
    for module in Formats Concurrency CyclingSensors StructuredWorkouts FIT WorkoutFiles Workouts RideJournal Capture; do
        swiftc "${flags[@]}" -emit-library -static -emit-module -emit-module-path "$out/$module.swiftmodule" \
            -module-name "$module" Sources/$module/*.swift -o "$out/lib$module.a" 2>&1 |
            { grep -v "Cannot export local symbol" || true; }
    done
    swiftc "${flags[@]}" -module-name FuzzStoredData Fuzz/FuzzStoredData.swift Sources/WorkoutStore/Packing.swift \
        -L "$out" -lCapture -lRideJournal -lWorkouts -lWorkoutFiles -lFIT -lStructuredWorkouts -lCyclingSensors \
        -lConcurrency -lFormats -lz -o "$stored" 2>&1 |
        { grep -v "Cannot export local symbol" || true; }
    [ -x "$stored" ]
}
# The two fuzzers are built side by side: each compiler run mostly keeps one core busy.
build_decoders &
decoders_built=$!
build_stored &
stored_built=$!
wait "$decoders_built" || { echo "fuzz: the decoders' fuzzer did not build" >&2; exit 1; }
wait "$stored_built" || { echo "fuzz: the stored-data fuzzer did not build" >&2; exit 1; }
if [ -x .build/debug/cyclelog ]; then
    python3 Fuzz/make_seeds.py .build/debug/cyclelog "$out/stored-seeds"
else
    python3 Fuzz/make_seeds.py /dev/null "$out/stored-seeds" 2>/dev/null || mkdir -p "$out/stored-seeds"
fi

targets=(cycling-power-measurement cycling-power-vector cycling-power-feature sensor-location
    cycling-power-control-point csc-measurement csc-feature sc-control-point heart-rate-measurement
    body-sensor-location indoor-bike-data indoor-bike-data-assembler training-status
    supported-inclination-range supported-resistance-level-range supported-power-range fitness-machine-feature
    fitness-machine-control-point fitness-machine-request fitness-machine-status battery-level
    manufacturer-name-string)

# Seeds shared by every target: each fixture payload (all characteristics: foreign shapes are good
# mutations too). libFuzzer reads them as a second corpus and writes new inputs only to the first.
seeds="$out/seeds"
mkdir -p "$seeds"
tail -q -n +2 Fixtures/captures/*.tsv | cut -f6 | sort -u | while read -r hex; do
    [ -e "$seeds/$hex" ] || printf '%s' "$hex" | xxd -r -p > "$seeds/$hex"
done

stored_targets=(btsnoop btsnoop-writer journal compact-journal stored-blobs zwo erg fit-workout workout-text)

limit=(-max_total_time="$seconds")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
# Each target is one single-threaded fuzzer: FUZZ_JOBS of them (default: one per core) run at a time, each for its
# full time; the results are printed in the usual order once all are done.
jobs=${FUZZ_JOBS:-$(nproc)}
results="$out/results"
rm -rf "$results"
mkdir -p "$results"
# run TARGET BINARY MAX_LEN SEEDS: leaves TARGET.ok or TARGET.failed in $results.
run() {
    local target=$1 fuzzer=$2 length=$3 seed_folder=$4
    local corpus="$out/corpus/$target"
    mkdir -p "$corpus" "$seed_folder"
    local started=$SECONDS
    if CYCLELOG_FUZZ_TARGET="$target" "$fuzzer" "${limit[@]}" -max_len="$length" -rss_limit_mb=2048 \
        -artifact_prefix="$out/crash-$target-" "$corpus" "$seed_folder" > "$out/$target.log" 2>&1; then
        runs=$(grep -Eo '^#[0-9]+' "$out/$target.log" | tail -1 | tr -d '#' || true)
        echo "fuzz: $target ok (${runs:-?} inputs in $((SECONDS - started))s)" > "$results/$target.ok"
    else
        { echo "fuzz: $target FAILED — see $out/$target.log"; tail -n 30 "$out/$target.log"; } \
            > "$results/$target.failed"
    fi
}
chosen() { [ -z "${FUZZ_TARGETS:-}" ] || [[ " $FUZZ_TARGETS " == *" $1 "* ]]; }
start() {
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    run "$@" &
}
ran=()
for target in "${targets[@]}"; do
    chosen "$target" || continue
    start "$target" "$binary" 64 "$seeds"
    ran+=("$target")
done
for target in "${stored_targets[@]}"; do
    chosen "$target" || continue
    start "$target" "$stored" "$([ "$target" = journal ] && echo 1024 || echo 4096)" "$out/stored-seeds/$target"
    ran+=("$target")
done
wait
passed=0
failed=0
for target in "${ran[@]}"; do
    if [ -f "$results/$target.ok" ]; then
        cat "$results/$target.ok"
        passed=$((passed + 1))
    else
        cat "$results/$target.failed" 2>/dev/null || echo "fuzz: $target FAILED — it left no result"
        failed=$((failed + 1))
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
