#include "cbluetooth.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

// The kernel's link type of an LE connection (include/net/bluetooth/hci.h), which libbluetooth's header leaves out.
#define LE_LINK_TYPE 0x80

const int cbluetooth_flag_up = HCI_UP;

const char *cbluetooth_company_name(uint16_t identifier) {
    return bt_compidtostr(identifier);
}

/// The open connections of controller `dev_id` (at most 64), or NULL; the caller frees it.
static struct hci_conn_list_req *connection_list(int socket_fd, uint16_t dev_id) {
    enum { most = 64 };
    struct hci_conn_list_req *request = calloc(1, sizeof(*request) + most * sizeof(struct hci_conn_info));
    if (!request) return NULL;
    request->dev_id = dev_id;
    request->conn_num = most;
    if (ioctl(socket_fd, HCIGETCONNLIST, request) < 0) {
        free(request);
        return NULL;
    }
    return request;
}

static void count_links(int socket_fd, cbluetooth_adapter *adapter) {
    struct hci_conn_list_req *list = connection_list(socket_fd, adapter->id);
    adapter->le_links = -1;
    adapter->classic_links = -1;
    if (!list) return;
    adapter->le_links = 0;
    adapter->classic_links = 0;
    for (int i = 0; i < list->conn_num; i++) {
        if (list->conn_info[i].type == LE_LINK_TYPE) adapter->le_links++;
        else if (list->conn_info[i].type == ACL_LINK) adapter->classic_links++;
    }
    free(list);
}

int cbluetooth_adapters(cbluetooth_adapter *adapters, int capacity, int version_timeout_ms) {
    int socket_fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (socket_fd < 0) return -errno;
    struct hci_dev_list_req *list = calloc(1, sizeof(*list) + HCI_MAX_DEV * sizeof(struct hci_dev_req));
    if (!list) {
        close(socket_fd);
        return -ENOMEM;
    }
    list->dev_num = HCI_MAX_DEV;
    if (ioctl(socket_fd, HCIGETDEVLIST, list) < 0) {
        int error = errno;
        free(list);
        close(socket_fd);
        return -error;
    }
    int count = 0;
    for (int i = 0; i < list->dev_num && count < capacity; i++) {
        struct hci_dev_info info;
        memset(&info, 0, sizeof(info));
        info.dev_id = list->dev_req[i].dev_id;
        // A controller that went away since the list was read is left out.
        if (ioctl(socket_fd, HCIGETDEVINFO, &info) < 0) continue;
        cbluetooth_adapter *adapter = &adapters[count++];
        memset(adapter, 0, sizeof(*adapter));
        adapter->id = info.dev_id;
        memcpy(adapter->name, info.name, sizeof(info.name));
        memcpy(adapter->address, info.bdaddr.b, 6);
        adapter->bus = info.type & 0x0f;
        adapter->flags = info.flags;
        memcpy(adapter->features, info.features, 8);
        count_links(socket_fd, adapter);
        if (hci_test_bit(HCI_UP, &info.flags)) {
            int device = hci_open_dev(info.dev_id);
            if (device >= 0) {
                struct hci_version version;
                if (hci_read_local_version(device, &version, version_timeout_ms) == 0) {
                    adapter->version_read = 1;
                    adapter->hci_version = version.hci_ver;
                    adapter->hci_revision = version.hci_rev;
                    adapter->manufacturer = version.manufacturer;
                }
                hci_close_dev(device);
            }
        }
    }
    free(list);
    close(socket_fd);
    return count;
}


int cbluetooth_monitor_open(void) {
    int socket_fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (socket_fd < 0) return -errno;
    // The kernel stamps each packet once, as it hands it to every monitor: the same time btmon writes.
    int on = 1;
    struct sockaddr_hci address = {.hci_family = AF_BLUETOOTH, .hci_dev = HCI_DEV_NONE, .hci_channel = HCI_CHANNEL_MONITOR};
    if (setsockopt(socket_fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on)) < 0 ||
        bind(socket_fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
        int error = errno;
        close(socket_fd);
        return -error;
    }
    return socket_fd;
}

int cbluetooth_monitor_read(
    int socket_fd, uint8_t *buffer, int capacity, int timeout_ms, cbluetooth_monitor_record *record) {
    struct pollfd waiting = {.fd = socket_fd, .events = POLLIN};
    int ready = poll(&waiting, 1, timeout_ms);
    if (ready < 0) return errno == EINTR ? 0 : -errno;
    if (ready == 0) return 0;
    // The monitor header: opcode, index and length, each 16 bits little-endian (struct hci_mon_hdr in btmon).
    uint8_t header[6];
    struct iovec parts[2] = {{.iov_base = header, .iov_len = sizeof(header)}, {.iov_base = buffer, .iov_len = capacity}};
    union {
        struct cmsghdr align;
        uint8_t space[CMSG_SPACE(sizeof(struct timeval))];
    } control;
    struct msghdr message = {
        .msg_iov = parts, .msg_iovlen = 2, .msg_control = &control, .msg_controllen = sizeof(control)};
    ssize_t got = recvmsg(socket_fd, &message, MSG_DONTWAIT);
    if (got < 0) return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
    if (got < (ssize_t)sizeof(header)) return 0;
    record->opcode = (uint16_t)(header[0] | header[1] << 8);
    record->index = (uint16_t)(header[2] | header[3] << 8);
    record->length = (int)(got - (ssize_t)sizeof(header));
    record->unix_microseconds = 0;
    for (struct cmsghdr *part = CMSG_FIRSTHDR(&message); part; part = CMSG_NXTHDR(&message, part)) {
        if (part->cmsg_level == SOL_SOCKET && part->cmsg_type == SCM_TIMESTAMP) {
            struct timeval stamp;
            memcpy(&stamp, CMSG_DATA(part), sizeof(stamp));
            record->unix_microseconds = (int64_t)stamp.tv_sec * 1000000 + stamp.tv_usec;
        }
    }
    if (record->unix_microseconds == 0) {
        struct timeval now;
        gettimeofday(&now, NULL);
        record->unix_microseconds = (int64_t)now.tv_sec * 1000000 + now.tv_usec;
    }
    return 1;
}

int cbluetooth_connection_address(uint16_t dev_id, uint16_t handle, uint8_t address[6]) {
    int socket_fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (socket_fd < 0) return 0;
    struct hci_conn_list_req *list = connection_list(socket_fd, dev_id);
    close(socket_fd);
    if (!list) return 0;
    int found = 0;
    for (int i = 0; i < list->conn_num && !found; i++) {
        if (list->conn_info[i].handle == handle) {
            memcpy(address, list->conn_info[i].bdaddr.b, 6);
            found = 1;
        }
    }
    free(list);
    return found;
}
