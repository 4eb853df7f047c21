// SPDX-License-Identifier: Apache-2.0
/* stderr_blast MIB SEED: writes MIB MiB of pseudo-random bytes to stderr (NULs, lone '\r', lines
 * of any length, a chunk of 1 MiB without a newline, invalid UTF-8), in writes of odd sizes. */
#include <stdint.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  size_t total = strtoul(argv[1], NULL, 10) * MIB;
  uint64_t x = strtoull(argv[2], NULL, 10) | 1;
  static char buf[65537];
  size_t done = 0;
  int round = 0;
  while (done < total) {
    size_t n = 1 + (size_t)(x % sizeof buf);
    if (n > total - done) n = total - done;
    for (size_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      char c = (char)(x >> 24);
      if (round % 3 == 1 && c == '\n') c = 'x'; /* long stretches without a newline */
      buf[i] = c;
    }
    for (size_t off = 0; off < n;) {
      ssize_t w = write(2, buf + off, n - off);
      if (w < 0) return 97;
      off += (size_t)w;
    }
    done += n;
    ++round;
  }
  return 0;
}
