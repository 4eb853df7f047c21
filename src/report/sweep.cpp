// SPDX-License-Identifier: Apache-2.0
#include "qprof/report/sweep.hpp"

#include <algorithm>
#include <cmath>

#include "qprof/common/number_text.hpp"
#include "qprof/common/units.hpp"

namespace qprof::report {
using analysis::FigureModel;
using analysis::SweepModel;
namespace {

// A figure's value in words: a size or a duration; a negative intercept keeps its sign.
std::string value_words(const FigureModel& f, double v) {
  const std::string sign = v < 0 ? "-" : "";
  if (f.bytes) return sign + human_bytes(bytes_from_double(std::fabs(v)));
  return sign + human_seconds(std::fabs(v));
}

std::string value_text(const SweepModel& m, double v) {
  return m.integer_values && v == std::floor(v) ? printf_number("%.0f", v) : printf_number("%g", v);
}

Column machine_only(const char* key, Kind kind) {
  Column c = Column::of(key, key, kind);
  c.human = false;
  return c;
}

// Machine columns of a model hold sizes and durations in one column (their unit in `unit`): a
// share-kind column keeps 6 decimals without a unit suffix.
constexpr Kind kRaw = Kind::share;

// Two points: every model passes through both (R² 1 whatever the truth), so the fit says nothing
// of the shape, and a figure predicted elsewhere is a guess.
bool too_few_points(const FigureModel& f) { return f.x.size() < 3; }

std::string r2_text(const FigureModel& f) {
  return too_few_points(f) ? std::to_string(f.x.size()) + " points only" : printf_number("%.3f", f.r2());
}

}  // namespace

const FigureModel* limit_figure(const SweepModel& m, bool rss) {
  const std::initializer_list<const char*> footprint_first{"fit_full_speed", "footprint", "peak_rss"};
  const std::initializer_list<const char*> rss_first{"peak_rss", "fit_full_speed", "footprint"};
  for (const char* key : rss ? rss_first : footprint_first) {
    for (const FigureModel& f : m.figures) {
      if (f.key == key && f.fitted()) return &f;
    }
  }
  return nullptr;
}

std::string formula_words(const FigureModel& f, const std::string& parameter) {
  if (f.power_chosen && f.power) {
    return value_words(f, f.power->coefficient) + " \u00d7 " + parameter + "^" +
           printf_number("%.2f", f.power->exponent);
  }
  if (!f.line) return "";
  const double slope = f.line->slope;
  return value_words(f, f.line->intercept) + (slope < 0 ? " \u2212 " : " + ") + value_words(f, std::fabs(slope)) +
         " \u00d7 " + parameter;
}

std::optional<std::string> solved_words(const SweepModel& m, const SweepModelOptions& o) {
  const FigureModel* f = limit_figure(m, o.rss);
  if (!f || !o.limit) return std::nullopt;
  const std::string limit = human_bytes(*o.limit);
  const std::string model = "(" + f->title + " " + formula_words(*f, m.parameter) + ", " +
                            (too_few_points(*f) ? r2_text(*f) : "R\u00b2 " + r2_text(*f)) + ")";
  const auto x = f->solve(static_cast<double>(*o.limit));
  if (!x) return "no largest " + m.parameter + " for " + limit + ": the model does not rise with it " + model;
  if (*x < 0 || (m.integer_values && *x < 1 && f->x.front() >= 1)) {
    return "no " + m.parameter + " fits " + limit + " " + model;
  }
  const double bound = m.integer_values ? std::floor(*x + 1e-9) : *x;
  return m.parameter + " \u2264 " + value_text(m, bound) + " fit " + limit + " " + model;
}

namespace {

// Every value of the parameter that some figure was run at, in increasing order.
std::vector<double> swept_values(const SweepModel& m) {
  std::vector<double> values;
  for (const FigureModel& f : m.figures) {
    for (double x : f.x) {
      if (std::find(values.begin(), values.end(), x) == values.end()) values.push_back(x);
    }
  }
  std::sort(values.begin(), values.end());
  return values;
}

// Whether a point was run more than once with different results (a spread to show).
bool has_repeats(const SweepModel& m) {
  bool repeated = false;
  for (const FigureModel& f : m.figures) {
    for (std::size_t i = 0; i < f.x.size(); ++i) repeated = repeated || f.low[i] != f.high[i];
  }
  return repeated;
}

// The points: one row per value, a column per figure.
Table points_table(const SweepModel& m) {
  Table points;
  points.name = "sweep_points";
  points.title = "Sweep over " + m.parameter;
  points.columns.push_back(Column::of(m.parameter, m.parameter, m.integer_values ? Kind::count : Kind::text));
  const bool repeated = has_repeats(m);
  for (std::size_t k = 0; k < m.figures.size(); ++k) {
    const FigureModel& f = m.figures[k];
    Column c = Column::of(f.key, f.title, f.bytes ? Kind::bytes : Kind::seconds);
    c.has_spread = repeated;
    // A narrowed text table (compare --sweep) keeps the first figure, the answer, and leaves out
    // the last ones first.
    c.narrow = static_cast<int>(k);
    points.columns.push_back(c);
  }
  for (double v : swept_values(m)) {
    std::vector<Cell> row;
    row.push_back(m.integer_values ? Cell::number(v) : Cell::string(value_text(m, v)));
    for (const FigureModel& f : m.figures) {
      Cell cell;
      for (std::size_t i = 0; i < f.x.size(); ++i) {
        if (f.x[i] != v) continue;
        cell.value = f.y[i];
        cell.min = f.low[i];
        cell.max = f.high[i];
      }
      row.push_back(cell);
    }
    points.rows.push_back(std::move(row));
  }
  if (repeated) points.notes.push_back("repeated runs: the median, then (min\u2013max)");
  return points;
}

// The model table's columns: words for people, the numbers for machines; with --at, the prediction.
std::vector<Column> model_columns(const SweepModel& m, const SweepModelOptions& o) {
  Column title = Column::of("figure", "figure", Kind::text);
  title.machine = false;
  Column r2_words = Column::of("r2", "R\u00b2", Kind::text);
  r2_words.machine = false;
  // Narrowed to a terminal, the model's name goes before a formula is cut: the formula shows it
  // ("a + b × n" is a line, "a × n^k" a power law).
  Column model = Column::of("model", "model", Kind::text);
  model.narrow = 1;
  std::vector<Column> columns = {
      title,
      machine_only("figure", Kind::text),
      model,
      Column::of("fit", "fitted", Kind::text),
      r2_words,
      machine_only("unit", Kind::text),
      machine_only("intercept", kRaw),
      machine_only("slope", kRaw),
      machine_only("coefficient", kRaw),
      machine_only("exponent", kRaw),
      machine_only("r2", kRaw),
      machine_only("line_r2", kRaw),
      machine_only("power_r2", kRaw),
  };
  if (o.at) {
    columns.push_back(Column::of("at", "at " + m.parameter + "=" + value_text(m, *o.at), Kind::text));
    columns.back().machine = false;
    columns.push_back(machine_only("predicted", kRaw));
    columns.push_back(machine_only("predicted_spread", kRaw));
  }
  return columns;
}

// One figure's row of the model table, in model_columns' order.
std::vector<Cell> model_row(const FigureModel& f, const SweepModel& m, const SweepModelOptions& o) {
  std::vector<Cell> row{
      Cell::string(f.title), Cell::string(f.key), Cell{}, Cell{}, Cell{}, Cell::string(f.bytes ? "bytes" : "s")};
  if (f.fitted()) {
    row[2] = Cell::string(f.power_chosen ? "power law" : "linear");
    row[3] = Cell::string(formula_words(f, m.parameter));
    row[4] = Cell::string(r2_text(f));
  } else {
    row[2] = Cell::string("not fitted (one value)");
  }
  auto opt = [](std::optional<double> v) { return v ? Cell::number(*v) : Cell{}; };
  row.push_back(opt(f.line ? std::optional<double>(f.line->intercept) : std::nullopt));
  row.push_back(opt(f.line ? std::optional<double>(f.line->slope) : std::nullopt));
  row.push_back(opt(f.power ? std::optional<double>(f.power->coefficient) : std::nullopt));
  row.push_back(opt(f.power ? std::optional<double>(f.power->exponent) : std::nullopt));
  row.push_back(f.fitted() ? Cell::number(f.r2()) : Cell{});
  row.push_back(opt(f.line ? std::optional<double>(f.line->r2) : std::nullopt));
  row.push_back(opt(f.power ? std::optional<double>(f.power->r2) : std::nullopt));
  if (o.at) {
    if (f.fitted()) {
      const double p = f.predict(*o.at);
      std::string words = value_words(f, p);
      if (f.spread() > 0) words += " \u00b1 " + value_words(f, f.spread());
      row.push_back(Cell::string(words));
      row.push_back(Cell::number(p));
      row.push_back(Cell::number(f.spread()));
    } else {
      row.insert(row.end(), 3, Cell{});
    }
  }
  return row;
}

// The model of each figure, with the notes on how far to trust it.
Table model_table(const SweepModel& m, const SweepModelOptions& o) {
  Table model;
  model.name = "sweep_model";
  model.title = "Model of each figure against " + m.parameter;
  model.columns = model_columns(m, o);
  for (const FigureModel& f : m.figures) model.rows.push_back(model_row(f, m, o));
  model.notes.push_back("power law where it explains more than a line (R\u00b2 higher by over 0.01), else linear");
  const bool two_points = std::any_of(m.figures.begin(), m.figures.end(),
                                      [](const FigureModel& f) { return f.fitted() && too_few_points(f); });
  if (two_points) {
    model.notes.push_back(
        "fitted on 2 points: any line passes through both, so R\u00b2 says nothing and a prediction "
        "is a guess; sweep 3 values or more");
  }
  const bool spread =
      std::any_of(m.figures.begin(), m.figures.end(), [](const FigureModel& f) { return f.spread() > 0; });
  if (o.at && spread)
    model.notes.push_back("\u00b1: half the mean spread (max\u2212min) of the repeated runs at each value");
  return model;
}

// The largest value that fits --limit: a note of the model table and the document's facts.
void add_solved(Document& doc, Table& model, const SweepModel& m, const SweepModelOptions& o) {
  const auto solved = solved_words(m, o);
  if (!solved) return;
  model.notes.push_back(*solved + (o.limit_source.empty() ? "" : " [limit: " + o.limit_source + "]"));
  doc.facts.push_back({machine_only("solved", Kind::text), Cell::string(*solved)});
  if (const FigureModel* f = limit_figure(m, o.rss)) {
    if (const auto x = f->solve(static_cast<double>(*o.limit))) {
      Column c = machine_only("solved_value", kRaw);
      doc.facts.push_back({c, Cell::number(m.integer_values ? std::floor(*x + 1e-9) : *x)});
    }
    doc.facts.push_back({machine_only("limit_bytes", Kind::count), Cell::number(static_cast<double>(*o.limit))});
    doc.facts.push_back({machine_only("solved_figure", Kind::text), Cell::string(f->key)});
  }
}

}  // namespace

void add_sweep_model(Document& doc, const SweepModel& m, const SweepModelOptions& o) {
  doc.tables.push_back(points_table(m));
  Table model = model_table(m, o);
  add_solved(doc, model, m, o);
  doc.tables.push_back(std::move(model));
}

}  // namespace qprof::report
