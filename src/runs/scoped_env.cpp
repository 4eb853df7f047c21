// SPDX-License-Identifier: Apache-2.0
#include "qprof/runs/scoped_env.hpp"

#include <cstdlib>

namespace qprof::runs {

ScopedEnv::ScopedEnv(const std::string& name, const std::string& value) : name_(name) {
  if (const char* old = std::getenv(name.c_str())) old_ = std::string(old);
  ::setenv(name.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (old_)
    ::setenv(name_.c_str(), old_->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

}  // namespace qprof::runs
