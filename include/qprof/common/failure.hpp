// SPDX-License-Identifier: Apache-2.0
// qprof's one error convention outside the trace reader (which throws trace::ParseError): a step
// that can fail returns Result<T>, its value or the Failure that stops it. The CLI prints a
// Failure and exits with its status in one place (cli/main.cpp).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace qprof {

// The exit status of qprof's own errors: bad usage, unreadable input, an output not written.
inline constexpr int kFailureStatus = 2;
// The exit status that says a write of the trace failed (the trace is incomplete), where the
// command succeeded and nothing worse happened.
inline constexpr int kTraceIncompleteStatus = 4;

struct Failure {
  // For the user, without the "qprof SUB: " the CLI puts before it nor a final newline; a
  // second line (a usage line) may follow a '\n'.
  std::string message;
  int status = kFailureStatus;
};

// The value of a step that worked, or why it failed. Tiny by design: C++20 has no
// std::expected, and qprof needs no more than this of it.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}            // NOLINT: implicit, as expected's
  Result(Failure failure) : state_(std::in_place_index<1>, std::move(failure)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& operator*() {
    assert(ok());
    return *std::get_if<0>(&state_);
  }
  const T& operator*() const {
    assert(ok());
    return *std::get_if<0>(&state_);
  }
  T* operator->() { return &**this; }
  const T* operator->() const { return &**this; }

  const Failure& failure() const {
    assert(!ok());
    return *std::get_if<1>(&state_);
  }

 private:
  std::variant<T, Failure> state_;
};

// A step with no value: it worked, or the Failure.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Failure failure) : failure_(std::move(failure)) {}  // NOLINT: implicit, as expected's

  bool ok() const { return !failure_; }
  explicit operator bool() const { return ok(); }
  const Failure& failure() const {
    assert(!ok());
    return *failure_;
  }

 private:
  std::optional<Failure> failure_;
};

}  // namespace qprof
