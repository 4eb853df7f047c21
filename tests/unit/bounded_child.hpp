// SPDX-License-Identifier: Apache-2.0
// A test that feeds endless or hostile input runs it in a forked child under a memory limit of
// its own and a deadline, so that a reader that lost its bound fails the test instead of eating
// the machine or hanging the suite.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>

namespace qprof::test {

// Runs body() in a child under 512 MiB of address space and a 60 s alarm. Returns the child's
// wait status: exit 0 when body() returned true, 1 when false, 2 when it threw (out of memory:
// the reads were not bounded); killed by SIGALRM when it did not end.
template <class Body>
int in_bounded_child(Body body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
#if !defined(__SANITIZE_ADDRESS__)
    // ASan's shadow memory cannot live under RLIMIT_AS: there the suite's hard_rss_limit_mb holds.
    const rlimit as{std::size_t{512} << 20, std::size_t{512} << 20};
    ::setrlimit(RLIMIT_AS, &as);
#endif
    ::alarm(60);
    try {
      ::_exit(body() ? 0 : 1);
    } catch (...) {
      ::_exit(2);
    }
  }
  int status = 0;
  return ::waitpid(child, &status, 0) == child ? status : -1;
}

}  // namespace qprof::test
