// SPDX-License-Identifier: Apache-2.0
// What qprof writes survives what happens around it: a closed pipe never costs a result or the
// exit status, a full disk is never exit 0, an output never eats an input, and names qprof makes
// up are never written through what someone planted there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string copy_of(const std::string& data, const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  fs::copy_file(data_file(data), path, fs::copy_options::overwrite_existing);
  return path;
}

// qprof's stderr goes to `head -1`, which is gone before the job ends: the YAML is written and
// the exit status is the job's (3), not SIGPIPE's 141.
TEST(OutputsSafety, AClosedStderrPipeCostsNeitherTheYamlNorTheStatus) {
  const std::string dir = fresh_dir("pipe");
  const Result r = run({"bash", "-c",
                        quoted(qprof_bin()) + " run -o " + dir + "/t.dat --yaml " + dir +
                            "/p.yaml -- sh -c 'echo one >&2; sleep 0.3; echo two >&2; echo three >&2; exit 3' "
                            "2>&1 | head -1 >/dev/null; echo ${PIPESTATUS[0]}"},
                       "", 60);
  EXPECT_EQ(r.out, "3\n") << r.err;
  EXPECT_TRUE(contains(read_file(dir + "/p.yaml"), "memory_usage:")) << "the YAML was written";
}

// Every subcommand's stdout is checked: a full disk is exit 2 with the reason, never exit 0.
TEST(OutputsSafety, AFullStdoutIsExit2WithTheReason) {
  const std::string dir = fresh_dir("full");
  const std::string a = copy_of("report/minmax.dat", dir, "qprof_20260101120000.dat");
  const std::string b = copy_of("report/quark.dat", dir, "b.dat");
  const std::vector<std::string> commands = {"report " + a,    "peak " + a,
                                             "list " + dir,    "compare " + a + " " + b,
                                             "plot -o - " + a, "sweep -d " + dir + "/sweep -p n=1 -- true {n}"};
  for (const std::string& c : commands) {
    const Result r = run({"sh", "-c", quoted(qprof_bin()) + " " + c + " >/dev/full"}, "", 60);
    EXPECT_EQ(r.status, 2) << c << ": " << r.err;
    EXPECT_TRUE(contains(joined(r.err), "cannot write to stdout: No space left on device")) << c << ": " << r.err;
  }
}

TEST(OutputsSafety, AnOutputThatIsAnInputIsRefusedBeforeAnyByte) {
  const std::string dir = fresh_dir("same");
  const std::string in = copy_of("report/minmax.dat", dir, "in.dat");
  const std::string before = read_file(in);
  Result r = qprof({"export", in, "-o", in});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "is also")) << r.err;
  r = qprof({"export", in, "-o", dir + "/./in.dat"});
  EXPECT_EQ(r.status, 2) << r.err;
  r = qprof({"report", in, "--yaml", in});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(read_file(in), before);
  // Two outputs of one run: refused before the command runs.
  r = qprof({"run", "-o", dir + "/s.dat", "--yaml", dir + "/s.dat", "--", "touch", dir + "/ran"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/ran"));
  EXPECT_FALSE(fs::exists(dir + "/s.dat"));
  // The same file to come, spelt otherwise: relative to the working directory, through "..", or
  // a link to it. Each was taken for another file, and the YAML replaced the trace at the end.
  fs::create_directories(dir + "/sub");
  fs::create_symlink("s.dat", dir + "/link.yaml");
  for (const std::string& yaml : std::vector<std::string>{"./s.dat", "sub/../s.dat", dir + "/s.dat", "link.yaml"}) {
    const Result spelt = run({"sh", "-c", "cd \"$0\" && exec \"$@\"", dir, qprof_bin(), "run", "-q", "-o", "s.dat",
                              "--yaml", yaml, "--", "touch", dir + "/ran"});
    EXPECT_EQ(spelt.status, 2) << yaml << ": " << spelt.err;
    EXPECT_TRUE(contains(joined(spelt.err), "is also")) << yaml << ": " << spelt.err;
    EXPECT_FALSE(fs::exists(dir + "/ran")) << yaml;
  }
  // plot's --script is an output too: never over a trace it reads, nor over the chart.
  r = qprof({"plot", in, "--script", dir + "/./in.dat", "-o", dir + "/c.svg"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "--script: ")) << r.err;
  EXPECT_EQ(read_file(in), before);
  r = qprof({"plot", in, "--script", dir + "/c.svg", "-o", dir + "/c.svg"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/c.svg"));
}

TEST(OutputsSafety, ACommandThatCannotStartLeavesTheOldTraceAsItWas) {
  const std::string dir = fresh_dir("missing");
  const std::string old = copy_of("report/minmax.dat", dir, "existing.dat");
  const std::string before = read_file(old);
  const Result r = qprof({"run", "-o", old, "--", dir + "/missing"});
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_EQ(read_file(old), before);
}

// Another process empties the trace while the run writes it: the hole where its start was reads
// as NUL bytes, and the run says so (status 4) instead of exiting 0.
TEST(OutputsSafety, ATraceCutByAnotherProcessIsSaid) {
  const std::string trace = fresh_dir("cut") + "/t.dat";
  const Result r = qprof({"run", "-o", trace, "--", "sh", "-c", "sleep 0.4; : > " + quoted(trace) + "; sleep 0.4"});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "cut by another process while qprof wrote it")) << r.err;
}

TEST(OutputsSafety, AReplacementKeepsTheOwnerAndRefusesToBreakHardLinks) {
  const std::string dir = fresh_dir("owner");
  const std::string in = copy_of("report/minmax.dat", dir, "in.dat");
  const std::string linked = dir + "/linked.yaml";
  std::ofstream(linked) << "mine\n";
  fs::create_hard_link(linked, dir + "/second-name.yaml");
  Result r = qprof({"report", in, "--yaml", linked});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "hard links")) << r.err;
  EXPECT_EQ(read_file(dir + "/second-name.yaml"), "mine\n");
  if (::geteuid() != 0) return;
  const std::string theirs = dir + "/theirs.yaml";
  std::ofstream(theirs) << "old\n";
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(theirs.c_str(), 0640), 0);
  r = qprof({"report", in, "--yaml", theirs});
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(theirs.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_NE(read_file(theirs), "old\n");
}

// A link planted at a name sweep or compare --run makes up: its target is never written, and the
// run takes the next free name.
TEST(OutputsSafety, GeneratedNamesNeverFollowAPlantedLink) {
  const std::string dir = fresh_dir("planted");
  const std::string target = dir + "/target";
  std::ofstream(target) << "precious\n";
  fs::create_directories(dir + "/sd");
  fs::create_symlink(target, dir + "/sd/n=1.dat");
  Result r = qprof({"sweep", "-d", dir + "/sd", "-p", "n=1", "--", "true", "{n}"}, "", 60);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(target), "precious\n");
  EXPECT_TRUE(contains(read_file(dir + "/sd/n=1~2.dat"), "MEM")) << r.err;
  fs::create_symlink(target, dir + "/qprof_compare-1.dat");
  r = run({"sh", "-c", "cd " + quoted(dir) + " && " + quoted(qprof_bin()) + " compare --run true --run true"}, "", 60);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(target), "precious\n");
  // The name is taken (the link's target exists): the next free one, said.
  EXPECT_TRUE(fs::exists(dir + "/qprof_compare-1.run2.dat")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "qprof_compare-1.dat exists and is kept")) << r.err;
}

}  // namespace
}  // namespace qprof::test
