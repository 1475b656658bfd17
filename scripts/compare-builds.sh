#!/usr/bin/env bash
# Compares what two builds of cyclelog make of every ride fixture: each replayed (captures, journals) or imported (FIT
# files) into a fresh database by both, then the command's output, `show --json`, `show --journal`, the FIT, TCX and
# CSV exports and every stored table's rows compared byte for byte. Left out, as they differ between any two
# databases: the rider's and the collector's random identities (table rider), the change mark, and a workout's claim
# (token, time) and collector; of the derived state, the mark that the weeks' power curves were made (migration v26),
# which a build from before it has no table for, and the basis the FTP history was computed from (the rides' counters
# since migration v27, the rides' index read before). The tables compared are the old build's, read from a copy of
# its database that the new build has migrated (the power curves are packed anew since migration v28). Then both builds'
# cyclelog-mirror (beside each cyclelog) serve one database of every fixture (the old build's, and its copy opened by
# the new one), and scripts/compare-http.py compares their answers to every history request; and
# scripts/compare-decode.py what both print for `decode` (every characteristic, real and fuzzed values, as JSON and as
# the table). A structural change must leave everything else identical.
#
#     scripts/compare-builds.sh OLD_CYCLELOG NEW_CYCLELOG
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_CYCLELOG NEW_CYCLELOG" >&2; exit 64; }
old=$1 new=$2
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
workout="SELECT id, syncIdentifier, version, status, source, journalDigest, name, location, goal, sessionState,
  startMicroseconds, endMicroseconds, elapsedSeconds, movingSeconds, distanceMeters, averagePowerWatts, statistics,
  fitnessTest, sourceDigest, digestVersion, problemCount, preset, syncedVersion, syncedDigest, renamed FROM workout"
rides=0 differences=0
for file in Fixtures/rides/*.btsnoop Fixtures/rides/*.journal Fixtures/rides/fit/*.fit; do
    rides=$((rides + 1))
    for build in old new; do
        program=$([ $build = old ] && echo "$old" || echo "$new")
        out="$work/$build/$(basename "$file")"
        mkdir -p "$out"
        verb=$([[ $file == *.fit ]] && echo import || echo replay)
        "$program" $verb --db "$out/db.sqlite" "$file" > "$out/output" 2>&1
        "$program" show last --json --db "$out/db.sqlite" > "$out/show.json" 2>&1
        "$program" show last --journal --db "$out/db.sqlite" > "$out/journal" 2>&1
        for format in fit tcx csv; do
            "$program" export last --format $format --db "$out/db.sqlite" --output "$out/export.$format" > /dev/null 2>&1
        done
        # The old build's tables as the new build reads them: a copy its replay or import of the same file (which
        # finds the ride stored and changes nothing) has migrated, where the new build's layout is newer.
        tables="$out/db.sqlite"
        if [ $build = old ]; then
            tables="$work/migrated.sqlite"
            rm -f "$tables" "$tables-wal" "$tables-shm"
            sqlite3 "$out/db.sqlite" ".backup '$tables'"
            "$new" $verb --db "$tables" "$file" > /dev/null 2>&1
        fi
        sqlite3 "$tables" "$workout" > "$out/table.workout"
        for table in $(sqlite3 "$tables" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN
            ('grdb_migrations', 'workout', 'rider', 'changeMark') AND name NOT LIKE 'sqlite_%'"); do
            sqlite3 "$tables" "SELECT * FROM \"$table\"" \
                | grep -a -v -e '^powerCurveWeeks|' -e '^ftpHistory|' > "$out/table.$table"
        done
    done
    for part in "$work/old/$(basename "$file")"/*; do
        name=$(basename "$part")
        [ "$name" = db.sqlite ] && continue
        if ! cmp -s "$part" "$work/new/$(basename "$file")/$name"; then
            echo "differs: $(basename "$file") $name"
            differences=$((differences + 1))
        fi
    done
done
echo "$rides rides: $differences differences"
for file in Fixtures/rides/*.btsnoop Fixtures/rides/*.journal Fixtures/rides/fit/*.fit; do
    verb=$([[ $file == *.fit ]] && echo import || echo replay)
    "$old" $verb --db "$work/all.sqlite" "$file" > /dev/null 2>&1
done
# The old build's database, and a copy of it that the new build has opened for writing (migrated, when its schema is
# newer): each mirror serves the one it can read.
cp "$work/all.sqlite" "$work/all-new.sqlite"
"$new" recover --db "$work/all-new.sqlite" > /dev/null 2>&1
python3 scripts/compare-http.py "$(dirname "$old")/cyclelog-mirror" "$(dirname "$new")/cyclelog-mirror" \
    "$work/all.sqlite" "$work/all-new.sqlite" || differences=$((differences + 1))
python3 scripts/compare-decode.py "$old" "$new" || differences=$((differences + 1))
[ $differences -eq 0 ]
