#include "cbluetooth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
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

static void count_links(int socket_fd, cbluetooth_adapter *adapter) {
    enum { most = 64 };
    struct hci_conn_list_req *request = calloc(1, sizeof(*request) + most * sizeof(struct hci_conn_info));
    adapter->le_links = -1;
    adapter->classic_links = -1;
    if (!request) return;
    request->dev_id = adapter->id;
    request->conn_num = most;
    if (ioctl(socket_fd, HCIGETCONNLIST, request) == 0) {
        adapter->le_links = 0;
        adapter->classic_links = 0;
        for (int i = 0; i < request->conn_num; i++) {
            if (request->conn_info[i].type == LE_LINK_TYPE) adapter->le_links++;
            else if (request->conn_info[i].type == ACL_LINK) adapter->classic_links++;
        }
    }
    free(request);
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

