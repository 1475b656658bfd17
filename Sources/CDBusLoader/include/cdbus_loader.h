#ifndef CDBUS_LOADER_H
#define CDBUS_LOADER_H

// Nothing of its own: the loader defines the libdbus functions the DBus module calls (cdbus_loader.c), as
// libdbus's header declares them.

#endif
