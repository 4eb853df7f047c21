// SPDX-License-Identifier: Apache-2.0
// Tables people read and tables programs read: one document model (Document → Table → Column,
// Cell), filled from analysis/, and one exporter per output format behind one small
// interface (src/report/*_exporter.cpp), like hyperfine's src/export/.
//
// Human formats (text, Markdown) show bytes in one unit per table (--unit, else MiB below 10 GiB
// and GiB above) named in the header, seconds with 3 decimals, the lowest value of a column
// marked. Machine formats (CSV, JSON) carry exact bytes (or --unit's values, the key says which:
// peak_bytes, peak_mib) and every decoration as a field of its own.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/budgets.hpp"
#include "qprof/analysis/compare.hpp"
#include "qprof/trace/trace.hpp"
#include "qprof/common/units.hpp"

namespace qprof::report {

enum class Format { text, markdown, csv, json };
std::optional<Format> parse_format(std::string_view name);  // text, md, markdown, csv, json

// What a column holds; it decides the form of its numbers in every format.
enum class Kind {
  text,
  bytes,         // a size
  signed_bytes,  // a change of size: shown with its sign
  seconds,       // a duration: its facts in words ("2 min 5 s")
  moment,        // a time from the trace's start: 3 decimals everywhere, so a fact reads as the table row it names
  share,         // a fraction of 1, shown as a percentage
  count,
  flag,  // true / false
};

struct Column {
  std::string key;    // machine name; bytes columns get the unit appended (peak_bytes, peak_mib)
  std::string title;  // header of human formats; bytes columns get the unit appended ("peak MiB")
  Kind kind = Kind::text;
  std::string key_detail;   // appended to the machine key after the unit: "stage_peak_bytes:Calibration"
  bool human = true;        // shown in text and Markdown
  bool machine = true;      // present in CSV and JSON
  bool show_ratio = false;  // text/Markdown: a "ratio" column after this one
  // Machine formats: this column's cells carry these fields (JSON: an object instead of a value;
  // CSV: more columns, KEY_min, KEY_max, KEY_ratio, KEY_lowest).
  bool has_lowest = false;
  bool has_ratio = false;
  bool has_spread = false;
  // Human formats list columns by `order` (stable; machine formats keep the table's order).
  int order = 0;
  // Text narrowed to RenderOptions::text_width: the columns of highest `narrow` are left out
  // first (with their ratio), and a note names them; 0: always shown.
  int narrow = 0;

  static Column of(std::string key, std::string title, Kind kind) {
    Column c;
    c.key = std::move(key);
    c.title = std::move(title);
    c.kind = kind;
    return c;
  }
};

struct Cell {
  std::optional<double> value;     // numbers and flags (0/1); absent: no value ("-", empty, null)
  std::string text;                // Kind::text
  std::optional<double> min, max;  // spread over repeated runs (shown when they differ)
  std::optional<double> ratio;     // to the first row
  bool lowest = false;
  bool summed = false;  // a sum of other rows: never the lowest, in no format
  std::string note;     // human formats only: shown after the value, in parentheses

  static Cell number(double v) {
    Cell c;
    c.value = v;
    return c;
  }
  static Cell bytes(std::optional<Bytes> b) { return b ? number(static_cast<double>(*b)) : Cell{}; }
  static Cell string(std::string s) {
    Cell c;
    c.text = std::move(s);
    return c;
  }
};

struct Table {
  std::string name;   // JSON key of its rows: "stages", "peaks", "comparison"
  std::string title;  // caption of human formats
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> notes;  // human formats: lines under the table
  std::size_t rows_left_out = 0;   // past kMaxTableRows; JSON says it as "<name>_rows_left_out"
};

// The most rows a table of one row per record (stages, directories) holds: a trace of 900 000
// stages took 2.5 GB to report and no one reads such a table; the rest is counted and said.
inline constexpr std::size_t kMaxTableRows = 10000;
// Records `left` more rows than the table holds: its count and a note "… more <what> not shown".
void leave_out_rows(Table& table, std::size_t left, std::string_view what);

// A few facts (label, value) and tables. CSV holds one table: `csv_table`.
struct Document {
  struct Fact {
    Column column;
    Cell cell;
  };
  std::vector<Fact> facts;
  std::vector<Table> tables;
  std::size_t csv_table = 0;
};

struct RenderOptions {
  std::optional<Unit> unit;  // nullopt: human formats choose per table, machine formats use bytes
  // Text: a table wider than this many columns leaves out its columns of highest Column::narrow
  // until it fits, and says which under the table, then `wider` ("--wide shows them"). 0: any width.
  std::size_t text_width = 0;
  std::string wider{};
  // The width the note names, where the caller prefixes every line (0: text_width).
  std::size_t named_width = 0;
};

class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual std::string render(const Document& doc, const RenderOptions& options) const = 0;
};

// The table CSV writes (`--table`): "facts" (the run's facts as one row, a column each: CPU,
// I/O, cgroup, limit, …) or the name of one of the document's tables. False, and the document
// unchanged, when it has no such table; table_names() lists what it has.
bool choose_csv_table(Document& doc, std::string_view name);
std::vector<std::string> table_names(const Document& doc);

std::unique_ptr<Exporter> make_exporter(Format format);
std::string render(const Document& doc, Format format, const RenderOptions& options = {});

// ── Documents from analysis ─────────────────────────────────────────────────────────────────

// The stages of a trace: name, start, end, duration, share of the run, and the metric's peak
// inside, at start, at end, and their difference. A stage that never ended is marked.
Table stage_table(const trace::Trace& trace, analysis::Metric metric);
// One row per metric the trace has: its peak, when, in which stage, what it is.
Table peaks_table(const trace::Trace& trace);
// `qprof report`: facts of the run, its peaks and its stages (CSV: the stages). The stage table's
// metric: `metric`, else the default (analysis::choose_metric: the footprint where recorded,
// else Σ RSS, and then a fact says why).
Document trace_report(const trace::Trace& trace, std::optional<analysis::Metric> metric = std::nullopt);
// Where the default metric fell back to Σ RSS (analysis::MetricChoice::fallback, non-empty): a
// fact that says why, in every format, once.
void say_metric_fallback(Document& d, const std::string& fallback);
// The memory limit the header recorded, the peak's share of it and the headroom (watch_tables.cpp).
void add_limit_facts(Document& d, const trace::Trace& trace);
// One row per --watch-dir directory: sizes at start, peak, growth, end, free space; nullopt without.
std::optional<Table> watched_dirs_table(const trace::Trace& trace);

// The verdict of a budget on one row of a comparison; `text` empty: not checked.
struct RowBudget {
  bool over = false;
  std::string text;  // "ok", "over --max-peak by 124.0 MiB (+4.8%)", "+5.6% over the baseline"
};

// `qprof compare`: one row per entry, the lowest value of each column marked, ratios to the first
// row (text/Markdown show those of duration and of `c.metric`'s peak). `budgets` (one per row)
// adds a budget column when one of them was checked.
Document comparison_document(const std::vector<analysis::CompareEntry>& entries, const analysis::Comparison& c,
                             const std::vector<RowBudget>& budgets = {});

// `qprof compare --pivot ROWS,COLUMNS`: one row per ROW, one column per COLUMN, each cell the
// peak of `c.metric` of the entry labelled "ROW/COLUMN" (split at the last '/'), and a last
// column naming the lowest COLUMN of each row. Fails for a label that is not ROW/COLUMN, two
// entries of one cell, or a comparison without the metric.
struct PivotAxes {
  std::string rows;     // "model"
  std::string columns;  // "method"
};
Result<Document> pivot_document(const std::vector<analysis::CompareEntry>& entries, const analysis::Comparison& c,
                                const PivotAxes& axes);

// ── Small pieces the exporters share ────────────────────────────────────────────────────────

// The unit a human table shows its sizes in.
Unit table_unit(const Table& table, const RenderOptions& options);
// A column's machine key, with its unit: "peak_bytes", "peak_mib", "duration_s".
std::string machine_key(const Column& c, const RenderOptions& options);
// A number in machine formats: bytes as whole numbers, others rounded to 6 decimals.
double machine_value(const Column& c, double value, const RenderOptions& options);
// A cell as human formats show it, without decorations: "2580.5", "+40.0", "12.300", "21.4%".
std::string human_value(const Column& c, double value, Unit unit);
std::string human_title(const Column& c, Unit unit);
// Text width of UTF-8 (code points).
std::size_t display_width(std::string_view s);

// ── Peak one-liners (`qprof peak`) ──────────────────────────────────────────────────────────

struct PeakLine {
  std::string file;
  analysis::Metric metric = analysis::Metric::rss;
  std::optional<analysis::Peak> peak;  // nullopt: the file has no such peak (an error line)
  std::optional<Seconds> relative_t;
  std::string stage_scope;                    // --stage NAME, empty for the whole run
  std::vector<std::string> where;             // stages holding the peak
  std::vector<analysis::ChildPeak> children;  // --children
  std::string error;                          // why there is no peak
  std::uint64_t unread_processes = 0;         // the trace's UNREAD: the figure misses that many processes
  std::vector<std::string> oom_kills;         // the trace's OOM kills, in words (trace/oom.hpp)
  std::string metric_fallback;                // why the default is Σ RSS here (analysis::MetricChoice)
};

// "run.dat has no pss (it has: rss, kernel_process)".
std::string missing_metric(const trace::Trace& trace, analysis::Metric m);

// The peak of `metric` in a trace, inside every run of `stage` when it is not empty, with the
// stages that hold it and, with `children`, each process's peak. When there is none, `error`
// says why: "run.dat has no pss (it has: rss)", "run.dat has no stage 'X' (stages: 'A', 'B')".
PeakLine peak_line(const trace::Trace& trace, analysis::Metric metric, const std::string& stage = "",
                   bool children = false);

// "1523.4 MiB" (3 decimals with `mprof_style`, as mprof peak prints; whole bytes for B).
std::string peak_value(Bytes b, Unit unit, bool mprof_style);
// With `with_file`, mprof peak's lines: "FILE\t1523.400 MiB" and "  Child PID\t\t\t12.000 MiB";
// without, the value alone ("1523.4 MiB") and the children's lines. Lines without a peak are
// left out (their errors go to stderr).
std::string peak_lines(const std::vector<PeakLine>& lines, Unit unit, bool with_file);
// JSON (nlohmann): an array of objects, or the one object when `single`.
std::string peak_json(const std::vector<PeakLine>& lines, Unit unit, bool single);

// ── Budgets ─────────────────────────────────────────────────────────────────────────────────

// "peak RSS 4.52 GiB exceeds the budget of 4.00 GiB by 530.0 MiB (+13.0%), at 12.3 s, in stage
// 'Calibration'", or "peak RSS 3.10 GiB is within the budget of 4.00 GiB".
std::string budget_message(const trace::Trace& trace, const analysis::BudgetCheck& check);

}  // namespace qprof::report
