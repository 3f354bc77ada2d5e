/* clpy native engine prelude (sim/native/builtins.py): OpenCL type names and built-ins in C. */
#ifndef CLPY_NATIVE_PRELUDE_H
#define CLPY_NATIVE_PRELUDE_H
#include <stdint.h>
#include <math.h>
#endif
