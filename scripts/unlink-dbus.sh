#!/bin/sh
# Takes libdbus out of the libraries a release program loads at its start: the program loads it at its first
# D-Bus call (Sources/CDBusLoader), but SwiftPM links every pkg-config library into each program that reaches it.
# Refuses, and leaves the program as linked, when the program calls libdbus other than through the loader.
#   scripts/unlink-dbus.sh PROGRAM
set -eu
program=$1
if nm -D --undefined-only "$program" | grep -q ' dbus_'; then
    echo "unlink-dbus: $program calls libdbus directly, not through Sources/CDBusLoader:" >&2
    nm -D --undefined-only "$program" | grep ' dbus_' >&2
    exit 1
fi
patchelf --remove-needed libdbus-1.so.3 "$program"
