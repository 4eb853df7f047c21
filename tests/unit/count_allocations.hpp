// SPDX-License-Identifier: Apache-2.0
// Counts every allocation through the global operator new. It replaces operator new for the
// whole binary: include it in exactly one file of a test executable of its own (and never in a
// sanitizer build, whose runtime owns operator new).
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace qprof::test {
inline std::atomic<long> g_allocations{0};
}  // namespace qprof::test

void* operator new(std::size_t n) {
  ++qprof::test::g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
