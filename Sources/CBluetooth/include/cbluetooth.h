#ifndef CBLUETOOTH_H
#define CBLUETOOTH_H

// The kernel's side of Bluetooth through libbluetooth (Debian: libbluetooth-dev), for what BlueZ's D-Bus API does
// not give. The HCI ioctls are macros built from _IOR and their requests end in flexible arrays, which Swift cannot
// use: these functions do the whole query and fill plain structs, so that no C pointer and none of libbluetooth's
// headers (which would bring the C library's socket declarations in a second time) leave this module.

#include <stdint.h>

/// One controller as the kernel describes it to any user.
typedef struct {
    uint16_t id;
    char name[9];
    /// As the kernel holds it: the least significant byte first.
    uint8_t address[6];
    /// HCI_VIRTUAL, HCI_USB, HCI_UART… (the low four bits of hci_dev_info.type).
    uint8_t bus;
    /// HCI_UP and the other hci_dev_info flags, as bits.
    uint32_t flags;
    /// The controller's LMP features (page 0): byte 4, bit 6 says LE is supported.
    uint8_t features[8];
    /// Open links by kind, from HCIGETCONNLIST; -1 when the list could not be read.
    int le_links;
    int classic_links;
    /// 1 when the controller answered Read Local Version Information (only a controller that is up does).
    int version_read;
    uint8_t hci_version;
    uint16_t hci_revision;
    uint16_t manufacturer;
} cbluetooth_adapter;

/// Reads up to `capacity` controllers into `adapters` through HCIGETDEVLIST, HCIGETDEVINFO and HCIGETCONNLIST (no
/// privilege needed) and, for a controller that is up, Read Local Version Information (a command the kernel lets
/// any user send, waited for at most `version_timeout_ms`). Returns how many, or -errno: -EAFNOSUPPORT when the
/// kernel has no Bluetooth at all.
int cbluetooth_adapters(cbluetooth_adapter *adapters, int capacity, int version_timeout_ms);

/// The name of a Bluetooth SIG company identifier, from libbluetooth's list ("Intel Corp."); never NULL.
const char *cbluetooth_company_name(uint16_t identifier);

/// Opens the kernel's HCI monitor channel (what btmon reads: every controller's commands, events and data, and
/// the controllers coming and going). Returns the socket, or -errno: -EPERM without CAP_NET_RAW, -EAFNOSUPPORT
/// when the kernel has no Bluetooth. Close it with close(2).
int cbluetooth_monitor_open(void);

/// One record of the monitor channel: its opcode (HCI_MON_*), controller index, the kernel's time stamp and the
/// length of the packet read into the caller's buffer.
typedef struct {
    uint16_t opcode;
    uint16_t index;
    int64_t unix_microseconds;
    int length;
} cbluetooth_monitor_record;

/// Waits at most `timeout_ms` for the next record and reads its packet into `buffer` (the monitor's 6-octet header
/// taken off). Returns 1 with `record` filled, 0 when nothing came in time, or -errno. A packet longer than
/// `capacity` is cut to it (the monitor's largest, an ACL fragment of 65 535 octets plus its header, fits 65 540).
int cbluetooth_monitor_read(
    int socket_fd, uint8_t *buffer, int capacity, int timeout_ms, cbluetooth_monitor_record *record);

/// The peer address (least significant byte first) of connection `handle` on controller `dev_id`, from the
/// kernel's connection list (no privilege needed). Returns 1 when found, 0 when no such connection is open now.
int cbluetooth_connection_address(uint16_t dev_id, uint16_t handle, uint8_t address[6]);

/// The bit of HCI_UP in `cbluetooth_adapter.flags`.
extern const int cbluetooth_flag_up;

#endif
