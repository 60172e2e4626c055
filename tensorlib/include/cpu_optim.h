/* Forwards to the CPU kernels' header that tensorlib's .pxd files name (kernels.pxd), so that
   a Cython extension doing `cimport tensorlib` compiles with this folder alone on its path. */
#include "../_core/cpu/cpu_optim.h"
