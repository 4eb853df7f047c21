// SPDX-License-Identifier: Apache-2.0
/* Starting a command the two ways issue 17 weighed (bench/RESULTS.md, fifth pass): fork, as
 * qprof does, against clone(CLONE_VM | CLONE_VFORK) with a stack of its own, as glibc's
 * posix_spawn does. The parent holds a touched heap of HEAP_KB (qprof's anonymous memory at
 * launch is about 500 KB) and writes it again after each start (fork's copy-on-write faults).
 *
 *   spawn_cost HEAP_KB SPAWNS
 *
 * Prints, for each way: the wall time per start of /bin/true (start, exec, reap), and the
 * child's ru_maxrss from wait4: what the kernel reports as the command's peak. Under CLONE_VM
 * the child leaves the parent's memory at exec and the kernel keeps that memory's peak as the
 * child's own (exec_mmap → setmax_mm_hiwater_rss); under fork, the pages fork copied.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char* const kArgv[] = {"/bin/true", NULL};

static int become_true(void* unused) {
  (void)unused;
  execv(kArgv[0], kArgv);
  _exit(127);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: spawn_cost HEAP_KB SPAWNS\n");
    return 2;
  }
  const size_t heap_size = (size_t)atol(argv[1]) * 1024;
  const int spawns = atoi(argv[2]);
  char* heap = malloc(heap_size);
  const size_t stack_size = 64 * 1024;
  char* stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (heap == NULL || stack == MAP_FAILED || spawns <= 0) return 1;
  memset(heap, 1, heap_size);
  for (int way = 0; way < 2; way++) {
    long maxrss = 0;
    const double t0 = now();
    for (int i = 0; i < spawns; i++) {
      pid_t pid;
      if (way == 0) {
        pid = fork();
        if (pid == 0) become_true(NULL);
      } else {
        pid = clone(become_true, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
      }
      if (pid < 0) return 1;
      int status;
      struct rusage usage;
      if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
      if (usage.ru_maxrss > maxrss) maxrss = usage.ru_maxrss;
      memset(heap, i, heap_size);
    }
    printf("%s: %.1f us per start, the child's ru_maxrss %ld KiB (heap %zu KiB)\n",
           way == 0 ? "fork" : "clone(CLONE_VM|CLONE_VFORK)", (now() - t0) / spawns * 1e6, maxrss, heap_size / 1024);
  }
  return 0;
}
