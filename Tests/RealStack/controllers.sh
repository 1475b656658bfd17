# Sourced by the guest scripts: btvirt's two LE controllers on one emulated air (hci0 for cyclelog, hci1 for an
# emulated sensor), with the kernel's Bluetooth and hci_vhci loaded.
#   start_controllers LOGDIR    (returns non-zero when there are not two working controllers)
#   wait_for_adapters           (once bluetoothd runs: returns non-zero when it does not show both within 20 s)

controllers() { btmgmt info 2>/dev/null | grep -c 'Primary controller'; }

start_controllers() {
    modprobe bluetooth && modprobe hci_vhci || { echo "the kernel's Bluetooth modules do not load"; return 1; }
    # Under software emulation the kernel's first HCI Reset to a new controller times out (for the first btvirt
    # starts, nearly always) and the kernel gives that controller up for good; btvirt started anew gives fresh ones,
    # which answer in time. Each `btmgmt info` takes a second or more here: it is asked only once both exist.
    for attempt in 1 2 3; do
        btvirt -L -l2 > "$1/btvirt.log" 2>&1 &
        for wait in $(seq 40); do
            [ "$(ls /sys/class/bluetooth | wc -l)" -ge 2 ] && break
            sleep 0.25
        done
        for wait in 1 2 3 4; do
            [ "$(controllers)" = 2 ] && break
            sleep 0.5
        done
        [ "$(controllers)" = 2 ] && break
        echo "btvirt attempt $attempt gave $(controllers) working controllers of 2; starting it again"
        pkill btvirt
        for wait in $(seq 20); do
            [ -z "$(ls /sys/class/bluetooth)" ] && break
            sleep 0.5
        done
    done
    btmgmt info | grep -E '^hci|addr'
    [ "$(controllers)" = 2 ] || { echo "btvirt did not give two controllers"; return 1; }
}

wait_for_adapters() {
    for attempt in $(seq 100); do
        busctl --system tree org.bluez 2>/dev/null | grep -q /org/bluez/hci1 && return 0
        sleep 0.2
    done
    return 1
}
