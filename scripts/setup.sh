#!/usr/bin/env bash
# Installs the system packages cyclelog's build, tests and benchmarks need, and only those missing.
# Debian/Ubuntu; runs apt-get as root or through sudo, and says what it installs.
#   scripts/setup.sh            packages for building and testing (Debian's, and dbus-fast, garmin-fit-sdk,
#                               fitdecode, tcxreader and websocket-client from PyPI, into .venv)
#   scripts/setup.sh --bench    also the peers measured by `make bench` (pycycling from PyPI)
#   scripts/setup.sh --vm       also the real Linux Bluetooth stack for `make test-vm`: qemu, the distribution
#                               kernel, BlueZ and its emulator tools (Debian's), virtme-ng and bumble (PyPI)
set -euo pipefail

# tmux gives the dashboard test a terminal; systemd, udev and the dbus tools check the service files;
# desktop-file-validate and gapplication check the desktop actions; Chromium shows the mirror's page in its
# tests and qrencode draws `cyclelog-mirror pair`'s QR code; the sync tests start their own PostgreSQL 15 server;
# openssl makes the certificates of the TLS tests, curl and Chromium (trusting the test authority through NSS's
# certutil) are the HTTPS clients of the mirror's, iproute2 makes the network namespace the sync's network cuts
# happen in; python3-venv makes the project's own Python environment (below); the desktop item is checked against
# a real status area and notification daemon (xfce4-panel's, xfce4-notifyd) under Xvfb, clicked with xdotool,
# photographed with ImageMagick's import (x11-utils: xdpyinfo says when the X server is up); patchelf takes libdbus
# out of what the release programs load at their start (scripts/unlink-dbus.sh).
packages=(tshark python3 python3-venv libsqlite3-dev zlib1g-dev librsvg2-bin libdbus-1-dev libbluetooth-dev dbus-daemon tmux patchelf
    systemd udev dbus-bin dbus-system-bus-common desktop-file-utils libglib2.0-bin chromium qrencode postgresql-15
    openssl libnss3-tools iproute2 curl xvfb x11-utils xfce4-panel xfce4-notifyd xdotool imagemagick)
if [ "${1:-}" = "--vm" ]; then
    # virtme-ng boots the kernel with this machine's filesystem and needs busybox for its init; btvirt is in
    # bluez-test-tools; the service's VM boots systemd-sysv's /sbin/init and starts dbus's system bus unit;
    # avahi-daemon announces the hub over DirCon by mDNS in the VM.
    packages+=(qemu-system-x86 linux-image-amd64 busybox-static bluez bluez-test-tools systemd-sysv dbus avahi-daemon)
fi
if [ "${1:-}" = "--bench" ]; then
    # GNU time reports a command's own peak memory (a child of Python carries Python's into its own high-water mark).
    packages+=(time)
fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ! command -v swift >/dev/null 2>&1; then
    echo "setup: Swift is not on PATH; install the Swift 6 toolchain from swift.org first." >&2
    exit 1
fi

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing missing Debian packages: ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    # tshark asks whether non-root users may capture; the answer does not matter for reading files.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "setup: installed ${missing[*]}"
fi

# The tools from PyPI go into a Python environment of the project's own, .venv beside this folder, made with
# Debian's interpreter: Debian's python3 is externally managed (PEP 668) and refuses `pip install`, and a rider's
# Python is not ours to change. The Makefile puts .venv/bin first on PATH, so every `python3` of a target, of the
# tests and of the scripts they start is this one.
venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"
interpreter=/usr/bin/python3
[ -x "$interpreter" ] || interpreter=$(command -v python3)
if ! "$venv/bin/python3" -c "import sys" 2>/dev/null; then
    echo "setup: making the project's Python environment in .venv (with $interpreter)"
    rm -rf "$venv"
    "$interpreter" -m venv "$venv" || { echo "setup: could not make .venv with $interpreter -m venv" >&2; exit 1; }
fi
python="$venv/bin/python3"

# Installs REQUIREMENT (a pip requirement) into .venv unless MODULE imports there already; pip's other options
# follow.   pypi REQUIREMENT MODULE [OPTION ...]
pypi() {
    local requirement=$1 module=$2
    shift 2
    "$python" -c "import $module" 2>/dev/null && return 0
    echo "setup: installing $requirement from PyPI into .venv"
    "$python" -m pip install --quiet --disable-pip-version-check "$@" "$requirement"
}

# The BlueZ stand-in the live-recording tests run on a private bus is written with dbus-fast.
pypi dbus-fast==2.44.1 dbus_fast
# The export tests read our FIT and TCX files back with independent decoders: Garmin's own FIT SDK, fitdecode
# (which also checks both CRCs) and tcxreader.
# The mirror's page test drives Chromium over the DevTools protocol, a WebSocket (websocket-client).
pypi garmin-fit-sdk==21.218.0 garmin_fit_sdk
pypi fitdecode==0.11.0 fitdecode
pypi tcxreader==0.4.11 tcxreader
pypi websocket-client==1.8.0 websocket

if [ "${1:-}" = "--vm" ]; then
    pypi virtme-ng==1.42 virtme_ng
    # bumble's devices are the emulated sensors that send plain ATT notifications, like real ones.
    pypi bumble==0.0.236 bumble
    # The real-stack check reads what the hub's app received with pycycling's parsers too (they need nothing else).
    pypi pycycling==0.4.1 pycycling --no-deps
fi

if [ "${1:-}" = "--bench" ]; then
    # Installed without its dependencies: bleak is pinned below (the trainer benchmark drives the stand-in's
    # trainer with pycycling's FTMS client over it); the decode benchmarks use only its parsers.
    pypi pycycling==0.4.1 pycycling --no-deps
    # pycycling's Bluetooth client: the trainer benchmark's peer.
    pypi bleak==0.22.3 bleak --no-deps
    # What bleak needs beside dbus-fast on Debian 12's Python 3.11 (a machine without the VM's bumble lacks it).
    pypi typing_extensions==4.12.2 typing_extensions --no-deps
fi
