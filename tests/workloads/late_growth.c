// SPDX-License-Identifier: Apache-2.0
/* late_growth MIB: mallocs and touches MIB MiB, then exits at once. The growth happens in the
 * last moments of the process, after any periodic VmHWM reading: only wait4's ru_maxrss sees it. */
#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const size_t mib = strtoul(argv[1], NULL, 10);
  char* p = malloc(mib * MIB);
  if (!p) return 99;
  long page = sysconf(_SC_PAGESIZE);
  for (size_t off = 0; off < mib * MIB; off += (size_t)page) p[off] = 1;
  _exit(p[0] == 1 ? 0 : 1);
}
