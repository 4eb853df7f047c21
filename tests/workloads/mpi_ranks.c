// SPDX-License-Identifier: Apache-2.0
/* mpi_ranks MIB_PER_RANK HOLD_MS
 * An MPI job whose rank r touches (r + 1) × MIB_PER_RANK MiB of its own memory, then every rank
 * holds it together (between two barriers) for HOLD_MS, marked as the stage "Hold". The job's
 * true peak is the sum over ranks of (r + 1) × MIB_PER_RANK plus each rank's MPI baseline. */
#include <mpi.h>

#include "workload.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3) {
    fprintf(stderr, "usage: mpi_ranks MIB_PER_RANK HOLD_MS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_t mib = strtoul(argv[1], NULL, 10) * (size_t)(rank + 1);
  long hold_ms = atol(argv[2]);
  mark("Hold Start");
  char* p = touch_mib(mib);
  MPI_Barrier(MPI_COMM_WORLD);
  sleep_ms(hold_ms);
  MPI_Barrier(MPI_COMM_WORLD);
  mark("Hold End");
  release_mib(p, mib);
  MPI_Finalize();
  return 0;
}
