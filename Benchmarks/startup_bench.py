#!/usr/bin/env python3
"""Start-up (`make bench`): the release `cyclelog --version` and `cyclelog list` on an empty database, whole process,
best and median of RUNS interleaved runs and the peak memory of one, beside the floor: `/bin/true`, a process that
does nothing, started the same way. Everything a short command costs before it does its work: loading the binary
and its shared libraries, the runtime's set-up, ArgumentParser, opening SQLite. The shared libraries the program
loads at its start are listed: libdbus (and libsystemd with it) is loaded at the first D-Bus call instead."""
import os
import shutil
import subprocess
import tempfile

import results
from results import CYCLELOG

RUNS = 30


def startup_libraries(program):
    """The shared libraries the dynamic loader maps before `program`'s first instruction, by name."""
    listing = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[0] for line in listing.splitlines() if "=>" in line)


def main():
    folder = tempfile.mkdtemp(prefix="cyclelog-bench-")
    database = os.path.join(folder, "empty.sqlite")
    # A database with no rides, made by a writing command (a reading one leaves a missing file missing).
    subprocess.run([CYCLELOG, "recover", "--db", database], check=True, stdout=subprocess.DEVNULL)
    commands = [("/bin/true (the floor)", ["/bin/true"]), ("cyclelog --version", [CYCLELOG, "--version"]),
                ("cyclelog list (empty database)", [CYCLELOG, "list", "--db", database])]
    figures = results.measure_interleaved(commands, RUNS)
    print("\nStart-up, whole process (%d interleaved runs; best / median, peak memory; binary %.0f MB)"
          % (RUNS, os.path.getsize(CYCLELOG) / 1e6))
    for label, command in commands:
        fastest, median, peak = figures[label]
        print("  %-32s %5.1f ms / %5.1f ms  %5.1f MB" % (label, fastest * 1000, median * 1000, peak))
        floor = command[0] == "/bin/true"
        results.add("start-up", label, fastest, median, peak_mb=peak, target="" if floor else "≤ 5 ms",
                    met=None if floor else median <= 0.005)
    libraries = startup_libraries(CYCLELOG)
    dbus = [name for name in libraries if name.startswith(("libdbus", "libsystemd"))]
    print("  shared libraries loaded at start: %d (%s)%s" % (
        len(libraries), ", ".join(libraries), "" if not dbus else "; D-Bus's among them: " + ", ".join(dbus)))
    results.add("start-up", "shared libraries loaded at start", median=len(libraries), unit="libraries",
                target="not libdbus nor libsystemd", met=not dbus)
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
