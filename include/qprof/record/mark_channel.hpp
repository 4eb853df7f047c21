// SPDX-License-Identifier: Apache-2.0
// The marker channel that is not stderr: a pipe whose write end every process of the tree
// inherits (QPROF_MARK_FD) and a FIFO for processes that cannot inherit it (QPROF_MARK_PATH).
// One line is one marker; a line may ask for an acknowledgement once its checkpoint is sampled
// (synchronous checkpoints), and may carry torch's CUDA figures. The protocol is in the README,
// "Marker channel".
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/common/types.hpp"

namespace qprof::record {

inline constexpr std::string_view kMarkFdVariable = "QPROF_MARK_FD";
inline constexpr std::string_view kMarkPathVariable = "QPROF_MARK_PATH";
// `<st_dev>:<st_ino>` of the pipe behind QPROF_MARK_FD: a program may close that descriptor and
// get its own pipe under the same number; a writer that checks the identity never sends a marker
// into the program's own data.
inline constexpr std::string_view kMarkFdIdVariable = "QPROF_MARK_FD_ID";
// `QPROF_SYNC <reply-fifo> <label>`: a checkpoint acknowledged with "ok\n" on the writer's FIFO.
inline constexpr std::string_view kSyncWord = "QPROF_SYNC";
// `QPROF_TORCH <device> <allocated> <reserved>`: torch's figures, for the next marker of the line's source.
inline constexpr std::string_view kTorchWord = "QPROF_TORCH";

struct TorchFigure {
  int device = 0;
  Bytes allocated = 0;
  Bytes reserved = 0;
};

// A marker as it waits for its checkpoint: from stderr (no reply, no torch) or from the channel.
struct PendingMarker {
  std::string label;
  std::vector<TorchFigure> torch;
  std::string reply_path;  // not empty: acknowledge there once the checkpoint is sampled
};

// One line of the channel (without its newline), as written: a marker (the `QPROF_MARK:` prefix
// optional), a synchronous marker, torch's figures, or nothing of use (empty or malformed).
struct ChannelTorchLine {
  TorchFigure figure;
};
using ChannelLine = std::variant<std::monostate, PendingMarker, ChannelTorchLine>;
ChannelLine parse_channel_line(std::string_view line);

// One source's lines, reassembled from its reads: a writer's line may come in several writes.
// The protocol is one line per write(2), so a read that follows an empty source starts a new
// write; when that write begins with a word of the protocol (`QPROF_MARK:`, `QPROF_SYNC`,
// `QPROF_TORCH`) while a line is still pending, the pending text was another write's, left
// without its newline. It is ended there, as a line of its own (`unterminated`), rather than
// joined to the new one: a synchronous request swallowed into a label would never be answered,
// and its reply path would become the label's text.
class ChannelLineReader {
 public:
  // A whole line (without its newline; its first kMarkerScanLimit bytes, `cut` when it was
  // longer), `unterminated` when it was ended by the next write rather than by a newline.
  using OnLine = std::function<void(std::string_view line, bool cut, bool unterminated)>;
  // One read's bytes; `after_empty`: the source held nothing more before them (the read before
  // this one emptied it), so they start with a write.
  void feed(std::string_view data, bool after_empty, const OnLine& on_line);

 private:
  void end_line(const OnLine& on_line, bool unterminated);
  std::string line_;  // the pending line's first kMarkerScanLimit bytes
  bool cut_ = false;  // the pending line is longer than that
};

// Tells the writer waiting on `reply_path` (a FIFO it made) that its checkpoint was taken.
// Never blocks: a writer that gave up (no reader, the FIFO gone) is simply not told; anything
// that is not a FIFO is left alone.
void send_ack(const std::string& reply_path);

// --mark-fifo PATH, checked before anything runs: PATH made absolute (the writers take only an
// absolute QPROF_MARK_PATH), or why the FIFO cannot be made there or why every writer would
// refuse it. The writers (qprof mark, qprof_mark.h, qprof_mark.py) write only to a FIFO of their
// own uid, which is qprof's, in a directory owned by that uid or root that no one else may change
// (or a sticky one, as /tmp), opened without following a link; the rule is theirs, repeated here.
Result<std::string> mark_fifo_place(const std::string& path);

class MarkChannel {
 public:
  // Takes a marker from the reader thread; must not block. False: it was dropped (queue full).
  using Post = std::function<bool(PendingMarker)>;
  // Whether markers posted are still waiting for the sampler, and a way to wake it: the reader
  // sends the wake-up again every millisecond until they are taken (a wake-up can be lost).
  using Pending = std::function<bool()>;
  using Wake = std::function<void()>;

  // Creates the pipe and, in a private directory (mode 0700) under $TMPDIR or /tmp, the FIFO; or
  // the FIFO at `fifo_at` (--mark-fifo: a path the writers know beforehand; never an existing
  // file). The Failure says why the pipe, or the FIFO asked for at `fifo_at`, cannot be made.
  // Where only the private FIFO cannot (an unusable $TMPDIR), the pipe still works: fifo_path()
  // is empty and fifo_problem() says why.
  static Result<std::unique_ptr<MarkChannel>> create(const std::string& fifo_at = "");
  ~MarkChannel();  // stops the reader, closes both ends, removes the FIFO and its directory
  MarkChannel(const MarkChannel&) = delete;
  MarkChannel& operator=(const MarkChannel&) = delete;

  int write_fd() const { return pipe_write_; }
  // The write end's `<st_dev>:<st_ino>`, exported as QPROF_MARK_FD_ID.
  const std::string& write_fd_id() const { return write_fd_id_; }
  const std::string& fifo_path() const { return fifo_path_; }
  const std::string& fifo_problem() const { return fifo_problem_; }
  // Lines dropped because the queue was full (a writer flooding the channel).
  std::uint64_t dropped() const { return dropped_.load(); }
  // Markers whose line was longer than kMarkerScanLimit: taken cut there.
  std::uint64_t cut() const { return cut_.load(); }
  // Lines left without their newline that the next write ended (ChannelLineReader).
  std::uint64_t unterminated() const { return unterminated_.load(); }

  void start(Post post, Pending pending, Wake wake);
  // Reads whatever is already written, then stops the reader. Never waits for an end of file:
  // descendants may hold the write end for ever.
  void finish();

 private:
  MarkChannel() = default;
  struct Source {
    int fd = -1;
    ChannelLineReader lines;
    std::vector<TorchFigure> torch;  // figures waiting for this source's next marker
  };
  bool open_fifo(const std::string& fifo_at, std::string& why_not);
  void loop();
  void read_source(Source& s);
  void on_line(Source& s, std::string_view line, bool cut, bool unterminated);

  int pipe_read_ = -1;
  int pipe_write_ = -1;
  int stop_fd_ = -1;
  std::string dir_;
  std::string fifo_path_;
  std::string fifo_problem_;
  std::string write_fd_id_;
  Source sources_[2];
  Post post_;
  Pending pending_;
  Wake wake_;
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> cut_{0};
  std::atomic<std::uint64_t> unterminated_{0};
  std::thread thread_;
};

}  // namespace qprof::record
