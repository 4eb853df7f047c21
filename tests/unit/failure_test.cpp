// SPDX-License-Identifier: Apache-2.0
// Result<T>: the value of a step that worked, or its Failure with the exit status it maps to.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "qprof/common/failure.hpp"

namespace qprof {
namespace {

Result<int> halve(int n) {
  if (n % 2 != 0) return Failure{std::to_string(n) + " is odd"};
  return n / 2;
}

TEST(Result, HoldsTheValueOrTheFailure) {
  const Result<int> ok = halve(8);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 4);
  const Result<int> odd = halve(3);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.failure().message, "3 is odd");
  EXPECT_EQ(odd.failure().status, kFailureStatus) << "qprof's own errors exit 2 unless told";
  EXPECT_EQ(kFailureStatus, 2);
}

TEST(Result, AValueOfTwoIsNotAFailure) {
  // An action's exit status 2 (e.g. a command's own) is a value: only a Failure is printed.
  const Result<int> two = 2;
  EXPECT_TRUE(two.ok());
  EXPECT_EQ(*two, 2);
}

TEST(Result, AFailureKeepsItsOwnStatus) {
  const Result<std::string> failed = Failure{"not taken", 1};
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.failure().status, 1);
}

TEST(Result, MoveOnlyValuesAndArrows) {
  Result<std::unique_ptr<std::string>> owned = std::make_unique<std::string>("trace.dat");
  ASSERT_TRUE(owned);
  EXPECT_EQ(**owned, "trace.dat");
  const Result<std::string> name = std::string("qprof");
  EXPECT_EQ(name->size(), 5u);
}

TEST(Result, VoidIsOkOrAFailure) {
  const Result<void> done;
  EXPECT_TRUE(done);
  const Result<void> refused = Failure{"--cgroup: not here"};
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.failure().message, "--cgroup: not here");
}

}  // namespace
}  // namespace qprof
