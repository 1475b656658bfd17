#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H

#include <dbus/dbus.h>

// libdbus spells its type codes and a few constants as macros built from character literals or casts, which
// Swift cannot import; these constants carry the same values under names prefixed with the module's.
static const int cdbus_type_invalid = DBUS_TYPE_INVALID;
static const int cdbus_type_byte = DBUS_TYPE_BYTE;
static const int cdbus_type_boolean = DBUS_TYPE_BOOLEAN;
static const int cdbus_type_int16 = DBUS_TYPE_INT16;
static const int cdbus_type_uint16 = DBUS_TYPE_UINT16;
static const int cdbus_type_int32 = DBUS_TYPE_INT32;
static const int cdbus_type_uint32 = DBUS_TYPE_UINT32;
static const int cdbus_type_int64 = DBUS_TYPE_INT64;
static const int cdbus_type_uint64 = DBUS_TYPE_UINT64;
static const int cdbus_type_double = DBUS_TYPE_DOUBLE;
static const int cdbus_type_string = DBUS_TYPE_STRING;
static const int cdbus_type_object_path = DBUS_TYPE_OBJECT_PATH;
static const int cdbus_type_signature = DBUS_TYPE_SIGNATURE;
static const int cdbus_type_unix_fd = DBUS_TYPE_UNIX_FD;
static const int cdbus_type_array = DBUS_TYPE_ARRAY;
static const int cdbus_type_variant = DBUS_TYPE_VARIANT;
static const int cdbus_type_struct = DBUS_TYPE_STRUCT;
static const int cdbus_type_dict_entry = DBUS_TYPE_DICT_ENTRY;

static const int cdbus_message_type_method_call = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int cdbus_message_type_method_return = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int cdbus_message_type_error = DBUS_MESSAGE_TYPE_ERROR;
static const int cdbus_message_type_signal = DBUS_MESSAGE_TYPE_SIGNAL;

static const unsigned int cdbus_name_flag_do_not_queue = DBUS_NAME_FLAG_DO_NOT_QUEUE;
static const int cdbus_request_name_reply_primary_owner = DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER;
static const int cdbus_request_name_reply_already_owner = DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER;

// DBusError is a struct whose fields Swift can read, but it must be initialised by dbus_error_init.
static inline DBusError cdbus_error_make(void) {
    DBusError error;
    dbus_error_init(&error);
    return error;
}

#endif
