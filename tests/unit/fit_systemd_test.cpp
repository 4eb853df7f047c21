// SPDX-License-Identifier: Apache-2.0
// qprof fit run again in a delegated systemd user scope: the command line, and when it is asked.
#include "qprof/fit/systemd_scope.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "temp_files.hpp"

namespace qprof::fit {
namespace {

using Words = std::vector<std::string>;

TEST(FitSystemdScope, QprofRunsAgainInADelegatedScopeWithItsOwnWords) {
  EXPECT_EQ(delegated_scope_argv("qprof-fit-42", "/usr/bin/qprof", {"fit", "--", "python3", "-m", "x", "--user"}),
            (Words{"systemd-run", "--user", "--scope", "--quiet", "--collect", "-p", "Delegate=yes",
                   "--unit=qprof-fit-42", "--", "/usr/bin/qprof", "fit", "--", "python3", "-m", "x", "--user"}));
}

TEST(FitSystemdScope, RunsAgainOnlyWhereThatCanHelp) {
  const Words cmdline{"qprof", "fit", "--json", "f.json", "--", "./job", "-p"};
  // argv[0] as typed is replaced by the binary's path: the scope does not search PATH as the shell did.
  const auto argv = rerun_in_scope_argv(false, false, true, "/opt/q/bin/qprof", cmdline);
  ASSERT_TRUE(argv);
  const Words tail(argv->end() - 7, argv->end());
  EXPECT_EQ(tail, (Words{"/opt/q/bin/qprof", "fit", "--json", "f.json", "--", "./job", "-p"}));
  EXPECT_EQ((*argv)[argv->size() - 8], "--");
  EXPECT_FALSE(rerun_in_scope_argv(true, false, true, "/q", cmdline)) << "qprof may create its groups already";
  EXPECT_FALSE(rerun_in_scope_argv(false, true, true, "/q", cmdline)) << "never a scope inside its own scope";
  EXPECT_FALSE(rerun_in_scope_argv(false, false, false, "/q", cmdline)) << "no user manager answers";
  EXPECT_FALSE(rerun_in_scope_argv(false, false, true, "", cmdline)) << "its own binary unknown";
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
