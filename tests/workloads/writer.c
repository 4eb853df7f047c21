// SPDX-License-Identifier: Apache-2.0
/* writer MIB PATH direct|orphan: a child writes MIB MiB to PATH with fsync and exits before
 * the command does. "direct": the command waits for it (its counters move into the command's);
 * "orphan": it is double-forked, so qprof adopts and reaps it. The command then idles 300 ms. */
#include <fcntl.h>
#include <sys/wait.h>

#include "workload.h"

static void write_file(const char* path, size_t mib) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) _exit(97);
  static char block[1 << 20];
  memset(block, 'q', sizeof block);
  for (size_t i = 0; i < mib; ++i) {
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block) _exit(96);
  }
  if (fsync(fd) != 0) _exit(95);
  close(fd);
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  size_t mib = strtoul(argv[1], NULL, 10);
  int orphan = strcmp(argv[3], "orphan") == 0;
  pid_t child = fork();
  if (child == 0) {
    if (orphan && fork() != 0) _exit(0);
    write_file(argv[2], mib);
    _exit(0);
  }
  waitpid(child, NULL, 0);
  sleep_ms(orphan ? 1500 : 300);
  return 0;
}
