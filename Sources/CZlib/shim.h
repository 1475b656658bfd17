// zlib, for compressing the raw journal stored with every ride (Debian: zlib1g-dev).
#include <zlib.h>
