// SPDX-License-Identifier: Apache-2.0
#include "qprof/runs/sweep_runs.hpp"

#include <exception>

#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/stdout_to_stderr.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/report.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/record/signal_relay.hpp"
#include "qprof/runs/profiled_run.hpp"
#include "qprof/runs/scoped_env.hpp"
#include "qprof/runs/stop_latch.hpp"

namespace qprof::runs {
using analysis::fill_placeholders;
using analysis::find_peak;
using analysis::Metric;
using analysis::point_name;
using analysis::SweepPoint;
using analysis::trace_duration;

std::string sweep_trace_path(const std::string& dir, const SweepPoint& point, int repeat, int repeats) {
  return dir + "/" + point_name(point) + (repeats > 1 ? ",repeat=" + std::to_string(repeat) : "") + ".dat";
}

namespace {

std::string point_words(const SweepPoint& p) {
  std::string out;
  for (const auto& [name, value] : p) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

// The command's environment at a point: --env's assignments, put back when the result goes.
std::vector<std::unique_ptr<ScopedEnv>> point_env(const SweepRequest& o, const SweepPoint& point) {
  std::vector<std::unique_ptr<ScopedEnv>> env;
  for (const std::string& e : o.env) {
    const auto eq = e.find('=');
    env.push_back(std::make_unique<ScopedEnv>(e.substr(0, eq), fill_placeholders(e.substr(eq + 1), point)));
  }
  return env;
}

// --fit at one point: qprof fit on the same command, its JSON beside the trace (where compare
// --sweep finds it again), a line said. Returns fit's exit status (0, or why it stopped).
int fit_point(const SweepRequest& o, const std::vector<std::string>& command, SweepRun& run, const std::string& prefix,
              const Say& say) {
  fit::FitOptions options = o.fit_options;
  options.command = command;
  fit::FitReport r;
  {
    const auto env = point_env(o, run.point);
    const StdoutToStderr keep_stdout_for_the_table;
    r = fit::run_fit(options);
  }
  const std::string json_path = fit::saved_result_path(run.path);
  std::string line = prefix + ": fit: ";
  try {
    if (Result<void> written = write_output(json_path, fit::json_report(r)); !written) {
      say(terminal_text(json_path) + ": " + terminal_text(written.failure().message));
    }
  } catch (const std::exception& e) {
    say(terminal_text(json_path) + ": " + terminal_text(e.what()));
  }
  if (r.findings.runs || r.findings.full_speed) {
    run.fit =
        fit::SavedLimits{r.findings.runs ? std::optional<Bytes>(r.findings.runs->limit) : std::nullopt,
                         r.findings.full_speed ? std::optional<Bytes>(r.findings.full_speed->limit) : std::nullopt};
    if (run.fit->runs_in) line += "runs in " + human_bytes(*run.fit->runs_in);
    if (run.fit->full_speed)
      line += std::string(run.fit->runs_in ? ", " : "") + "full speed " + human_bytes(*run.fit->full_speed);
    const std::size_t runs = r.probes.size() + (r.baseline ? 1 : 0);
    line += " (" + std::to_string(runs) + (runs == 1 ? " run)" : " runs)");
  } else {
    line += "nothing found";
  }
  if (r.end != fit::FitEnd::searched && r.end != fit::FitEnd::runs_max) line += "; " + r.message;
  say(line + " -> " + json_path);
  return r.end == fit::FitEnd::searched || r.end == fit::FitEnd::runs_max ? 0 : r.status;
}

// The progress line: which point, how it ended, its figures, its trace.
std::string progress_line(const SweepRun& run, const std::string& prefix) {
  std::string line = prefix + (run.status == 0 ? ": ok" : ": FAILED, exit status " + std::to_string(run.status));
  if (run.trace) {
    line += ", " + human_seconds(trace_duration(*run.trace));
    if (const auto f = find_peak(*run.trace, Metric::footprint)) line += ", footprint " + human_bytes(f->bytes);
    if (const auto p = find_peak(*run.trace, Metric::rss)) line += ", \u03a3 RSS peak " + human_bytes(p->bytes);
  }
  return line + " -> " + run.path + (run.problem.empty() ? "" : " (" + run.problem + ")");
}

// What one run left for the rest of the sweep: whether to go on, the status to end with.
struct RunEnd {
  bool stop = false;
  int failure = 0;      // the run's (or its fit's) non-zero status
  int interrupted = 0;  // a stop signal ended the run or its fit: the status to exit with
};

// One run of the command at a point (and, with --fit, fit after it), and its progress line.
// Fails where the command cannot be started: the same at every point.
Result<RunEnd> run_point(const SweepRequest& o, SweepRun& run, const std::string& prefix, const Say& say) {
  RunRequest request{o.run, true, true, o.speaker};
  record::RunOptions& options = request.options;
  options.command.clear();
  for (const std::string& a : o.command) options.command.push_back(fill_placeholders(a, run.point));
  Result<std::string> created = create_fresh(run.path);  // never through a file or link already at the name
  if (!created) return Failure{terminal_text(created.failure().message)};
  run.path = *created;
  options.output = run.path;
  options.quiet = true;
  options.live = false;
  Result<ProfiledRun> ran = [&] {
    const auto env = point_env(o, run.point);
    return run_and_read(request);
  }();
  if (!ran) {
    const int status = ran.failure().status;
    return Failure{"the command could not be started; no more runs", status != 0 ? status : kFailureStatus};
  }
  run.status = ran->status;
  if (ran->state == TraceState::incomplete) {
    run.problem = "incomplete: " + ran->problem;
  } else if (ran->state == TraceState::read) {
    run.trace = std::make_unique<trace::Trace>(std::move(ran->trace));
  } else {
    run.problem = "unreadable: " + ran->problem;
  }
  say(progress_line(run, prefix));
  RunEnd end;
  end.failure = run.status;
  // A stop signal the command died of, or one qprof passed on that the command outlived.
  const int sig = ran->stop_signal != 0 ? ran->stop_signal : record::received_stop_signal();
  if (sig != 0) end.interrupted = is_stop_signal(run.status - 128) ? run.status : 128 + sig;
  if (o.fit && run.status == 0 && sig == 0 && run.trace) {
    end.failure = fit_point(o, options.command, run, prefix, say);
    if (is_stop_signal(end.failure - 128)) end.interrupted = end.failure;
  }
  if (end.interrupted != 0) say("interrupted; no more runs");
  if (run.status != 0 && o.stop_on_failure) say("--stop-on-failure: no more runs");
  end.stop = end.interrupted != 0 || (run.status != 0 && o.stop_on_failure);
  return end;
}

}  // namespace

Result<SweepRuns> run_sweep(const SweepRequest& o, const Say& say) {
  const StopLatch latch;  // a signal between two runs ends the sweep, not qprof
  const std::vector<SweepPoint> points = analysis::sweep_grid(o.parameters);
  const std::size_t total = points.size() * static_cast<std::size_t>(o.repeat);
  SweepRuns done;
  bool stopped = false;
  for (std::size_t k = 0; k < points.size() && !stopped && done.interrupted == 0; ++k) {
    for (int r = 1; r <= o.repeat && !stopped; ++r) {
      SweepRun run;
      run.point = points[k];
      run.repeat = r;
      run.path = sweep_trace_path(o.output_dir, points[k], r, o.repeat);
      std::string prefix =
          "[" + std::to_string(done.runs.size() + 1) + "/" + std::to_string(total) + "] " + point_words(points[k]);
      if (o.repeat > 1) prefix += " (repeat " + std::to_string(r) + ")";
      if (const int sig = latch.signal(); sig != 0) {
        say("interrupted by " + record::signal_name(sig) + "; no more runs");
        done.interrupted = 128 + sig;
        break;
      }
      const Result<RunEnd> end = run_point(o, run, prefix, say);
      if (!end) return end.failure();
      if (end->failure != 0 && done.first_failure == 0) done.first_failure = end->failure;
      if (end->interrupted != 0) done.interrupted = end->interrupted;
      stopped = end->stop;
      done.runs.push_back(std::move(run));
    }
  }
  return done;
}

}  // namespace qprof::runs
