// SPDX-License-Identifier: Apache-2.0
/* qprof_mark.h: markers and synchronous checkpoints for qprof, from C and C++.
 *
 * Header only (static inline functions, no library to link). Each call is a no-op outside
 * `qprof run`: it returns QPROF_MARK_ABSENT and does nothing else.
 *
 *   #include <qprof_mark.h>
 *   qprof_mark("Load Start");        // a checkpoint; returns at once
 *   ...
 *   qprof_mark_sync("Load End");     // returns once qprof has sampled it (at most 100 ms)
 *
 * `X Start` ... `X End` is a stage, as with stderr markers. The protocol (README, "Marker
 * channel"): one line per marker written to the pipe QPROF_MARK_FD, or to the FIFO
 * QPROF_MARK_PATH when the descriptor was not inherited; a synchronous marker is the line
 * `QPROF_SYNC <reply-fifo> <label>`, and qprof writes "ok\n" into the writer's own reply FIFO once
 * the checkpoint's sample is taken. The writer waits QPROF_MARK_SYNC_TIMEOUT_MS at most.
 * Needs POSIX.1-2008 (the default of gcc and clang; with -std=c99 define _POSIX_C_SOURCE 200809L).
 */
#ifndef QPROF_MARK_H
#define QPROF_MARK_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define QPROF_MARK_OK 0        /* delivered (qprof_mark_sync: and acknowledged) */
#define QPROF_MARK_ABSENT 1    /* not under qprof: nothing was done */
#define QPROF_MARK_FAILED (-1) /* the write failed, or no acknowledgement in time */
/* QPROF_MARK_PATH names something other than the caller's own FIFO in a directory only its owner
 * may change (a file, a link, another user's FIFO): nothing was written. */
#define QPROF_MARK_REFUSED 2
#define QPROF_MARK_SYNC_TIMEOUT_MS 100
#define QPROF_MARK_LINE_MAX 4096 /* PIPE_BUF: a line this long is written in one piece */

/* QPROF_MARK_PATH opened for writing when it is a FIFO of the caller's (effective) uid in a
 * directory owned by the caller or root that no one else may change (or a sticky one, as /tmp):
 * the variable outlives qprof in a daemon, and whoever could plant a file, a link or a FIFO of
 * their own at that path must never receive a marker. Returns the descriptor, -1 when the path
 * does not exist or no qprof reads it (QPROF_MARK_ABSENT), -2 when it is refused. */
static inline int qprof_mark_open_fifo_(const char* path) {
  char dir[PATH_MAX];
  const char* slash = strrchr(path, '/');
  const char* name = slash + 1;
  size_t dir_len = slash == path ? 1 : (size_t)(slash - path);
  struct stat dir_st, st, opened;
  const uid_t me = geteuid();
  int dir_fd, fd;
  if (*name == '\0' || dir_len >= sizeof dir) return -2;
  memcpy(dir, path, dir_len);
  dir[dir_len] = '\0';
  dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return errno == ENOENT ? -1 : -2;
  if (fstat(dir_fd, &dir_st) != 0 || (dir_st.st_uid != me && dir_st.st_uid != 0) ||
      ((dir_st.st_mode & (S_IWGRP | S_IWOTH)) && !(dir_st.st_mode & S_ISVTX))) {
    close(dir_fd);
    return -2;
  }
  if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    close(dir_fd);
    return errno == ENOENT ? -1 : -2;
  }
  if (!S_ISFIFO(st.st_mode) || st.st_uid != me) {
    close(dir_fd);
    return -2;
  }
  /* O_NONBLOCK: no qprof reading (ENXIO) or a full FIFO (EAGAIN) never blocks the program. */
  fd = openat(dir_fd, name, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  close(dir_fd);
  if (fd < 0) return -1;
  if (fstat(fd, &opened) != 0 || !S_ISFIFO(opened.st_mode) || opened.st_uid != me || opened.st_dev != st.st_dev ||
      opened.st_ino != st.st_ino) {
    close(fd);
    return -2;
  }
  return fd;
}

/* The descriptor to write markers to (*close_after: opened here, to be closed), -1 (none) or -2
 * (QPROF_MARK_PATH refused). */
static inline int qprof_mark_open_(int* close_after) {
  const char* fd_text = getenv("QPROF_MARK_FD");
  const char* fd_id = getenv("QPROF_MARK_FD_ID");
  const char* path = getenv("QPROF_MARK_PATH");
  *close_after = 0;
  if (fd_text && *fd_text) {
    char* end = NULL;
    long fd = strtol(fd_text, &end, 10);
    struct stat st;
    char id[48];
    /* Only qprof's own pipe: a program may have closed the descriptor and reused its number for
     * a file or a pipe of its own, which must never receive a marker. An older qprof that exports
     * no QPROF_MARK_FD_ID is taken at its word. */
    if (*end == '\0' && fd >= 0 && fd < INT_MAX && fstat((int)fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
      snprintf(id, sizeof id, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
      if (!fd_id || strcmp(fd_id, id) == 0) return (int)fd;
    }
  }
  if (path && *path == '/') {
    int fd = qprof_mark_open_fifo_(path);
    if (fd >= 0) *close_after = 1;
    return fd;
  }
  return -1;
}

static inline int qprof_mark_present(void) {
  int close_after = 0;
  int fd = qprof_mark_open_(&close_after);
  if (fd >= 0 && close_after) close(fd);
  return fd >= 0;
}

/* Writes `line` in one write(2), without dying of SIGPIPE when qprof is gone. */
static inline int qprof_mark_write_(int fd, const char* line, size_t n) {
  sigset_t pipe_set, old_set, pending;
  int was_pending, saved;
  ssize_t w;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigpending(&pending);
  was_pending = sigismember(&pending, SIGPIPE);
  do {
    w = write(fd, line, n);
  } while (w < 0 && errno == EINTR);
  saved = errno;
  if (w < 0 && saved == EPIPE && !was_pending) {
    const struct timespec zero = {0, 0};
    sigtimedwait(&pipe_set, NULL, &zero); /* the SIGPIPE this write raised, taken back */
  }
  pthread_sigmask(SIG_SETMASK, &old_set, NULL);
  errno = saved;
  return w == (ssize_t)n ? QPROF_MARK_OK : QPROF_MARK_FAILED;
}

/* "<head><label>\n" into buf, the label cut to fit and its line breaks made blanks. */
static inline size_t qprof_mark_line_(char* buf, size_t size, const char* head, const char* label) {
  size_t n = strlen(head), i;
  if (n > size - 2) n = size - 2;
  memcpy(buf, head, n);
  for (i = 0; label[i] != '\0' && n < size - 2; ++i) {
    buf[n++] = (label[i] == '\n' || label[i] == '\r') ? ' ' : label[i];
  }
  buf[n++] = '\n';
  buf[n] = '\0';
  return n;
}

/* A checkpoint, at once: qprof samples it when it reads the line. */
static inline int qprof_mark(const char* label) {
  char line[QPROF_MARK_LINE_MAX];
  int close_after = 0, result;
  int fd = qprof_mark_open_(&close_after);
  if (fd < 0) return fd == -2 ? QPROF_MARK_REFUSED : QPROF_MARK_ABSENT;
  result = qprof_mark_write_(fd, line, qprof_mark_line_(line, sizeof line, "QPROF_MARK: ", label));
  if (close_after) close(fd);
  return result;
}

/* A checkpoint that returns once qprof has taken its sample, or after
 * QPROF_MARK_SYNC_TIMEOUT_MS (QPROF_MARK_FAILED): the memory recorded is the memory at this call. */
static inline int qprof_mark_sync(const char* label) {
  char dir[PATH_MAX], reply[PATH_MAX + 8], head[PATH_MAX + 32], line[QPROF_MARK_LINE_MAX], ok[8];
  const char* tmp = getenv("TMPDIR");
  int close_after = 0, result = QPROF_MARK_FAILED, reply_fd, made;
  struct timespec start, now;
  int fd = qprof_mark_open_(&close_after);
  if (fd < 0) return fd == -2 ? QPROF_MARK_REFUSED : QPROF_MARK_ABSENT;
  /* The reply FIFO is the writer's own (so that many writers never take each other's answer),
   * in a fresh 0700 directory; its path is one word of the request. */
  if (!tmp || tmp[0] != '/' || strpbrk(tmp, " \t\n") || strlen(tmp) > PATH_MAX - 64) tmp = "/tmp";
  snprintf(dir, sizeof dir, "%s/qprof-ack.XXXXXX", tmp);
  made = mkdtemp(dir) != NULL;
  if (!made && strcmp(tmp, "/tmp") != 0) { /* an unusable TMPDIR: /tmp, as Python's tempfile does */
    snprintf(dir, sizeof dir, "/tmp/qprof-ack.XXXXXX");
    made = mkdtemp(dir) != NULL;
  }
  if (!made) {
    result = qprof_mark(label); /* cannot wait: a plain marker */
    if (close_after) close(fd);
    return result == QPROF_MARK_OK ? QPROF_MARK_FAILED : result;
  }
  snprintf(reply, sizeof reply, "%s/ack", dir);
  if (mkfifo(reply, 0600) == 0 && (reply_fd = open(reply, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
    snprintf(head, sizeof head, "QPROF_SYNC %s ", reply);
    if (qprof_mark_write_(fd, line, qprof_mark_line_(line, sizeof line, head, label)) == QPROF_MARK_OK) {
      clock_gettime(CLOCK_MONOTONIC, &start);
      for (;;) {
        struct pollfd p;
        long waited_ms;
        clock_gettime(CLOCK_MONOTONIC, &now);
        waited_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (waited_ms >= QPROF_MARK_SYNC_TIMEOUT_MS) break;
        p.fd = reply_fd;
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, (int)(QPROF_MARK_SYNC_TIMEOUT_MS - waited_ms)) < 0 && errno != EINTR) break;
        if (p.revents & (POLLIN | POLLHUP)) {
          if (read(reply_fd, ok, sizeof ok) >= 2 && ok[0] == 'o' && ok[1] == 'k') result = QPROF_MARK_OK;
          break;
        }
      }
    }
    close(reply_fd);
  }
  unlink(reply);
  rmdir(dir);
  if (close_after) close(fd);
  return result;
}

#endif /* QPROF_MARK_H */
