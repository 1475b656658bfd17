#!/bin/sh
# Installs (or removes) cyclelog as a system service: the binaries and their manual pages, the systemd unit and its
# user, the udev rules and the D-Bus policy; and for desktops the built-in presets as launcher actions with the session bus's
# activation file (a rider's own presets: `cyclelog presets install`). `make install` / `make uninstall` run it; DESTDIR stages into a folder instead
# (packaging, tests), and then nothing on the running system is touched.
set -eu
action=${1:?install or uninstall}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BINDIR=$PREFIX/bin
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
SYSUSERSDIR=${SYSUSERSDIR:-$PREFIX/lib/sysusers.d}
# udev and dbus-daemon read these on every distribution; neither looks under /usr/local.
UDEVDIR=${UDEVDIR:-/etc/udev/rules.d}
DBUSDIR=${DBUSDIR:-/etc/dbus-1/system.d}
DOCDIR=$PREFIX/share/doc/cyclelog
MANDIR=${MANDIR:-$PREFIX/share/man}
# The session bus and launchers look under XDG_DATA_DIRS, /usr/local/share and /usr/share by default.
DATADIR=${DATADIR:-$PREFIX/share}
BINARY=${BINARY:-.build/release/cyclelog}
MIRROR_BINARY=${MIRROR_BINARY:-.build/release/cyclelog-mirror}
# Empty: installed without cyclelog-sync and its units (a box that never syncs).
SYNC_BINARY=${SYNC_BINARY-.build/release/cyclelog-sync}
# The desktop item, for the desktop's users (each starts it with `cyclelog-desktop autostart`). Empty: installed
# without it (a box by the trainer with no desktop).
DESKTOP_BINARY=${DESKTOP_BINARY-.build/release/cyclelog-desktop}

live_system() { [ -z "$DESTDIR" ]; }
systemd_running() { live_system && [ -d /run/systemd/system ]; }

case $action in
install)
    for binary in "$BINARY" "$MIRROR_BINARY" ${SYNC_BINARY:+"$SYNC_BINARY"} ${DESKTOP_BINARY:+"$DESKTOP_BINARY"}; do
        [ -x "$binary" ] || { echo "install-service: $binary is missing: run make release first" >&2; exit 1; }
    done
    install -D -m 0755 "$BINARY" "$DESTDIR$BINDIR/cyclelog"
    install -D -m 0755 "$MIRROR_BINARY" "$DESTDIR$BINDIR/cyclelog-mirror"
    if [ -n "$DESKTOP_BINARY" ]; then install -D -m 0755 "$DESKTOP_BINARY" "$DESTDIR$BINDIR/cyclelog-desktop"; fi
    # The units with this prefix's paths, made outside the source tree (which may be read-only).
    unit=$(mktemp)
    for name in cyclelog cyclelog-mirror ${SYNC_BINARY:+cyclelog-sync}; do
        sed "s#/usr/local/bin/#$BINDIR/#; s#/usr/local/share/doc/cyclelog#$DOCDIR#" \
            systemd/$name.service >"$unit"
        install -D -m 0644 "$unit" "$DESTDIR$UNITDIR/$name.service"
    done
    if [ -n "$SYNC_BINARY" ]; then
        install -D -m 0755 "$SYNC_BINARY" "$DESTDIR$BINDIR/cyclelog-sync"
        install -D -m 0644 systemd/cyclelog-sync.timer "$DESTDIR$UNITDIR/cyclelog-sync.timer"
        install -D -m 0644 systemd/cyclelog-sync.path "$DESTDIR$UNITDIR/cyclelog-sync.path"
    fi
    # The capture and hub drop-ins are documentation until a rider copies one (README: a capture for a bug report;
    # the recording guide: the hub).
    for drop_in in cyclelog-capture cyclelog-hub; do
        sed "s#/usr/local/bin/#$BINDIR/#" systemd/$drop_in.conf >"$unit"
        install -D -m 0644 "$unit" "$DESTDIR$DOCDIR/$drop_in.conf"
    done
    rm -f "$unit"
    install -D -m 0644 systemd/cyclelog.sysusers "$DESTDIR$SYSUSERSDIR/cyclelog.conf"
    for rules in udev/*.rules; do install -D -m 0644 "$rules" "$DESTDIR$UDEVDIR/$(basename "$rules")"; done
    install -D -m 0644 dbus/org.cyclelog.Recorder.conf "$DESTDIR$DBUSDIR/org.cyclelog.Recorder.conf"
    install -D -m 0644 dbus/org.cyclelog.Mirror.conf "$DESTDIR$DBUSDIR/org.cyclelog.Mirror.conf"
    install -D -m 0644 README.md "$DESTDIR$DOCDIR/README.md"
    for page in Docs/guide/*.md Docs/reference/*.md; do install -D -m 0644 "$page" "$DESTDIR$DOCDIR/${page#Docs/}"; done
    # A manual page per program, written from the installed programs' own help (scripts/make-man.py), or taken
    # from MAN_PAGES, a folder where they were written already from the same programs.
    pages=${MAN_PAGES:-$(mktemp -d)}
    [ -n "${MAN_PAGES:-}" ] || python3 scripts/make-man.py --bin "$(dirname "$BINARY")" --out "$pages" >/dev/null
    for page in "$pages"/*.1; do
        [ -n "$SYNC_BINARY" ] || [ "$(basename "$page")" != cyclelog-sync.1 ] || continue
        [ -n "$DESKTOP_BINARY" ] || [ "$(basename "$page")" != cyclelog-desktop.1 ] || continue
        install -D -m 0644 "$page" "$DESTDIR$MANDIR/man1/$(basename "$page")"
    done
    [ -n "${MAN_PAGES:-}" ] || rm -rf "$pages"
    "$BINARY" presets install --built-in --data-home "$DESTDIR$DATADIR" --executable "$BINDIR/cyclelog" >/dev/null
    if live_system; then
        command -v systemd-sysusers >/dev/null && systemd-sysusers "$SYSUSERSDIR/cyclelog.conf"
        # The service's state directory exists before its first start, so that its sensors can be remembered
        # first (StateDirectory= would make it only when the service starts).
        install -d -m 0750 -o cyclelog -g cyclelog /var/lib/cyclelog
        command -v udevadm >/dev/null && udevadm control --reload 2>/dev/null || true
        # dbus-daemon reads new policy files on ReloadConfig (the service user exists by now).
        dbus-send --system --type=method_call --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig \
            2>/dev/null || true
        if systemd_running; then systemctl daemon-reload; fi
        echo "installed. Remember the sensors, then start the service:"
        echo "  sudo -u cyclelog $BINDIR/cyclelog sensors add ADDRESS --db /var/lib/cyclelog/cyclelog.sqlite"
        echo "  sudo systemctl enable --now cyclelog"
        echo "Riders in the cyclelog group may control its rides: cyclelog status --control-bus system"
        echo "The ride on a phone (local network, paired devices only):"
        echo "  sudo systemctl enable --now cyclelog-mirror && cyclelog-mirror pair --control-bus system"
        echo "Rides to and from a shared PostgreSQL: README, \"Rides on every machine\"; then"
        echo "  sudo systemctl enable --now cyclelog-sync.timer cyclelog-sync.path"
    fi
    ;;
uninstall)
    if systemd_running; then
        systemctl disable --now cyclelog.service cyclelog-mirror.service cyclelog-sync.timer cyclelog-sync.path \
            2>/dev/null || true
    fi
    rm -f "$DESTDIR$BINDIR/cyclelog" "$DESTDIR$UNITDIR/cyclelog.service" "$DESTDIR$SYSUSERSDIR/cyclelog.conf" \
        "$DESTDIR$BINDIR/cyclelog-mirror" "$DESTDIR$UNITDIR/cyclelog-mirror.service" "$DESTDIR$BINDIR/cyclelog-desktop" \
        "$DESTDIR$BINDIR/cyclelog-sync" "$DESTDIR$UNITDIR/cyclelog-sync.service" "$DESTDIR$UNITDIR/cyclelog-sync.timer" \
        "$DESTDIR$UNITDIR/cyclelog-sync.path" \
        "$DESTDIR$DBUSDIR/org.cyclelog.Recorder.conf" "$DESTDIR$DBUSDIR/org.cyclelog.Mirror.conf" "$DESTDIR$DOCDIR/README.md" \
        "$DESTDIR$DOCDIR/cyclelog-capture.conf" "$DESTDIR$DOCDIR/cyclelog-hub.conf" \
        "$DESTDIR$DATADIR/applications/org.cyclelog.Recorder.desktop" \
        "$DESTDIR$DATADIR/dbus-1/services/org.cyclelog.Recorder.service" \
        "$DESTDIR$MANDIR/man1/cyclelog.1" "$DESTDIR$MANDIR/man1/cyclelog-mirror.1" "$DESTDIR$MANDIR/man1/cyclelog-sync.1" \
        "$DESTDIR$MANDIR/man1/cyclelog-desktop.1"
    for rules in udev/*.rules; do rm -f "$DESTDIR$UDEVDIR/$(basename "$rules")"; done
    for page in Docs/guide/*.md Docs/reference/*.md; do rm -f "$DESTDIR$DOCDIR/${page#Docs/}"; done
    rmdir "$DESTDIR$DOCDIR/guide" "$DESTDIR$DOCDIR/reference" "$DESTDIR$DOCDIR" 2>/dev/null || true
    if systemd_running; then systemctl daemon-reload; fi
    if live_system; then
        echo "uninstalled. The rides stay in /var/lib/cyclelog and the cyclelog user stays; remove them by hand."
    fi
    ;;
*)
    echo "usage: $0 install|uninstall" >&2
    exit 2
    ;;
esac
