// SPDX-License-Identifier: Apache-2.0
/* anon_and_mmap ANON_MIB PATH PASSES: touches ANON_MIB MiB of anonymous memory and keeps it,
 * then maps the file PATH read-only and reads every page of it PASSES times. Its unreclaimable
 * memory is ANON_MIB MiB; the file's pages are page cache, which a memory limit can take back at
 * the price of reading them again from storage. Exits 0, or 2 on bad arguments, 1 on I/O errors. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: anon_and_mmap ANON_MIB PATH PASSES\n");
    return 2;
  }
  const size_t anon_mib = strtoul(argv[1], NULL, 10);
  const int passes = atoi(argv[3]);
  char* anon = touch_mib(anon_mib);
  int fd = open(argv[2], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
    perror("open");
    return 1;
  }
  const size_t size = (size_t)st.st_size;
  const unsigned char* p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  const long page = sysconf(_SC_PAGESIZE);
  unsigned long sum = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t off = 0; off < size; off += (size_t)page) sum += p[off];
  }
  /* The anonymous pages stay in use to the end: read one of each. */
  for (size_t off = 0; off < anon_mib * MIB; off += (size_t)page) sum += (unsigned char)anon[off];
  munmap((void*)p, size);
  close(fd);
  release_mib(anon, anon_mib);
  return sum == 0 ? 1 : 0;
}
