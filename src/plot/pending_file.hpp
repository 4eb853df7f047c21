// The chart's file while gnuplot draws it, inside the plot module.
#pragma once

#include <string>

namespace qprof::plot::detail {

// A new file beside the target (same file system), created with the usual permissions (0666
// less umask) and renamed over the target only by commit(), so that a failed chart never leaves
// half a file nor replaces a good one. It has no name until commit() where the file system allows
// (O_TMPFILE: ext4, xfs, btrfs, tmpfs), so that nothing is left behind whatever kills qprof,
// SIGKILL included; elsewhere it is a hidden ".NAME.XXXXXXXX.tmp" removed by the destructor and,
// while it exists, by SIGINT, SIGTERM or SIGHUP before qprof dies of them. Throws PlotError.
class PendingFile {
 public:
  explicit PendingFile(std::string target);
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();
  int fd() const { return fd_; }
  bool named() const { return !path_.empty(); }  // the fallback: a file with a name from the start
  void commit();

 private:
  std::string temporary_name() const;
  std::string target_, dir_, path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace qprof::plot::detail
