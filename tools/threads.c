#include <omp.h>

#include "commands.h"

void openblas_set_num_threads(int num_threads);

void set_threads(int n) {
    if (n <= 0) return;
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
}
