// libdbus loaded at the first D-Bus call rather than at every start of a program: libdbus brings libsystemd and,
// with it, six libraries of compression and cryptography, whose loading and relocation cost each start of
// `cyclelog` a quarter of what `cyclelog --version` costs in all (measured in `make bench`, start-up), though most
// commands (`list`, `show`, `ftp`, `decode`, `replay`) never reach D-Bus. Each function the DBus module calls is
// defined here with libdbus's own prototype (checked against its header by the compiler) and calls the real one,
// found once through dlsym. The release programs are linked without libdbus (the Makefile's `release`); where it is
// linked all the same (a plain `swift build`), these definitions come first and reach the same functions.

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <dbus/dbus.h>

// libdbus's soname since 2006 (Debian: libdbus-1-3, which cyclelog's package needs).
#define LIBRARY "libdbus-1.so.3"

static void *library_handle;

// A program without libdbus cannot talk to the system; it says which file is missing and stops, as the loader
// would have at its start.
__attribute__((noreturn)) static void missing(const char *what) {
    fprintf(stderr, "cyclelog: D-Bus is out of reach: %s (Debian: apt install libdbus-1-3)\n", what);
    abort();
}

// libdbus's address of `name`. Threads that race here each load and look it up; dlopen and dlsym are thread-safe,
// and the answers are the same.
static void *symbol(const char *name) {
    void *handle = __atomic_load_n(&library_handle, __ATOMIC_ACQUIRE);
    if (!handle) {
        handle = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!handle) missing(dlerror());
        __atomic_store_n(&library_handle, handle, __ATOMIC_RELEASE);
    }
    void *found = dlsym(handle, name);
    if (!found) missing(dlerror());
    return found;
}

#define REAL(name)                                                              \
    static __typeof__(&name) real;                                              \
    __typeof__(&name) function = __atomic_load_n(&real, __ATOMIC_ACQUIRE);     \
    if (!function) {                                                            \
        function = (__typeof__(&name))symbol(#name);                            \
        __atomic_store_n(&real, function, __ATOMIC_RELEASE);                    \
    }

#define FORWARD(result, name, parameters, arguments) \
    result name parameters {                         \
        REAL(name)                                   \
        return function arguments;                   \
    }

#define FORWARD_VOID(name, parameters, arguments) \
    void name parameters {                        \
        REAL(name)                                \
        function arguments;                       \
    }

FORWARD(dbus_bool_t, dbus_bus_register, (DBusConnection *connection, DBusError *error), (connection, error))
FORWARD(dbus_bool_t, dbus_connection_get_is_connected, (DBusConnection *connection), (connection))
FORWARD(dbus_bool_t, dbus_connection_get_unix_fd, (DBusConnection *connection, int *fd), (connection, fd))
FORWARD(dbus_bool_t, dbus_connection_read_write,
    (DBusConnection *connection, int timeout_milliseconds),
    (connection, timeout_milliseconds))
FORWARD(dbus_bool_t, dbus_connection_send,
    (DBusConnection *connection, DBusMessage *message, dbus_uint32_t *client_serial),
    (connection, message, client_serial))
FORWARD(dbus_bool_t, dbus_error_is_set, (const DBusError *error), (error))
FORWARD(dbus_bool_t, dbus_message_iter_append_basic,
    (DBusMessageIter *iter, int type, const void *value),
    (iter, type, value))
FORWARD(dbus_bool_t, dbus_message_iter_append_fixed_array,
    (DBusMessageIter *iter, int element_type, const void *value, int n_elements),
    (iter, element_type, value, n_elements))
FORWARD(dbus_bool_t, dbus_message_iter_close_container, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub))
FORWARD(dbus_bool_t, dbus_message_iter_init, (DBusMessage *message, DBusMessageIter *iter), (message, iter))
FORWARD(dbus_bool_t, dbus_message_iter_next, (DBusMessageIter *iter), (iter))
FORWARD(dbus_bool_t, dbus_message_iter_open_container,
    (DBusMessageIter *iter, int type, const char *contained_signature, DBusMessageIter *sub),
    (iter, type, contained_signature, sub))
FORWARD(dbus_bool_t, dbus_message_marshal,
    (DBusMessage *msg, char **marshalled_data_p, int *len_p),
    (msg, marshalled_data_p, len_p))
FORWARD(dbus_bool_t, dbus_message_set_destination,
    (DBusMessage *message, const char *destination),
    (message, destination))
FORWARD(dbus_bool_t, dbus_message_set_error_name, (DBusMessage *message, const char *name), (message, name))
FORWARD(dbus_bool_t, dbus_message_set_reply_serial,
    (DBusMessage *message, dbus_uint32_t reply_serial),
    (message, reply_serial))
FORWARD(dbus_bool_t, dbus_message_set_sender, (DBusMessage *message, const char *sender), (message, sender))
FORWARD(dbus_bool_t, dbus_signature_validate, (const char *signature, DBusError *error), (signature, error))
FORWARD(dbus_bool_t, dbus_validate_bus_name, (const char *name, DBusError *error), (name, error))
FORWARD(dbus_bool_t, dbus_validate_error_name, (const char *name, DBusError *error), (name, error))
FORWARD(dbus_bool_t, dbus_validate_interface, (const char *name, DBusError *error), (name, error))
FORWARD(dbus_bool_t, dbus_validate_member, (const char *name, DBusError *error), (name, error))
FORWARD(dbus_bool_t, dbus_validate_path, (const char *path, DBusError *error), (path, error))
FORWARD(DBusConnection*, dbus_bus_get_private, (DBusBusType type, DBusError *error), (type, error))
FORWARD(const char*, dbus_bus_get_unique_name, (DBusConnection *connection), (connection))
FORWARD_VOID(dbus_connection_close, (DBusConnection *connection), (connection))
FORWARD_VOID(dbus_connection_flush, (DBusConnection *connection), (connection))
FORWARD(DBusConnection*, dbus_connection_open_private, (const char *address, DBusError *error), (address, error))
FORWARD(DBusMessage*, dbus_connection_pop_message, (DBusConnection *connection), (connection))
FORWARD_VOID(dbus_connection_set_exit_on_disconnect,
    (DBusConnection *connection, dbus_bool_t exit_on_disconnect),
    (connection, exit_on_disconnect))
FORWARD_VOID(dbus_connection_unref, (DBusConnection *connection), (connection))
FORWARD_VOID(dbus_error_free, (DBusError *error), (error))
FORWARD_VOID(dbus_error_init, (DBusError *error), (error))
FORWARD_VOID(dbus_free, (void *memory), (memory))
FORWARD(DBusMessage*, dbus_message_demarshal, (const char *str, int len, DBusError *error), (str, len, error))
FORWARD(const char*, dbus_message_get_destination, (DBusMessage *message), (message))
FORWARD(const char*, dbus_message_get_error_name, (DBusMessage *message), (message))
FORWARD(const char*, dbus_message_get_interface, (DBusMessage *message), (message))
FORWARD(const char*, dbus_message_get_member, (DBusMessage *message), (message))
FORWARD(const char*, dbus_message_get_path, (DBusMessage *message), (message))
FORWARD(const char*, dbus_message_get_sender, (DBusMessage *message), (message))
FORWARD(int, dbus_message_get_type, (DBusMessage *message), (message))
FORWARD_VOID(dbus_message_iter_abandon_container, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub))
FORWARD(int, dbus_message_iter_get_arg_type, (DBusMessageIter *iter), (iter))
FORWARD_VOID(dbus_message_iter_get_basic, (DBusMessageIter *iter, void *value), (iter, value))
FORWARD_VOID(dbus_message_iter_get_fixed_array,
    (DBusMessageIter *iter, void *value, int *n_elements),
    (iter, value, n_elements))
FORWARD(char*, dbus_message_iter_get_signature, (DBusMessageIter *iter), (iter))
FORWARD_VOID(dbus_message_iter_init_append, (DBusMessage *message, DBusMessageIter *iter), (message, iter))
FORWARD_VOID(dbus_message_iter_recurse, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub))
FORWARD(DBusMessage*, dbus_message_new, (int message_type), (message_type))
FORWARD(DBusMessage*, dbus_message_new_error,
    (DBusMessage *reply_to, const char *error_name, const char *error_message),
    (reply_to, error_name, error_message))
FORWARD(DBusMessage*, dbus_message_new_method_call,
    (const char *bus_name, const char *path, const char *iface, const char *method),
    (bus_name, path, iface, method))
FORWARD(DBusMessage*, dbus_message_new_signal,
    (const char *path, const char *iface, const char *name),
    (path, iface, name))
FORWARD_VOID(dbus_message_set_serial, (DBusMessage *message, dbus_uint32_t serial), (message, serial))
FORWARD_VOID(dbus_message_unref, (DBusMessage *message), (message))
FORWARD(dbus_uint32_t, dbus_message_get_reply_serial, (DBusMessage *message), (message))
FORWARD(dbus_uint32_t, dbus_message_get_serial, (DBusMessage *message), (message))
