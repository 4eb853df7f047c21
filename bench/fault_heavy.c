// SPDX-License-Identifier: Apache-2.0
/* A page-fault-heavy job for the cost PSS passes put on the profiled job (issue 31):
 * smaps_rollup walks a process's page tables under its mmap lock, which the job's own faults,
 * mmap and munmap also take.
 *
 *   fault_heavy WORKERS THREADS MIB ROUNDS
 *
 * Forks WORKERS processes of THREADS threads each; every thread maps MIB MiB of anonymous memory,
 * writes every page of it, unmaps it, ROUNDS times. At its peak the tree holds
 * WORKERS x THREADS x MIB MiB. Prints its wall time in seconds; exits 0, or 1 on a failure.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static size_t bytes_per_thread;
static int rounds;

static void* fault_loop(void* unused) {
  (void)unused;
  const long page = sysconf(_SC_PAGESIZE);
  for (int r = 0; r < rounds; ++r) {
    char* p = mmap(NULL, bytes_per_thread, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return (void*)1;
    for (size_t off = 0; off < bytes_per_thread; off += (size_t)page) p[off] = (char)r;
    munmap(p, bytes_per_thread);
  }
  return NULL;
}

static int worker(int threads) {
  pthread_t t[256];
  int failed = 0;
  for (int i = 0; i < threads; ++i) {
    if (pthread_create(&t[i], NULL, fault_loop, NULL) != 0) return 1;
  }
  for (int i = 0; i < threads; ++i) {
    void* r = NULL;
    pthread_join(t[i], &r);
    failed |= r != NULL;
  }
  return failed;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: fault_heavy WORKERS THREADS MIB ROUNDS\n");
    return 2;
  }
  const int workers = atoi(argv[1]), threads = atoi(argv[2]);
  bytes_per_thread = strtoul(argv[3], NULL, 10) << 20;
  rounds = atoi(argv[4]);
  if (workers < 1 || workers > 256 || threads < 1 || threads > 256 || bytes_per_thread == 0 || rounds < 1) {
    fprintf(stderr, "fault_heavy: WORKERS and THREADS 1-256, MIB and ROUNDS at least 1\n");
    return 2;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int w = 0; w < workers; ++w) {
    const pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) _exit(worker(threads));
  }
  int failed = 0, status = 0;
  while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9);
  return failed;
}
