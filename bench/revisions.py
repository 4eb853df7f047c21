# SPDX-License-Identifier: Apache-2.0
"""Builds of qprof at git revisions, side by side (for compare_revisions.py and
startup_revisions.py): each revision is checked out in a temporary worktree and built there."""
import contextlib
import os
import shutil
import subprocess
import tempfile


def repo_root():
    return subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True, capture_output=True,
                          text=True).stdout.strip()


@contextlib.contextmanager
def builds(revisions, build_type, bench, target, prepare=None):
    """Yields {revision: build folder} with `target` built at each; the worktrees and builds are
    removed afterwards. prepare(revision, source folder), when given, may change the sources
    before they are built (startup_steps.py adds its timestamps)."""
    repo = repo_root()
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    with tempfile.TemporaryDirectory(prefix="qprof-revs-") as root:
        trees = []
        try:
            out = {}
            for rev in revisions:
                src = os.path.join(root, "src-" + rev)
                subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", "-f", src, rev], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                trees.append(src)
                if prepare:
                    prepare(rev, src)
                out[rev] = os.path.join(root, "build-" + rev)
                subprocess.run(["cmake", "-S", src, "-B", out[rev], "-DCMAKE_BUILD_TYPE=" + build_type,
                                "-DQPROF_BUILD_TESTS=OFF", "-DQPROF_BUILD_BENCH=" + ("ON" if bench else "OFF"),
                                *launcher], check=True, stdout=subprocess.DEVNULL)
                # ccache keyed on paths relative to the worktree: a revision built before is a cache hit.
                env = dict(os.environ, CCACHE_BASEDIR=src, CCACHE_NOHASHDIR="1")
                subprocess.run(["cmake", "--build", out[rev], "-j2", "--target", target], check=True,
                               stdout=subprocess.DEVNULL, env=env)
            yield out
        finally:
            for src in trees:
                subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", src],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
