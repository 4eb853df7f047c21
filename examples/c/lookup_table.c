// SPDX-License-Identifier: Apache-2.0
/* A C program with stages, marked through qprof's header (include/qprof_mark.h, no library):
 *
 *   qprof run -o table.dat -- build/examples/c/lookup_table 96
 *
 * Build    fills a lookup table of MIB MiB (every page written);
 * Query    walks it and builds an index of MIB/4 MiB beside it;
 * Release  frees the table, then the index.
 *
 * Each stage ends with a synchronous checkpoint (qprof_mark_sync): the call returns once qprof
 * has sampled the tree, so the checkpoint holds the memory at that line even though the memory
 * is freed right after. Outside qprof every call does nothing. */
#include <qprof_mark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* `mib` MiB that the process really holds: every byte written. */
static unsigned char* filled(size_t mib) {
  unsigned char* p = malloc(mib << 20);
  if (p) memset(p, 1, mib << 20);
  return p;
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 96;
  if (mib == 0) {
    fprintf(stderr, "usage: lookup_table MIB (at least 1)\n");
    return 2;
  }

  qprof_mark("Build Start");
  unsigned char* table = filled(mib);
  if (!table) return 1;
  pause_ms(100);
  qprof_mark_sync("Build End");

  qprof_mark("Query Start");
  unsigned char* index = filled(mib / 4 ? mib / 4 : 1);
  if (!index) return 1;
  unsigned long sum = 0;
  for (size_t i = 0; i < (mib << 20); i += 4096) sum += table[i];
  pause_ms(100);
  qprof_mark_sync("Query End");

  qprof_mark("Release Start");
  free(table);
  pause_ms(50);
  free(index);
  qprof_mark_sync("Release End");

  printf("%lu pages read\n", sum);
  return 0;
}
