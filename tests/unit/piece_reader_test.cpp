// SPDX-License-Identifier: Apache-2.0
// A trace read a piece at a time gives what parse_file_prefix gives, whatever the piece's size,
// and fails as it does.
#include "qprof/trace/piece_reader.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof::trace {
namespace {

// Every record as a line of text, with the line it came from.
class Recording : public Visitor {
 public:
  std::vector<std::string> got;
  void mem(const MemSample& s) override { add("MEM " + std::to_string(s.t) + " " + std::to_string(s.bytes)); }
  void pss(const PssSample& s) override { add("PSS " + std::to_string(s.t) + " " + std::to_string(s.pss)); }
  void mark(Seconds t, std::string_view label) override { add("MARK " + std::to_string(t) + " " + std::string(label)); }
  void note(std::string_view text) override { add("NOTE " + std::to_string(text.size())); }
  void warning(const std::string& w) override { add("warning " + w); }

 private:
  void add(std::string s) { got.push_back(std::to_string(line()) + ": " + std::move(s)); }
};

// A file of the test process's own (test::unit_temp_file), removed with the object.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text) : path(test::unit_temp_file("piece_reader_" + name)) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    EXPECT_NE(f, nullptr) << path;
    if (!f) return;
    EXPECT_EQ(std::fwrite(text.data(), 1, text.size(), f), text.size());
    std::fclose(f);
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

std::vector<std::string> by_pieces(const std::string& path, std::uint64_t length, std::size_t piece) {
  Recording r;
  PieceReader reader(path, length, r, piece);
  while (reader.next()) {
  }
  EXPECT_FALSE(reader.next());  // and stays ended
  return r.got;
}

std::vector<std::string> whole(const std::string& path, std::uint64_t length) {
  Recording r;
  parse_file_prefix(path, length, r);
  return r.got;
}

std::string sample_trace() {
  std::string text = "\xEF\xBB\xBFQPROF 1 version=x interval=0.01\nCMDLINE job\n";
  for (int i = 0; i < 3000; ++i) {
    text += "MEM " + std::to_string(10 + i % 17) + ".5 " + std::to_string(100 + i * 0.01) + "\n";
    if (i % 7 == 0) text += "PSS " + std::to_string(100 + i * 0.01) + " " + std::to_string(1000 + i) + " 5\n";
    if (i == 1000) text += "NOTE " + std::string(200000, 'n') + "\n";  // longer than any piece: the buffer grows
    if (i == 2000) text += "MARK " + std::to_string(100 + i * 0.01) + " train\n";
  }
  return text + "MEM 3.0 140.0";  // no newline: a killed writer's last line
}

TEST(PieceReader, GivesWhatTheWholeReadGivesWhateverThePiece) {
  const std::string text = sample_trace();
  const TempFile path_file("sample.dat", text);
  const std::string& path = path_file.path;
  const auto expected = whole(path, text.size());
  ASSERT_GT(expected.size(), 3400u);
  EXPECT_EQ(expected.back().find("warning"), expected.back().find(": ") + 2);  // the cut last line
  for (std::size_t piece : {std::size_t{1}, std::size_t{65}, std::size_t{100}, std::size_t{4096},
                            PieceReader::kPieceBytes, std::size_t{1} << 22}) {
    EXPECT_EQ(by_pieces(path, text.size(), piece), expected) << "piece " << piece;
  }
}

TEST(PieceReader, ReadsTheLengthAnEarlierPassRead) {
  const std::string text = sample_trace();
  const TempFile path_file("prefix.dat", text);
  const std::string& path = path_file.path;
  // Ends in the middle of a line: what parse_file_prefix makes of that, too.
  for (std::uint64_t length : {std::uint64_t{0}, std::uint64_t{100}, std::uint64_t{text.size() / 2}}) {
    EXPECT_EQ(by_pieces(path, length, 512), whole(path, length)) << "length " << length;
  }
  // A file cut shorter than the length since: its lines, then the end.
  const TempFile cut_file("cut.dat", text.substr(0, 5000));
  const std::string& cut = cut_file.path;
  EXPECT_EQ(by_pieces(cut, text.size(), 512), whole(cut, text.size()));
}

TEST(PieceReader, FailsAsTheWholeReadFails) {
  const TempFile bad_file("bad.dat", "MEM 1.0 100.0\nMEM 1.0 100.1\nMEM x 100.2\n");
  const std::string& bad = bad_file.path;
  Recording r;
  PieceReader reader(bad, 100, r, 8);
  try {
    while (reader.next()) {
    }
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), bad + ":3: MEM: memory (MiB) 'x' is not a number");
  }
  const TempFile gz_file("gz.dat", "\x1F\x8B\x08 compressed\n");
  const std::string& gz = gz_file.path;
  Recording r2;
  PieceReader compressed(gz, 14, r2, 4);
  EXPECT_THROW(compressed.next(), ParseError);
  const TempFile long_line_file("long.dat", "NOTE " + std::string(kMaxLineBytes + 10, 'a') + "\n");
  const std::string& long_line = long_line_file.path;
  Recording r3;
  PieceReader too_long(long_line, kMaxLineBytes + 16, r3, 4096);
  try {
    while (too_long.next()) {
    }
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(":1: line longer than 1 MiB"), std::string::npos) << e.what();
  }
}

TEST(PieceReader, AFileReplacedBetweenPiecesIsAnError) {
  const std::string text = sample_trace();
  const TempFile path_file("replaced.dat", text);
  const std::string& path = path_file.path;
  Recording r;
  PieceReader reader(path, text.size(), r, 1024);
  ASSERT_TRUE(reader.next());
  const TempFile other_file("replacement.dat", text);
  const std::string& other = other_file.path;
  ASSERT_EQ(std::rename(other.c_str(), path.c_str()), 0);
  try {
    while (reader.next()) {
    }
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": the file was replaced while it was being read");
  }
}

TEST(PieceReader, HoldsNoDescriptorBetweenPieces) {
  const std::string text = sample_trace();
  const TempFile file("descriptors.dat", text);
  // The lowest free descriptor before the reader is made: still free after pieces read.
  const int before = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(before, 0);
  ::close(before);
  Recording r;
  PieceReader reader(file.path, text.size(), r, 1024);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reader.next());
  const int after = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(after, 0);
  ::close(after);
  EXPECT_EQ(after, before);
}

TEST(PieceReader, AFileCutWhileItIsReadIsAnError) {
  const std::string text = sample_trace();
  const TempFile file("cut_while_read.dat", text);
  Recording r;
  PieceReader reader(file.path, text.size(), r, 1024);
  ASSERT_TRUE(reader.next());
  ASSERT_TRUE(reader.next());
  ASSERT_EQ(::truncate(file.path.c_str(), 100), 0);
  try {
    while (reader.next()) {
    }
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), file.path + ": the file was cut while it was being read");
  }
}

}  // namespace
}  // namespace qprof::trace
