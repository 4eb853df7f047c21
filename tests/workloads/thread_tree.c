// SPDX-License-Identifier: Apache-2.0
/* thread_tree THREADS CHILDREN HOLD_MS: forks CHILDREN single-threaded children, then starts
 * THREADS more threads in itself; all of them wait HOLD_MS. The tree then holds 1 + CHILDREN
 * processes and 1 + THREADS + CHILDREN threads. */
#include <pthread.h>
#include <sys/wait.h>

#include "workload.h"

static long hold;

static void* wait_thread(void* arg) {
  (void)arg;
  sleep_ms(hold);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: thread_tree THREADS CHILDREN HOLD_MS\n");
    return 2;
  }
  const int threads = atoi(argv[1]), children = atoi(argv[2]);
  hold = atol(argv[3]);
  for (int i = 0; i < children; ++i) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      sleep_ms(hold + 200); /* outlives the threads a little: the full count is held for HOLD_MS */
      _exit(0);
    }
  }
  pthread_t t[256];
  if (threads > 256) return 2;
  for (int i = 0; i < threads; ++i) {
    if (pthread_create(&t[i], NULL, wait_thread, NULL) != 0) return 1;
  }
  mark("all started");
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  while (wait(NULL) > 0) {
  }
  return 0;
}
