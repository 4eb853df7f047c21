// SPDX-License-Identifier: Apache-2.0
// The marker channel's lines, reassembled from its reads: one writer's line split over two
// writes is joined; a line left without its newline is ended by the next write that starts a
// line of the protocol, so that another writer's synchronous request keeps its own line.
#include "qprof/record/mark_channel.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "qprof/record/markers.hpp"

namespace qprof::record {
namespace {

struct Line {
  std::string text;
  bool cut = false;
  bool unterminated = false;
  bool operator==(const Line&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Line& l) {
  return os << "{" << l.text << (l.cut ? ", cut" : "") << (l.unterminated ? ", unterminated" : "") << "}";
}

// The reads, each with whether the source was empty before it.
std::vector<Line> lines_of(const std::vector<std::pair<std::string, bool>>& reads) {
  ChannelLineReader reader;
  std::vector<Line> out;
  for (const auto& [data, after_empty] : reads) {
    reader.feed(data, after_empty, [&](std::string_view line, bool cut, bool unterminated) {
      out.push_back({std::string(line), cut, unterminated});
    });
  }
  return out;
}

TEST(ChannelLineReader, OneWritersLineSplitOverTwoWritesIsJoined) {
  EXPECT_EQ(lines_of({{"QPROF_MARK: Sp", true}, {"lit Start\n", true}}),
            (std::vector<Line>{{"QPROF_MARK: Split Start"}}));
  // Bare labels and lines split after the marker word are joined too.
  EXPECT_EQ(lines_of({{"Load", true}, {" Start\nQPROF_MARK:", true}, {" Eval\n", true}}),
            (std::vector<Line>{{"Load Start"}, {"QPROF_MARK: Eval"}}));
}

TEST(ChannelLineReader, AnUnterminatedLineIsEndedByTheNextWritesProtocolWord) {
  const std::string sync = "QPROF_SYNC /tmp/qprof-ack.abc123/ack From child\n";
  EXPECT_EQ(lines_of({{"Split End\nQPROF_MARK: Two", true}, {sync, true}}),
            (std::vector<Line>{{"Split End"}, {"QPROF_MARK: Two", false, true}, {sync.substr(0, sync.size() - 1)}}));
  EXPECT_EQ(lines_of({{"QPROF_MARK: Two", true}, {"QPROF_MARK: Three\n", true}}),
            (std::vector<Line>{{"QPROF_MARK: Two", false, true}, {"QPROF_MARK: Three"}}));
  // The Python helper's write starts with torch's figures when the program uses CUDA.
  EXPECT_EQ(lines_of({{"QPROF_MARK: Two", true}, {"QPROF_TORCH 0 1 2\nQPROF_SYNC /r/qprof-ack.x/ack X\n", true}}),
            (std::vector<Line>{
                {"QPROF_MARK: Two", false, true}, {"QPROF_TORCH 0 1 2"}, {"QPROF_SYNC /r/qprof-ack.x/ack X"}}));
}

TEST(ChannelLineReader, WithinOneStreamOfReadsNothingIsEndedEarly) {
  // A read cut by qprof's buffer, not by a write: the next read continues the same bytes.
  EXPECT_EQ(lines_of({{"QPROF_MARK: a ", true}, {"QPROF_SYNC word\n", false}}),
            (std::vector<Line>{{"QPROF_MARK: a QPROF_SYNC word"}}));
  // A word that merely begins like the protocol's does not end the line.
  EXPECT_EQ(lines_of({{"QPROF_MARK: a ", true}, {"QPROF_SYNCED\n", true}}),
            (std::vector<Line>{{"QPROF_MARK: a QPROF_SYNCED"}}));
  // Nothing pending: nothing to end.
  EXPECT_EQ(lines_of({{"QPROF_MARK: a\n", true}, {"QPROF_MARK: b\n", true}}),
            (std::vector<Line>{{"QPROF_MARK: a"}, {"QPROF_MARK: b"}}));
}

TEST(ChannelLineReader, ALongLineIsCutAtTheScanLimit) {
  const std::string long_label(kMarkerScanLimit + 100, 'x');
  const std::vector<Line> lines =
      lines_of({{long_label.substr(0, 3000), true}, {long_label.substr(3000) + "\n", true}});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, long_label.substr(0, kMarkerScanLimit));
  EXPECT_TRUE(lines[0].cut);
}

// The channel itself: a fragment left in the pipe, then another writer's synchronous request.
TEST(MarkChannel, AnotherWritersRequestIsNotSwallowedByAnUnterminatedLine) {
  auto created = MarkChannel::create();
  ASSERT_TRUE(created) << created.failure().message;
  MarkChannel& channel = **created;
  std::mutex mutex;
  std::vector<PendingMarker> posted;
  channel.start(
      [&](PendingMarker m) {
        const std::lock_guard<std::mutex> hold(mutex);
        posted.push_back(std::move(m));
        return true;
      },
      [] { return false; }, [] {});
  const auto posted_count = [&] {
    const std::lock_guard<std::mutex> hold(mutex);
    return posted.size();
  };
  const auto write = [&](const std::string& text) {
    ASSERT_EQ(::write(channel.write_fd(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  };
  write("QPROF_MARK: Sp");
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  write("lit Start\n");
  write("Split End\nQPROF_MARK: Two");
  for (int i = 0; i < 5000 && posted_count() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the reader found the pipe empty again
  write("QPROF_SYNC /tmp/qprof-ack.abc123/ack From child\n");
  for (int i = 0; i < 5000 && posted_count() < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  channel.finish();
  ASSERT_EQ(posted.size(), 4u);
  EXPECT_EQ(posted[0].label, "Split Start");
  EXPECT_EQ(posted[1].label, "Split End");
  EXPECT_EQ(posted[2].label, "Two");
  EXPECT_EQ(posted[2].reply_path, "");
  EXPECT_EQ(posted[3].label, "From child");
  EXPECT_EQ(posted[3].reply_path, "/tmp/qprof-ack.abc123/ack");
  EXPECT_EQ(channel.unterminated(), 1u);
}

}  // namespace
}  // namespace qprof::record
