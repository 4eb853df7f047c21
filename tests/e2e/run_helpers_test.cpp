// SPDX-License-Identifier: Apache-2.0
// The marker helpers users call: python/qprof_mark.py (mark, stage, torch's figures), `qprof mark`
// from a shell, markers after a logging prefix, and why synchronous checkpoints exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Marker;
using trace::Stage;
using trace::Trace;

namespace {

const std::string kPythonDir = std::string(QPROF_TEST_SOURCE) + "/python";

Result bounded_qprof(const std::vector<std::string>& args, const std::string& env = "") {
  std::vector<std::string> argv{"env"};
  if (!env.empty()) argv.push_back(env);
  for (const char* a : {"timeout", "-s", "KILL", "120", "prlimit"}) argv.push_back(a);
  argv.push_back(as_limit("4294967296"));
  argv.push_back("--");
  argv.push_back(qprof_bin());
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", 130);
}

// A Python program run by Debian's python3 under qprof, with the helper importable.
Result python_under_qprof(const std::string& out, const std::string& program,
                          const std::string& pythonpath = kPythonDir) {
  return bounded_qprof({"run", "-q", "-o", out, "--", debian_python(), "-c", program}, "PYTHONPATH=" + pythonpath);
}

std::vector<std::string> labels(const Trace& t) {
  std::vector<std::string> out;
  for (const Marker& m : t.markers) out.push_back(m.label);
  return out;
}

double stage_delta_mib(const Trace& t, const std::string& name) {
  for (const Stage& s : t.stages) {
    if (s.name == name) return mib(s.mem_end) - mib(s.mem_start);
  }
  ADD_FAILURE() << "no stage " << name;
  return 0;
}

TEST(Helpers, PythonMarkStageAndDecorator) {
  const std::string out = temp_dir() + "/py.dat";
  const Result r = python_under_qprof(out,
                                      "import qprof_mark as q\n"
                                      "assert q.active()\n"
                                      "assert q.mark('Begin') is True\n"
                                      "with q.stage('Calibration'):\n"
                                      "    keep = bytearray(b'1') * (30 << 20)\n"
                                      "@q.stage('Export')\n"
                                      "def export():\n"
                                      "    return bytearray(b'1') * (20 << 20)\n"
                                      "more = export()\n"
                                      "q.mark('Async', sync=False)\n");
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels(t), (std::vector<std::string>{"Begin", "Calibration Start", "Calibration End", "Export Start",
                                                 "Export End", "Async"}));
  EXPECT_NEAR(stage_delta_mib(t, "Calibration"), 30.0, 1.0);
  EXPECT_NEAR(stage_delta_mib(t, "Export"), 20.0, 1.0);
}

TEST(Helpers, PythonHelperOutsideQprofDoesNothing) {
  const Result r =
      run({"env", "-u", "QPROF_MARK_FD", "-u", "QPROF_MARK_PATH", "PYTHONPATH=" + kPythonDir, debian_python(), "-c",
           "import qprof_mark as q, time\n"
           "t = time.monotonic()\n"
           "assert not q.active()\n"
           "assert q.mark('X') is False\n"
           "with q.stage('S'): pass\n"
           "assert time.monotonic() - t < 0.05\n"
           "print('ok')\n"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(r.err, "");
}

// The point of synchronous checkpoints: a stage that frees its memory right after its End marker.
// A stderr marker is sampled when qprof reads the line's newline, after the program has moved
// on. Whether qprof wins the race against a free that follows a complete line depends on the
// scheduler (on an idle machine it mostly does, under load it does not), so the stderr case here
// is the deterministic form of the same race: the line's newline comes after the free (a
// logger that ends its line later, a marker printed with end=''). The helper's checkpoint waits
// for its sample, so the stage holds what it allocated either way.
TEST(Helpers, SynchronousCheckpointHoldsTheMemoryAStderrMarkerMisses) {
  const int n = 200;
  const std::string program =
      "import sys, time\n"
      "import qprof_mark as q\n"
      "N = " +
      std::to_string(n) +
      "\n"
      "def stderr_mark(label):\n"
      "    print('QPROF_MARK: ' + label, file=sys.stderr, end='', flush=True)\n"
      "mark = stderr_mark if sys.argv[1] == 'stderr' else q.mark\n"
      "time.sleep(0.1)\n"
      "mark('X Start')\n"
      "print(file=sys.stderr, flush=True)\n"
      "time.sleep(0.05)\n"
      "data = bytearray(b'1') * (N << 20)\n"
      "mark('X End')\n"
      "del data\n"  // freed at once (a large block is its own mapping)
      "print(file=sys.stderr, flush=True)\n"
      "time.sleep(0.3)\n";
  const std::string dir = temp_dir();
  const Result through_stderr =
      bounded_qprof({"run", "-q", "-o", dir + "/stderr.dat", "--", debian_python(), "-c", program, "stderr"},
                    "PYTHONPATH=" + kPythonDir);
  ASSERT_EQ(through_stderr.status, 0) << through_stderr.err;
  const Result through_helper =
      bounded_qprof({"run", "-q", "-o", dir + "/helper.dat", "--", debian_python(), "-c", program, "helper"},
                    "PYTHONPATH=" + kPythonDir);
  ASSERT_EQ(through_helper.status, 0) << through_helper.err;
  const double wrong = stage_delta_mib(trace::read_trace(dir + "/stderr.dat"), "X");
  const double right = stage_delta_mib(trace::read_trace(dir + "/helper.dat"), "X");
  EXPECT_NEAR(right, n, 1.0);
  EXPECT_LT(wrong, n / 2.0) << "the stderr marker was sampled before the memory was freed";
}

TEST(Helpers, MarkersFromPythonLoggingAfterItsPrefix) {
  const std::string out = temp_dir() + "/logging.dat";
  const Result r = bounded_qprof({"run", "-q", "-o", out, "--", debian_python(), "-c",
                                  "import logging, time\n"
                                  "logging.basicConfig(level=logging.INFO)\n"
                                  "logging.info('QPROF_MARK: Load Start')\n"
                                  "time.sleep(0.05)\n"  // a stderr marker is sampled after it is read
                                  "keep = bytearray(b'1') * (30 << 20)\n"
                                  "time.sleep(0.05)\n"
                                  "logging.warning('QPROF_MARK: Load End')\n"
                                  "time.sleep(0.1)\n"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("INFO:root:QPROF_MARK: Load Start\n"), std::string::npos) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels(t), (std::vector<std::string>{"Load Start", "Load End"}));
  EXPECT_NEAR(stage_delta_mib(t, "Load"), 30.0, 2.0);
}

// A stand-in torch package: torch.cuda with the functions the helper calls, and figures chosen here.
std::string fake_torch(const std::string& dir) {
  const std::string pkg = dir + "/fake/torch";
  std::filesystem::create_directories(pkg);
  std::ofstream(pkg + "/__init__.py") << "from . import cuda\n";
  std::ofstream(pkg + "/cuda.py") << "allocated = {0: 0, 1: 0}\nreserved = {0: 0, 1: 0}\n"
                                     "def is_available(): return True\n"
                                     "def device_count(): return 2\n"
                                     "def memory_allocated(d): return allocated[d]\n"
                                     "def memory_reserved(d): return reserved[d]\n";
  return dir + "/fake";
}

TEST(Helpers, TorchFiguresGoWithEachCheckpointWhenTheProgramImportedTorch) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/torch.dat";
  const Result r = python_under_qprof(out,
                                      "import torch, qprof_mark as q\n"
                                      "q.mark('Before')\n"
                                      "torch.cuda.allocated[0] = 1000; torch.cuda.reserved[0] = 4096\n"
                                      "torch.cuda.allocated[1] = 7; torch.cuda.reserved[1] = 2 << 30\n"
                                      "q.mark('After')\n",
                                      kPythonDir + ":" + fake_torch(dir));
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 2u);
  ASSERT_EQ(t.torch.size(), 4u);
  EXPECT_EQ(t.torch[0].t, t.markers[0].t);  // the checkpoint's time
  EXPECT_EQ(t.torch[0].allocated, 0u);
  EXPECT_EQ(t.torch[2].t, t.markers[1].t);
  EXPECT_EQ(t.torch[2].device, 0);
  EXPECT_EQ(t.torch[2].allocated, 1000u);
  EXPECT_EQ(t.torch[2].reserved, 4096u);
  EXPECT_EQ(t.torch[3].device, 1);
  EXPECT_EQ(t.torch[3].allocated, 7u);
  EXPECT_EQ(t.torch[3].reserved, Bytes{2} << 30);
  EXPECT_NE(read_file(out).find("\nTORCH "), std::string::npos);
  // The plot's GPU panel draws them (a panel of their own here: no driver figures on this machine).
  const Result plot = bounded_qprof({"plot", out, "-o", dir + "/torch.svg", "--script", dir + "/torch.gp"});
  ASSERT_EQ(plot.status, 0) << plot.err;
  const std::string script = read_file(dir + "/torch.gp");
  for (const char* title :
       {"torch cuda:0 allocated", "torch cuda:0 reserved", "torch cuda:1 allocated", "torch cuda:1 reserved"}) {
    EXPECT_NE(script.find(title), std::string::npos) << title;
  }
  EXPECT_NE(script.find("set ylabel \"GPU memory ("), std::string::npos);
}

TEST(Helpers, TorchIsNeverImportedByTheHelper) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/notorch.dat";
  // torch is importable, but the program never imported it: no figures, and still not imported.
  const Result r = python_under_qprof(out,
                                      "import sys, qprof_mark as q\n"
                                      "with q.stage('S'): pass\n"
                                      "assert 'torch' not in sys.modules\n",
                                      kPythonDir + ":" + fake_torch(dir));
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(t.markers.size(), 2u);
  EXPECT_TRUE(t.torch.empty());
}

TEST(Helpers, ShellCommandMarksAndIsSilentOutsideQprof) {
  const std::string out = temp_dir() + "/shell.dat";
  const std::string q = qprof_bin();
  const Result r = bounded_qprof({"run", "-q", "-o", out, "--", "sh", "-c",
                                  q + " mark Load Start && " + workload("mark_channel") + " touch:30 sleep:20 & " +
                                      "sleep 0.3; " + q + " mark --sync --strict Load End; wait"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels(t), (std::vector<std::string>{"Load Start", "Load End"}));

  const Result outside = run({"env", "-u", "QPROF_MARK_FD", "-u", "QPROF_MARK_PATH", q, "mark", "--sync", "X"});
  EXPECT_EQ(outside.status, 0);
  EXPECT_EQ(outside.out + outside.err, "");
  const Result strict = run({"env", "-u", "QPROF_MARK_FD", "-u", "QPROF_MARK_PATH", q, "mark", "--strict", "X"});
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.err.find("not under qprof run"), std::string::npos) << strict.err;
  EXPECT_EQ(run({q, "mark"}).status, 2);  // no label: a usage error
}

// A label that is blank once trimmed is no label: `qprof mark` refuses it at once (exit 2, as an
// empty one), the Python helper returns False at once; neither writes it for qprof to drop, nor
// waits 100 ms for an answer that cannot come.
TEST(Helpers, ABlankLabelIsRefusedAtOnce) {
  const std::string out = temp_dir() + "/blank.dat";
  const std::string q = qprof_bin();
  const Result r = bounded_qprof(
      {"run", "-q", "-o", out, "--", "sh", "-c",
       q + " mark --sync '   '; echo \"sync=$?\"; " + q + " mark --strict \"$(printf ' \\t ')\"; echo \"tab=$?\"; " +
           q + " mark ''; echo \"empty=$?\"; " + debian_python() +
           " -c \"import qprof_mark as q, time\nt = time.monotonic()\nassert q.mark('   ') is False\n"
           "assert q.mark(' \\n ', sync=False) is False\nassert q.mark('') is False\n"
           "assert time.monotonic() - t < 0.05, time.monotonic() - t\nprint('python ok')\""},
      "PYTHONPATH=" + kPythonDir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "sync=2\ntab=2\nempty=2\npython ok\n") << r.err;
  std::size_t refused = 0;
  for (std::size_t at = 0; (at = r.err.find("qprof mark: no label given", at)) != std::string::npos; ++at) ++refused;
  EXPECT_EQ(refused, 3u) << r.err;
  EXPECT_TRUE(trace::read_trace(out).markers.empty());
}

// A program may close the inherited QPROF_MARK_FD and get a pipe of its own under that number
// (dup2 here; a daemon that closes every descriptor and opens pipes gets the same). The helpers
// check the pipe's identity (QPROF_MARK_FD_ID): the program's pipe receives nothing, and the
// markers still arrive, through the FIFO.
TEST(Helpers, ADescriptorNumberTheProgramReusedNeverReceivesAMarker) {
  const std::string out = temp_dir() + "/reused.dat";
  const Result r = python_under_qprof(out,
                                      "import os, subprocess, qprof_mark as q\n"
                                      "fd = int(os.environ['QPROF_MARK_FD'])\n"
                                      "r, w = os.pipe()\n"
                                      "os.dup2(w, fd)\n"
                                      "os.close(w)\n"
                                      "assert q.active()\n"
                                      "assert q.mark('Python', sync=False) is True\n"
                                      "subprocess.run(['" +
                                          qprof_bin() +
                                          "', 'mark', '--strict', 'Shell'],\n"
                                          "               pass_fds=(fd,), check=True)\n"
                                          "os.close(fd)\n"
                                          "print(repr(os.read(r, 65536)))\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "b''\n");  // only the end of file: the program's own pipe got no byte
  EXPECT_EQ(labels(trace::read_trace(out)), (std::vector<std::string>{"Python", "Shell"}));
}

}  // namespace
}  // namespace qprof::test
