// SPDX-License-Identifier: Apache-2.0
// The systemd-run command line of a probe where a systemd user manager makes the groups.
#include "qprof/fit/systemd_scope.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "temp_files.hpp"

namespace qprof::fit {
namespace {

using Words = std::vector<std::string>;

TEST(FitSystemdScope, TheLimitAndNoSwapAsPropertiesAndTheCommandAfterDashDash) {
  EXPECT_EQ(systemd_scope_argv("qprof-fit-42-3", 200 << 20, {"python3", "-m", "x", "--user"}),
            (Words{"systemd-run", "--user", "--scope", "--quiet", "--collect", "--unit=qprof-fit-42-3", "-p",
                   "MemoryMax=209715200", "-p", "MemorySwapMax=0", "--", "python3", "-m", "x", "--user"}));
  const Words unlimited = systemd_scope_argv("u", 0, {"-p"});
  EXPECT_EQ(unlimited[7], "MemoryMax=infinity");
  EXPECT_EQ(unlimited.back(), "-p") << "the command's words are its own";
  EXPECT_EQ(unlimited[unlimited.size() - 2], "--");
}

TEST(FitSystemdScope, NeedsCgroupV2AndTheUserManagersSocket) {
  namespace fs = std::filesystem;
  const std::string root = test::unit_temp_file("systemd-root"), runtime = test::unit_temp_file("systemd-runtime");
  fs::create_directories(root);
  fs::create_directories(runtime + "/systemd");
  const auto env = [&](const char* name) { return std::string(name) == "XDG_RUNTIME_DIR" ? runtime.c_str() : nullptr; };
  EXPECT_FALSE(systemd_user_manager_available(root, env)) << "no cgroup.controllers: not cgroup v2";
  std::ofstream(root + "/cgroup.controllers") << "memory\n";
  EXPECT_FALSE(systemd_user_manager_available(root, env)) << "no manager socket";
  std::ofstream(runtime + "/systemd/private") << "";
  EXPECT_FALSE(systemd_user_manager_available(root, [](const char*) -> const char* { return nullptr; }));
  fs::remove_all(root);
  fs::remove_all(runtime);
}

}  // namespace
}  // namespace qprof::fit
