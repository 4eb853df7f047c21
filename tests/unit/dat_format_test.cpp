// SPDX-License-Identifier: Apache-2.0
#include "qprof/trace/format.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "bounded_child.hpp"
#include <random>

#include "temp_files.hpp"

namespace qprof::trace {
namespace {

using test::unit_temp_file;
using test::whole_file;

TEST(Escape, RoundTripsAnyBytes) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (const std::string& raw :
       {all, std::string("plain label"), std::string("a\\nb"), std::string("tab\there"),
        std::string("\xe2\x82\xac euro \xf0\x9f\x98\x80"), std::string("\xc3\x28 bad"), std::string("trailing\\")}) {
    for (bool space : {false, true}) {
      const std::string esc = escape_text(raw, space);
      EXPECT_EQ(unescape_text(esc), raw);
      for (unsigned char c : esc) {
        EXPECT_TRUE(c >= 0x20 && c != 0x7F) << "control byte in " << esc;
        if (space) {
          EXPECT_NE(c, ' ');
        }
      }
    }
  }
}

TEST(Escape, KeepsValidUtf8AndEscapesInvalid) {
  EXPECT_EQ(escape_text("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(escape_text("\xff"), "\\xFF");
  EXPECT_EQ(escape_text("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(escape_text("\xc0\xaf"), "\\xC0\\xAF");           // overlong
  EXPECT_EQ(escape_text("a\nb\\c"), "a\\nb\\\\c");
}

TEST(FuncName, IsOneWordMprofCanSplit) {
  EXPECT_EQ(func_name("Quantization (Static)"), "Quantization_(Static)");
  EXPECT_EQ(func_name(""), "_");
  EXPECT_EQ(func_name("a\tb"), "a\\tb");
}

TEST(Writer, WritesMprofsNumberFormats) {
  const std::string path = unit_temp_file("fmt.dat");
  {
    Writer w(path);
    w.cmdline("python3 -c 'x'");
    w.mem(1732181234.12345678, 1536 * 1024);
    w.child(42, 1732181234.5, 3 * 1024 * 1024 + 1);
    w.func("Calibration", {1.0, 1024 * 1024}, {2.5, 2 * 1024 * 1024});
  }
  EXPECT_EQ(whole_file(path),
            "CMDLINE python3 -c 'x'\n"
            "MEM 1.500000 1732181234.1235\n"
            "CHLD 42 3.000001 1732181234.5000\n"
            "FUNC Calibration 1.0000 1.0000 2.0000 2.5000 0\n");
  std::filesystem::remove(path);
}

TEST(Writer, EveryKindRoundTripsThroughTheReader) {
  const std::string path = unit_temp_file("all.dat");
  TraceMeta meta;
  meta.format_version = kFormatVersion;
  meta.qprof_version = "9.8.7";
  meta.host = "host with space";
  meta.metric = "all";
  meta.interval = 0.001;
  meta.root_pid = 4242;
  meta.start = 1700000000.25;
  meta.other["cgroup"] = "/sys/fs/cgroup/memory/qprof-1";
  {
    Writer w(path);
    w.header(meta);
    w.cmdline("cmd --flag");
    w.mem(1700000000.5, 100 << 20);
    w.pss({1700000000.5, 60 << 20, 40 << 20, Bytes{50} << 20});
    w.io({1700000000.5, 4096, 8192, 100, 200});
    w.cpu({1700000000.5, 1.25});
    w.gpu_device({0, "GPU-1234 abcd", "NVIDIA H100 80GB HBM3", 80ull << 30});
    w.gpu({1700000000.5, 0, 2ull << 30, 3ull << 30, 0.25});
    w.mark(1700000000.5, "Calibration Start");
    w.mem(1700000001.0, 300 << 20);
    w.hwm(1700000001.0, 310 << 20);
    w.cgroup({1700000001.0, 305 << 20, 320 << 20, std::nullopt, std::nullopt, std::nullopt});
    w.mark(1700000001.0, "Calibration End");
    w.peak(kPeakKernelProcess, 299 << 20);
    w.note("a warning\nwith a newline");
    w.exit({1700000001.5, 137, 9, true});
  }
  const Trace t = read_trace(path);
  EXPECT_TRUE(t.is_qprof());
  EXPECT_EQ(t.meta.qprof_version, "9.8.7");
  EXPECT_EQ(t.meta.host, "host with space");
  EXPECT_EQ(t.meta.metric, "all");
  EXPECT_DOUBLE_EQ(t.meta.interval, 0.001);
  EXPECT_EQ(t.meta.root_pid, 4242);
  EXPECT_DOUBLE_EQ(*t.meta.start, 1700000000.25);
  EXPECT_EQ(t.meta.other.at("cgroup"), "/sys/fs/cgroup/memory/qprof-1");
  EXPECT_EQ(t.cmdline, "cmd --flag");
  ASSERT_EQ(t.mem.size(), 2u);
  EXPECT_EQ(t.mem[1].bytes, 300u << 20);
  ASSERT_EQ(t.pss.size(), 1u);
  EXPECT_EQ(t.pss[0].uss, 40u << 20);
  EXPECT_EQ(t.pss[0].unreclaimable, std::optional<Bytes>(Bytes{50} << 20)) << "the appended Pss_Anon + Pss_Shmem";
  ASSERT_EQ(t.io.size(), 1u);
  EXPECT_EQ(t.io[0].wchar, 200u);
  ASSERT_EQ(t.cpu.size(), 1u);
  EXPECT_DOUBLE_EQ(t.cpu[0].cpu_seconds, 1.25);
  ASSERT_EQ(t.gpu_devices.size(), 1u);
  EXPECT_EQ(t.gpu_devices[0].uuid, "GPU-1234 abcd");
  EXPECT_EQ(t.gpu_devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.gpu_devices[0].total, 80ull << 30);
  ASSERT_EQ(t.gpu.size(), 1u);
  EXPECT_EQ(t.gpu[0].used, 3ull << 30);
  ASSERT_EQ(t.hwm.size(), 1u);
  ASSERT_EQ(t.cgroup.size(), 1u);
  EXPECT_EQ(t.cgroup[0].peak, 320u << 20);
  EXPECT_EQ(t.peaks.at("kernel_process"), 299u << 20);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], "a warning\nwith a newline");
  ASSERT_TRUE(t.exit);
  EXPECT_EQ(t.exit->status, 137);
  EXPECT_EQ(t.exit->signal, 9);
  EXPECT_TRUE(t.exit->timed_out);
  // Markers carry the latest value of every series above them.
  ASSERT_EQ(t.markers.size(), 2u);
  EXPECT_EQ(*t.markers[0].at.rss, 100u << 20);
  EXPECT_EQ(*t.markers[0].at.pss, 60u << 20);
  EXPECT_EQ(*t.markers[0].at.read_bytes, 4096u);
  EXPECT_EQ(*t.markers[0].at.gpu_tree, 2ull << 30);
  // The GPU line of its moment, whose per-process figure was asked 0.25 s before; then the same
  // line half a second later.
  EXPECT_DOUBLE_EQ(*t.markers[0].at.gpu_age, 0.25);
  EXPECT_DOUBLE_EQ(*t.markers[1].at.gpu_age, 0.75);
  ASSERT_EQ(t.gpu.size(), 1u);
  EXPECT_DOUBLE_EQ(*t.gpu[0].tree_age, 0.25);
  EXPECT_DOUBLE_EQ(*t.markers[0].at.cpu_seconds, 1.25);
  EXPECT_EQ(*t.markers[1].at.rss, 300u << 20);
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_EQ(t.stages[0].name, "Calibration");
  EXPECT_EQ(t.stages[0].mem_start, 100u << 20);
  EXPECT_EQ(t.stages[0].mem_end, 300u << 20);
  // Nothing but printable text, and no blank line (mprof stops at one).
  const std::string text = whole_file(path);
  EXPECT_EQ(text.find("\n\n"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Writer, ReportsAFailedWrite) {
  Writer w("/dev/full");
  w.mem(1.0, 1);
  EXPECT_FALSE(w.flush());
  EXPECT_NE(w.error().find("No space left on device"), std::string::npos) << w.error();
}

// close(2) is where NFS reports a write that failed; a descriptor closed behind the writer's
// back is the one failure of close that can be made on any filesystem.
TEST(Writer, ReportsAFailedClose) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  Writer w(fds[1], "x.dat");
  ::close(fds[1]);
  EXPECT_FALSE(w.close());
  EXPECT_EQ(w.error(), "closing x.dat failed: Bad file descriptor");
  ::close(fds[0]);
}

TEST(Writer, CloseWritesWhatIsBufferedAndDropsWhatComesAfter) {
  const std::string path = qprof::test::unit_temp_file("close.dat");
  Writer w(path);
  w.mem(1.0, 1 << 20);
  EXPECT_TRUE(w.close());
  w.mem(2.0, 2 << 20);
  EXPECT_TRUE(w.flush());
  EXPECT_TRUE(w.close());
  EXPECT_EQ(read_trace(path).mem.size(), 1u);
  std::filesystem::remove(path);
}

// A full disk (here a file-size limit: EFBIG, no mount needed) cuts the trace back to its last
// whole line, and the error says where it ends: never a cut "MEM 31.601562 1795731".
TEST(Writer, AFullDiskLeavesTheLastWholeLine) {
  const std::string path = unit_temp_file("efbig.dat");
  constexpr rlim_t kLimit = 10000;
  const int status = qprof::test::in_bounded_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of killing
    const rlimit fsize{kLimit, kLimit};
    if (::setrlimit(RLIMIT_FSIZE, &fsize) != 0) return false;
    Writer w(path);
    w.header(TraceMeta{});
    for (int i = 0; i < 2000; ++i) {
      w.mem(1795255547.0 + i, static_cast<Bytes>(31.601562 * 1048576) + static_cast<Bytes>(i));
      if (i % 100 == 0) w.flush();
    }
    const bool ok = w.close();
    return !ok && w.error().find("File too large; the trace ends at its last whole line, byte ") != std::string::npos;
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string text = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_FALSE(text.empty());
  EXPECT_LE(text.size(), kLimit);
  EXPECT_EQ(text.back(), '\n') << text.substr(text.size() > 60 ? text.size() - 60 : 0);
  std::vector<std::string> warnings;
  const Trace t = read_trace(path, &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_GT(t.mem.size(), 100u);
}

TEST(Writer, CreatingInAMissingDirectoryThrows) { EXPECT_THROW(Writer("/nonexistent-dir/x.dat"), std::system_error); }

std::string parse_error(const std::string& text) {
  try {
    read_trace_text(text, "bad.dat");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

// An exit status wider than an int is refused where it is, not wrapped into a negative one.
TEST(Reader, AnExitStatusPastAnIntIsRefused) {
  const std::string head = "QPROF 1 start=100\nMEM 1.0 100.0\n";
  EXPECT_EQ(parse_error(head + "EXIT 101.0 status=2147483648\n"),
            "bad.dat:3: EXIT: status='2147483648' is out of range");
  EXPECT_EQ(parse_error(head + "EXIT 101.0 signal=-2147483649\n"),
            "bad.dat:3: EXIT: signal='-2147483649' is out of range");
  EXPECT_EQ(read_trace_text(head + "EXIT 101.0 status=2147483647\n", "ok.dat").exit->status, 2147483647);
}

TEST(Reader, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(parse_error("CMDLINE x\nMEM 1.0 2.0\nMEM abc 3.0\n"), "bad.dat:3: MEM: memory (MiB) 'abc' is not a number");
  EXPECT_EQ(parse_error("MEM 1.0\n"), "bad.dat:1: MEM: missing time");
  EXPECT_EQ(parse_error("MEM -1.0 2.0\n"), "bad.dat:1: MEM: memory (MiB) is negative");
  EXPECT_EQ(parse_error("MEM nan 2.0\n"), "bad.dat:1: MEM: memory (MiB) 'nan' is not a number");
  EXPECT_EQ(parse_error("MEM 1.0 2.0\nhello world\n"), "bad.dat:2: not a trace line (it starts with 'hello')");
  EXPECT_EQ(parse_error("\x89PNG\r\n"), "bad.dat:1: not a trace line (it starts with '\\x89PNG')");
  EXPECT_EQ(parse_error("QPROF 2 version=9\nMEM 1 2\n"),
            "bad.dat:1: written in trace format 2 by a newer qprof; this qprof reads format 1");
  EXPECT_EQ(parse_error("QPROF 1 interval=fast\n"), "bad.dat:1: QPROF: interval='fast' is not a number");
  EXPECT_EQ(parse_error("CHLD x 1 2\n"), "bad.dat:1: CHLD: pid 'x' is not an integer");
  EXPECT_EQ(parse_error("CHLD 99999999999999999999 1 2\n"),
            "bad.dat:1: CHLD: pid '99999999999999999999' is out of range");
  EXPECT_EQ(parse_error("QPROF 1 start=100\nMEM 1.0 100.0\nEXIT 101.0 status=abc\n"),
            "bad.dat:3: EXIT: status='abc' is not an integer");
  EXPECT_EQ(parse_error("IO 1.0 1 2 3\n"), "bad.dat:1: IO: missing wchar");
  EXPECT_EQ(parse_error(""), "bad.dat: no memory samples (MEM lines): the trace is empty");
  EXPECT_EQ(parse_error("CMDLINE only\n"), "bad.dat: no memory samples (MEM lines): the trace is empty");
}

// MEM lines as qprof and mprof write them take a fast path (8 digits at a time); any other form
// takes the general one. Both must read the same numbers, and the fast one must hand every
// irregular line over (the double spaces below force the general path).
TEST(Reader, MemFastPathReadsWhatTheGeneralPathReads) {
  const std::vector<std::string> numbers = {"0",
                                            "7",
                                            "12345678",
                                            "123456789",
                                            "1234.567890",
                                            "1732181234.1235",
                                            "99999999.99999999",
                                            "123456789012345",
                                            "1234567890123456",
                                            "0.000001",
                                            "00012.50",
                                            "1.123456789",
                                            "1.1234567891",
                                            "3.",
                                            ".5",
                                            "1e3",
                                            "12345678901234.5"};
  for (const std::string& a : numbers) {
    for (const std::string& b : numbers) {
      const std::string fast = "MEM " + a + " " + b + "\n";
      const std::string general = "MEM  " + a + "  " + b + "\n";
      SCOPED_TRACE(fast);
      std::string fast_error, general_error;
      Trace f, g;
      try {
        f = read_trace_text(fast, "f.dat");
      } catch (const ParseError& e) {
        fast_error = e.what();
      }
      try {
        g = read_trace_text(general, "f.dat");
      } catch (const ParseError& e) {
        general_error = e.what();
      }
      EXPECT_EQ(fast_error.empty(), general_error.empty()) << fast_error << general_error;
      if (!fast_error.empty() || !general_error.empty()) continue;
      ASSERT_EQ(f.mem.size(), 1u);
      EXPECT_EQ(f.mem[0].bytes, g.mem[0].bytes);
      EXPECT_EQ(f.mem[0].t, g.mem[0].t);
      EXPECT_NEAR(f.mem[0].t, std::strtod(b.c_str(), nullptr), 1e-9 * std::max(1.0, std::strtod(b.c_str(), nullptr)));
    }
  }
  // A fast-path number is read 8 bytes at a time, past its line: the newline ends it.
  const Trace t = read_trace_text("MEM 1 2\nMEM 3 45678901\n", "f.dat");
  ASSERT_EQ(t.mem.size(), 2u);
  EXPECT_EQ(t.mem[0].t, 2.0);
  EXPECT_EQ(t.mem[1].t, 45678901.0);
}

// The numbers are the nearest doubles to what is written, as strtod (and mprof's float()) reads
// them: a sum of the whole and the fraction would round twice, an ulp off now and then.
TEST(Reader, NumbersAreTheNearestDoubles) {
  std::mt19937_64 rng(17);
  // Spread over magnitudes: double rounding shows most where the whole part is small.
  std::uniform_real_distribution<double> exponent(-3, 6);
  std::string text;
  std::vector<std::string> written;
  for (int i = 0; i < 100000; ++i) {
    char t[40];
    std::snprintf(t, sizeof t, i % 2 ? "%.9f" : "%.6f", std::pow(10.0, exponent(rng)));
    written.emplace_back(t);
    text += "MEM 1.000000 " + written.back() + "\n";
  }
  const Trace tr = read_trace_text(text, "f.dat");
  ASSERT_EQ(tr.mem.size(), written.size());
  int off = 0;
  for (std::size_t i = 0; i < written.size(); ++i) {
    if (tr.mem[i].t != std::strtod(written[i].c_str(), nullptr) && ++off <= 5) ADD_FAILURE() << written[i];
  }
  EXPECT_EQ(off, 0);
}

// The MEM fast path turns a MiB figure into bytes with integers while that gives the same
// count as from_mib of the nearest double; beyond, it takes the double. Both sides of that
// hand-over, every count of decimals, and figures just off a half byte must agree with it.
TEST(Reader, MemoryFiguresAreTheBytesOfTheNearestDouble) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> exponent(-7, 10);  // 1e-7 MiB .. 10 TiB
  std::string text;
  std::vector<std::string> written;
  const auto add = [&](const std::string& mib) {
    written.push_back(mib);
    text += "MEM " + mib + " 1.0\n";
  };
  for (int i = 0; i < 200000; ++i) {
    char m[48];
    std::snprintf(m, sizeof m, "%.*f", i % 10, std::pow(10.0, exponent(rng)));
    if (std::strlen(m) <= 16) add(m);  // 15 digits and the point: the fast path's forms
  }
  // A half byte is 1/2^21 MiB: decimals that land next to it, small and near the hand-over
  // (2^52 / 5^d bytes for d decimals).
  for (int d = 1; d <= 9; ++d) {
    const double five = std::pow(5.0, d);
    for (const double bytes : {3.0, 1048575.0, std::ldexp(1.0, 52) / five - 2, std::ldexp(1.0, 52) / five + 2}) {
      for (const double delta : {-1.0, 0.0, 1.0}) {
        char m[48];
        std::snprintf(m, sizeof m, "%.*f", d, (bytes + 0.5) / 1048576.0 + delta * std::pow(10.0, -d));
        if (std::strlen(m) <= 16 && m[0] != '-') add(m);
      }
    }
  }
  const Trace tr = read_trace_text(text, "f.dat");
  ASSERT_EQ(tr.mem.size(), written.size());
  int off = 0;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const Bytes expected = trace::from_mib(std::strtod(written[i].c_str(), nullptr));
    if (tr.mem[i].bytes != expected && ++off <= 5)
      ADD_FAILURE() << written[i] << ": " << tr.mem[i].bytes << " != " << expected;
  }
  EXPECT_EQ(off, 0);
}

// "MEM %.6f %.4f" with a Unix time, what qprof and mprof write, has a path of its own in the
// record parser (at least 64 bytes must follow a line for it: a long text). Its lines, each
// length of the MiB figure's whole part, and the forms next to it that the other paths take (a
// whole part of 9 digits, 9 or 11 digits of time, 3 or 5 decimals, CRLF), interleaved, read as
// strtod and from_mib read them.
TEST(Reader, TheWritersOwnFormReadsAsTheOtherPathsRead) {
  std::mt19937_64 rng(29);
  std::uniform_int_distribution<int> whole_digits(1, 9);
  std::uniform_real_distribution<double> unit(0, 1);
  std::string text;
  std::vector<std::pair<std::string, std::string>> written;
  for (int i = 0; i < 60000; ++i) {
    char mib[48], t[48];
    const double scale = std::pow(10.0, whole_digits(rng) - 1);
    std::snprintf(mib, sizeof mib, i % 7 == 3 ? "%.5f" : "%.6f", scale * (1 + 9 * unit(rng)) * 0.99999);
    const int variant = i % 11;
    const double time = variant == 4   ? 999999999.0 * unit(rng)
                        : variant == 5 ? 9.9e9 + 9.9e7 * unit(rng)  // near the latest time a trace holds
                                       : 1e9 + 9e9 * unit(rng);
    std::snprintf(t, sizeof t, variant == 6 ? "%.3f" : variant == 7 ? "%.5f" : "%.4f", time);
    written.emplace_back(mib, t);
    text += std::string("MEM ") + mib + " " + t + (variant == 8 ? "\r\n" : "\n");
  }
  const Trace tr = read_trace_text(text, "f.dat");
  ASSERT_EQ(tr.mem.size(), written.size());
  int off = 0;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const auto& [mib, t] = written[i];
    const bool same = tr.mem[i].bytes == from_mib(std::strtod(mib.c_str(), nullptr)) &&
                      tr.mem[i].t == std::strtod(t.c_str(), nullptr);
    if (!same && ++off <= 5)
      ADD_FAILURE() << "MEM " << mib << " " << t << ": " << tr.mem[i].bytes << " at " << tr.mem[i].t;
  }
  EXPECT_EQ(off, 0);
}

TEST(Reader, TruncatedLastLineIsAWarningNotAnError) {
  std::vector<std::string> warnings;
  const Trace t = read_trace_text("MEM 1.0 2.0\nMEM 2.0 3.0\nMEM 3.5", "cut.dat", &warnings);
  EXPECT_EQ(t.mem.size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "cut.dat:3: the last line has no newline (was the writer killed?); it was ignored");
}

TEST(Reader, SkipsKindsFromNewerWritersAndExtraFields) {
  const Trace t =
      read_trace_text("QPROF 1 version=2 future_key=1\nFUTURE 1 2 3\nMEM 1.0 2.0 extra\nCPU 2.0 1.5 7\n", "f.dat");
  EXPECT_EQ(t.mem.size(), 1u);
  EXPECT_EQ(t.meta.other.at("future_key"), "1");
  EXPECT_EQ(t.cpu.size(), 1u);
}

TEST(Reader, AcceptsCrlfAndBlankLines) {
  const Trace t = read_trace_text("MEM 1.0 2.0\r\n\nMEM 2.0 3.0\n", "crlf.dat");
  EXPECT_EQ(t.mem.size(), 2u);
}

TEST(Reader, MprofFuncLinesAreStagesButQprofsOnlyMirrorItsMarkers) {
  const Trace mprof = read_trace_text("FUNC f 1.0 10.0 2.0 11.0 0\nMEM 1.0 10.0\n", "m.dat");
  ASSERT_EQ(mprof.stages.size(), 1u);
  EXPECT_EQ(mprof.stages[0].source, Stage::Source::func);
  const Trace qprof = read_trace_text(
      "QPROF 1\nMEM 1.0 10.0\nMARK 10.0 S Start\nMARK 11.0 S End\nFUNC S 1.0 10.0 1.0 11.0 0\n", "q.dat");
  ASSERT_EQ(qprof.stages.size(), 1u);
  EXPECT_EQ(qprof.stages[0].source, Stage::Source::markers);
}

TEST(Reader, UnclosedStageRunsToTheEndOfTheTrace) {
  const Trace t = read_trace_text("QPROF 1\nMEM 1.0 10.0\nMARK 10.0 Train Start\nMEM 5.0 12.0\n", "u.dat");
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_FALSE(t.stages[0].closed);
  EXPECT_DOUBLE_EQ(t.stages[0].t_end, 12.0);
  EXPECT_EQ(t.stages[0].mem_end, 5u << 20);
}

TEST(Reader, ReadsAFileInChunksWithLongLines) {
  const std::string path = unit_temp_file("long.dat");
  {
    std::ofstream out(path);
    out << "QPROF 1\n";
    // As long as a line may be (kMaxLineBytes): the whole read buffer.
    out << "MARK 1.0 " << std::string(kMaxLineBytes - 9, 'x') << "\n";
    for (int i = 0; i < 200000; ++i) out << "MEM " << i % 1000 << ".5 " << 1000 + i * 0.01 << "\n";
  }
  const Trace t = read_trace(path);
  EXPECT_EQ(t.mem.size(), 200000u);
  EXPECT_EQ(t.markers[0].label.size(), kMaxLineBytes - 9);
  std::filesystem::remove(path);
}

TEST(Reader, MissingFileIsAnError) {
  EXPECT_THROW(read_trace("/nonexistent/trace.dat"), ParseError);
  try {
    read_trace("/nonexistent/trace.dat");
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/trace.dat: No such file or directory");
  }
}

}  // namespace
}  // namespace qprof::trace
