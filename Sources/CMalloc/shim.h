// glibc's malloc tuning (mallopt), which the Glibc module leaves out: `cyclelog-mirror` sets when large blocks go
// back to the system.
#include <malloc.h>
