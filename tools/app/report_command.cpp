// `uringsim report DIR`: one self-contained HTML page (inline CSS, gnuplot SVG inlined, nothing
// fetched from the network) from a `compare` or `sweep` output directory: inputs, tables of means
// with 95 % intervals, and plots. It only reads what those commands wrote; nothing is re-simulated.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/io.hpp"
#include "analysis/stats.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/json_input.hpp"
#include "tools/app/read_file.hpp"
#include "tools/app/report_util.hpp"
#include "tools/app/study_metrics.hpp"
#include "tools/app/subprocess.hpp"
#include "uringsim_version.hpp"

namespace uringsim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using report::html_escape;
using report::InputError;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(double x) {
  if (!std::isfinite(x)) return "n/a";
  const double a = std::abs(x);
  if (a >= 1000) return fmt::format("{:.0f}", x);
  if (a >= 10) return fmt::format("{:.2f}", x);
  return fmt::format("{:.4g}", x);
}

// With one replication (or an unknown spread) there is no interval to show.
std::string mean_ci(double mean, double hw) {
  if (!std::isfinite(mean)) return "–";
  if (!std::isfinite(hw)) return num(mean);
  return num(mean) + " ± " + num(hw);
}

// Data values for gnuplot: shortest round-trip text; NaN marks a missing point.
std::string gnum(double x) {
  return std::isfinite(x) ? fmt::format("{}", x) : "NaN";
}

std::string join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? sep : "") + xs[i];
  return out;
}

double number_or_nan(const json& j) {
  return j.is_number() ? j.get<double>() : kNaN;
}

// A string in a run's results.json, "" where it is absent or not a string (the page then says less).
std::string string_at(const json& j, const char* pointer) {
  const json::json_pointer p(pointer);
  return j.contains(p) && j.at(p).is_string() ? j.at(p).get<std::string>() : std::string();
}

// Everything the page shows, gathered from either kind of directory.
struct Page {
  std::string kind;  // "compare" or "sweep"
  std::string scenario_path, scenario_name, results_version;
  std::vector<std::pair<std::string, std::string>> inputs;  // label, HTML
  std::string table;                                        // HTML
  std::vector<std::string> variants;
  // Per variant, the results.json of the runs the per-run plots (CDF, CPU, time series) show.
  std::map<std::string, std::vector<json>> runs;
  std::string runs_desc;  // which runs those are, for the captions
  // Sweep only: per series (variant and the other grid values), x label -> (mean, half width, n).
  struct SeriesPoint {
    std::string x;
    double tput, tput_hw, p99, p99_hw;
  };
  std::vector<std::pair<std::string, std::vector<SeriesPoint>>> series;
  // Compare only: per metric (label), per variant (mean, 95 % half width; NaN when unknown).
  struct MetricCi {
    std::string label;
    std::vector<std::tuple<std::string, double, double>> by_variant;
  };
  std::vector<MetricCi> metric_cis;
  std::string x_path;
  std::vector<std::string> x_order;  // the swept values in grid order
};

std::string table_html(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& highlight = {}) {
  std::string h = "<div class=\"scroll\"><table class=\"data\"><thead><tr>";
  for (const auto& c : header) h += "<th>" + html_escape(c) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    h += r < highlight.size() && highlight[r] ? "<tr class=\"sig\">" : "<tr>";
    for (std::size_t c = 0; c < rows[r].size(); ++c)
      h += (c < 2 ? "<td>" : "<td class=\"n\">") + html_escape(rows[r][c]) + "</td>";
    h += "</tr>\n";
  }
  return h + "</tbody></table></div>\n";
}

void load_runs(const fs::path& dir, const std::string& variant, const std::vector<fs::path>& rel, Page& pg) {
  for (const auto& r : rel) {
    const fs::path p = dir / r;
    if (!fs::exists(p)) throw InputError(p.string() + ": missing (results.json of a run of " + variant + ")");
    json res = read_json_file(p);
    const json::json_pointer bins("/latency_us/bins");
    if (res.contains(bins))
      if (const auto problem = report::bins_problem(res.at(bins)); !problem.empty())
        throw InputError(p.string() + ": latency_us.bins" + problem);
    pg.runs[variant].push_back(std::move(res));
  }
}

void load_compare(const fs::path& dir, Page& pg) {
  const fs::path file = dir / "compare.json";
  const json doc = read_json_file(file);
  const JsonIn cj(doc, file.string());
  pg.kind = "compare";
  pg.scenario_path = cj["scenario"].string();
  const JsonIn variants = cj["variants"];
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const auto s = variants[i].string();
    pg.variants.push_back(s.empty() ? "base" : s);  // compare names the no-variant run "base"
  }
  if (pg.variants.empty()) variants.fail("is empty");
  const JsonIn reps_in = cj["reps"];
  const std::int64_t reps = reps_in.integer();
  if (reps < 1 || reps > 100000) reps_in.fail("expected an integer in [1, 100000]");
  std::vector<std::string> seeds;
  if (const auto s = cj.find("seeds"))
    for (std::size_t i = 0; i < s->size(); ++i) seeds.push_back((*s)[i].raw().dump());
  const auto confidence = cj.find("confidence");
  pg.inputs = {{"command", "<code>uringsim compare</code>"},
               {"variants", html_escape(join(pg.variants, ", ")) +
                                " (baseline: " + html_escape(pg.variants.front()) + ")"},
               {"replications", std::to_string(reps) + " per variant"},
               {"seeds", html_escape(join(seeds, ", "))},
               {"confidence", fmt::format("{:g}", 100 * (confidence ? confidence->number() : 0.95)) +
                                  " % (Student t; differences: Welch)"}};

  // Known metrics in a readable order, then any others compare.json holds.
  std::vector<std::string> order = {"/throughput/ops_per_s", "/latency_us/mean",
                                    "/latency_us/p50",       "/latency_us/p99",
                                    "/cpu/total_pct",        "/profile/spin_slowpath_pct"};
  const JsonIn metrics = cj["metrics"];
  for (const auto& ptr : metrics.keys())
    if (std::find(order.begin(), order.end(), ptr) == order.end()) order.push_back(ptr);
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> sig;
  for (const auto& ptr : order) {
    const auto m = metrics.find(ptr);
    if (!m) continue;
    const auto label_in = m->find("label");
    const std::string label = label_in ? label_in->string() : ptr;
    const JsonIn by_variant = (*m)["by_variant"];
    Page::MetricCi mci{label, {}};
    for (const auto& v : pg.variants) {
      const auto bv = by_variant.find(v);
      if (!bv) continue;
      const double mean = (*bv)["mean"].number_or_nan();
      // dump_json writes an infinite half width (one replication) as null.
      const auto hw_in = bv->find("ci95_half_width");
      const double hw = hw_in ? hw_in->number_or_nan() : kNaN;
      std::string diff = "baseline", rel, s;
      bool is_sig = false;
      if (const auto d = bv->find("diff_vs_baseline")) {
        const double dv = (*d)["diff"].number_or_nan();
        const auto dhw = d->find("ci95_half_width");
        diff = (dv >= 0 ? "+" : "") + mean_ci(dv, dhw ? dhw->number_or_nan() : kNaN);
        const auto rp_in = d->find("relative_pct");
        const double rp = rp_in ? rp_in->number_or_nan() : kNaN;
        rel = std::isfinite(rp) ? fmt::format("{:+.1f} %", rp) : "";
        const auto sig_in = d->find("significant");
        is_sig = sig_in && sig_in->boolean();
        s = is_sig ? "yes" : "no";
      }
      const auto values = bv->find("values");
      const std::size_t n = values ? values->size() : 0;
      rows.push_back({label, v, std::to_string(n), mean_ci(mean, hw), diff, rel, s});
      sig.push_back(is_sig);
      mci.by_variant.emplace_back(v, mean, hw);
    }
    if (!mci.by_variant.empty()) pg.metric_cis.push_back(std::move(mci));
  }
  pg.table = table_html({"metric", "variant", "n", "mean ± 95% CI",
                         "diff vs " + pg.variants.front() + " ± 95% CI", "relative", "significant"},
                        rows, sig) +
             "<p class=\"meta\">Highlighted rows differ significantly from the baseline (the 95 % "
             "interval of the difference excludes 0).</p>\n";
  for (const auto& v : pg.variants) {
    std::vector<fs::path> rel;
    for (std::int64_t i = 0; i < reps; ++i)
      rel.push_back(fs::path("runs") / v / ("rep" + std::to_string(i)) / "results.json");
    load_runs(dir, v, rel, pg);
  }
  pg.runs_desc = fmt::format(
      "CPU and latency over the {} replications of each variant; time series from replication 0", reps);
}

// Columns of sweep.csv besides the grid columns, which sit between "seed" and the metrics.
const std::vector<std::string>& sweep_metric_columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> v;
    for (const auto& m : study_metrics()) v.push_back(m.column);
    return v;
  }();
  return c;
}

void load_sweep(const fs::path& dir, Page& pg) {
  pg.kind = "sweep";
  const fs::path file = dir / "sweep.csv";
  const std::string fname = file.string();
  const auto csv = report::parse_csv(read_text_file(file), fname);
  auto col = [&](const std::string& name) {
    const auto it = std::find(csv.header.begin(), csv.header.end(), name);
    if (it == csv.header.end()) throw InputError(fname + ":1: missing column \"" + name + "\"");
    return static_cast<std::size_t>(it - csv.header.begin());
  };
  (void)col("point");  // a per-run index: replications of one grid point have distinct ones
  const std::size_t c_variant = col("variant"), c_rep = col("rep"), c_seed = col("seed"),
                    c_results = col("results");
  std::vector<std::size_t> c_metric;
  for (const auto& m : sweep_metric_columns()) c_metric.push_back(col(m));
  if (c_metric.front() <= c_seed)
    throw InputError(fname + ":1: grid columns must sit between seed and metrics");
  std::vector<std::string> grid_paths(csv.header.begin() + static_cast<long>(c_seed) + 1,
                                      csv.header.begin() + static_cast<long>(c_metric.front()));
  if (grid_paths.empty()) throw InputError(fname + ":1: no grid column between \"seed\" and the metrics");
  if (csv.rows.empty()) throw InputError(fname + ": no rows");

  // sweep.json adds the scenario path and the grids as given; the CSV alone is enough otherwise.
  const fs::path sfile = dir / "sweep.json";
  std::map<std::string, std::vector<std::string>> grid_values;  // path -> values in grid order
  std::int64_t reps_declared = 0;
  if (fs::exists(sfile)) {
    const json doc = read_json_file(sfile);
    const JsonIn sj(doc, sfile.string());
    if (const auto s = sj.find("scenario")) pg.scenario_path = s->string();
    if (const auto r = sj.find("reps")) reps_declared = r->integer();
    if (const auto grids = sj.find("grids"))
      for (std::size_t i = 0; i < grids->size(); ++i) {
        const JsonIn g = (*grids)[i];
        const JsonIn values = g["values"];
        auto& out = grid_values[g["path"].string()];
        for (std::size_t k = 0; k < values.size(); ++k)
          out.push_back(values[k].raw().is_string() ? values[k].string() : values[k].raw().dump());
      }
  }

  // Aggregate the tidy rows per grid point (its grid values) and variant, in the order they first
  // appear; the replications of a point differ only in rep and seed.
  struct Group {
    std::string variant;
    std::vector<std::string> grid;
    std::vector<std::vector<double>> metric;           // per metric column, one value per rep
    std::vector<std::pair<int, std::string>> results;  // (rep, results path)
  };
  std::vector<Group> groups;
  std::map<std::pair<std::vector<std::string>, std::string>, std::size_t> index;
  std::map<std::string, std::size_t> last_group;  // variant -> its last point, for the per-run plots
  std::set<std::string> seeds;
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    const auto& row = csv.rows[r];
    const std::string where = fname + ":" + std::to_string(csv.lines[r]);
    std::vector<std::string> grid;
    for (std::size_t k = 0; k < grid_paths.size(); ++k) grid.push_back(row[c_seed + 1 + k]);
    const auto key = std::make_pair(grid, row[c_variant]);
    if (!index.count(key)) {
      index[key] = groups.size();
      groups.push_back(Group{row[c_variant], grid, std::vector<std::vector<double>>(c_metric.size()), {}});
      if (std::find(pg.variants.begin(), pg.variants.end(), row[c_variant]) == pg.variants.end())
        pg.variants.push_back(row[c_variant]);
    }
    auto& g = groups[index[key]];
    for (std::size_t m = 0; m < c_metric.size(); ++m) {
      const std::string& s = row[c_metric[m]];
      if (s.empty()) continue;  // metric absent in that run (e.g. no profile)
      try {
        std::size_t used = 0;
        const double x = std::stod(s, &used);
        if (used != s.size()) throw std::invalid_argument(s);
        g.metric[m].push_back(x);
      } catch (const std::exception&) {
        throw InputError(where + ": column \"" + csv.header[c_metric[m]] + "\": not a number: \"" + s + "\"");
      }
    }
    int rep = 0;
    try {
      rep = std::stoi(row[c_rep]);
    } catch (const std::exception&) {
      throw InputError(where + ": column \"rep\": not an integer: \"" + row[c_rep] + "\"");
    }
    if (row[c_results].empty()) throw InputError(where + ": column \"results\" is empty");
    g.results.emplace_back(rep, row[c_results]);
    last_group[row[c_variant]] = index[key];
    seeds.insert(row[c_seed]);
  }

  // The table: one row per point and variant.
  std::vector<std::string> header = {"variant"};
  header.insert(header.end(), grid_paths.begin(), grid_paths.end());
  header.insert(header.end(), {"n", "throughput (ops/s)", "latency mean (us)", "p50 (us)", "p99 (us)",
                               "cpu (%)", "spin slow path (%)"});
  std::vector<std::vector<std::string>> rows;
  std::size_t max_n = 0;
  for (const auto& g : groups) {
    std::vector<std::string> row = {g.variant};
    row.insert(row.end(), g.grid.begin(), g.grid.end());
    row.push_back(std::to_string(g.results.size()));
    max_n = std::max(max_n, g.results.size());
    for (const auto& xs : g.metric) {
      if (xs.empty()) {
        row.push_back("–");
        continue;
      }
      const auto ci = analysis::student_t_ci(xs);
      row.push_back(mean_ci(ci.mean, ci.half_width));
    }
    rows.push_back(std::move(row));
  }
  pg.table = table_html(header, rows);

  // Series for the plots vs the first grid path: one per variant and combination of the other grids.
  pg.x_path = grid_paths.front();
  for (const auto& v : grid_values[pg.x_path]) pg.x_order.push_back(v);
  for (const auto& g : groups) {
    if (std::find(pg.x_order.begin(), pg.x_order.end(), g.grid.front()) == pg.x_order.end())
      pg.x_order.push_back(g.grid.front());
    std::string name = g.variant;
    for (std::size_t k = 1; k < grid_paths.size(); ++k) name += ", " + grid_paths[k] + "=" + g.grid[k];
    auto it =
        std::find_if(pg.series.begin(), pg.series.end(), [&](const auto& s) { return s.first == name; });
    if (it == pg.series.end()) it = pg.series.insert(pg.series.end(), {name, {}});
    auto stat = [](const std::vector<double>& xs) {
      if (xs.empty()) return std::make_pair(kNaN, kNaN);
      const auto ci = analysis::student_t_ci(xs);
      return std::make_pair(ci.mean, std::isfinite(ci.half_width) ? ci.half_width : 0.0);
    };
    const auto [t, thw] = stat(g.metric[0]);
    const auto [p, phw] = stat(g.metric[3]);
    it->second.push_back({g.grid.front(), t, thw, p, phw});
  }

  std::vector<std::string> grid_desc;
  for (const auto& p : grid_paths) {
    std::vector<std::string> vals = grid_values[p];
    if (vals.empty())  // no sweep.json: the values seen in the CSV
      for (const auto& g : groups) {
        const auto& x = g.grid[static_cast<std::size_t>(&p - grid_paths.data())];
        if (std::find(vals.begin(), vals.end(), x) == vals.end()) vals.push_back(x);
      }
    grid_desc.push_back("<code>" + html_escape(p) + "</code> = " + html_escape(join(vals, ", ")));
  }
  pg.inputs = {
      {"command", "<code>uringsim sweep</code>"},
      {"grids", join(grid_desc, "<br>")},
      {"variants", html_escape(join(pg.variants, ", "))},
      {"replications", std::to_string(reps_declared > 0 ? reps_declared : static_cast<std::int64_t>(max_n)) +
                           " per point and variant"},
      {"points", std::to_string(groups.size()) + " (grid point × variant), " +
                     std::to_string(csv.rows.size()) + " runs"},
      {"seeds", html_escape(join(std::vector<std::string>(seeds.begin(), seeds.end()), ", "))}};

  std::vector<std::string> shown;
  for (const auto& v : pg.variants) {
    const auto& g = groups[last_group[v]];
    auto res = g.results;
    std::sort(res.begin(), res.end());
    std::vector<fs::path> rel;
    for (const auto& [rep, path] : res) rel.push_back(path);
    load_runs(dir, v, rel, pg);
    std::string where;
    for (std::size_t k = 0; k < grid_paths.size(); ++k)
      where += (k ? ", " : "") + grid_paths[k] + "=" + g.grid[k];
    shown.push_back(v + " at " + where);
  }
  pg.runs_desc = "Runs shown: " + join(shown, "; ") +
                 ". CPU and latency over the replications there; time series from the first";
}

// ---- plots -------------------------------------------------------------------------------------

struct Figure {
  std::string id, svg, caption;
  std::string data;  // the gnuplot data blocks plotted, shown under the figure
};

// A gnuplot datablock named `name` with one row per entry.
std::string datablock(const std::string& name, const std::vector<std::string>& rows) {
  return "$" + name + " << EOD\n" + join(rows, "\n") + (rows.empty() ? "" : "\n") + "EOD\n";
}

bool all_numeric(const std::vector<std::string>& xs) {
  for (const auto& x : xs) {
    try {
      std::size_t used = 0;
      (void)std::stod(x, &used);
      if (used != x.size()) return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  return !xs.empty();
}

// Throughput or p99 against the first grid path, one line per series, CI error bars when reps > 1.
Figure sweep_plot(report::Gnuplot& gp, const Page& pg, bool p99) {
  const bool numeric = all_numeric(pg.x_order);
  bool errors = false;
  std::string data, plot;
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
  double ymin = xmin, ymax = -xmin, ymin_pos = xmin;  // over the points and their error bars
  std::vector<double> peaks;
  for (std::size_t s = 0; s < pg.series.size(); ++s) {
    std::vector<std::pair<double, std::string>> pts;
    double peak = 0;
    for (const auto& p : pg.series[s].second) {
      const double y = p99 ? p.p99 : p.tput, hw = p99 ? p.p99_hw : p.tput_hw;
      errors = errors || hw > 0;
      if (std::isfinite(y)) {
        const double e = std::isfinite(hw) ? hw : 0;
        ymin = std::min(ymin, y - e);
        ymax = std::max(ymax, y + e);
        if (y > 0) ymin_pos = std::min(ymin_pos, y - e > 0 ? y - e : y);
        peak = std::max(peak, y);
      }
      const auto pos = std::find(pg.x_order.begin(), pg.x_order.end(), p.x) - pg.x_order.begin();
      const double x = numeric ? std::stod(p.x) : static_cast<double>(pos);
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      pts.emplace_back(x, gnum(x) + " " + gnum(y) + " " + gnum(hw) + " " + report::gp_quote(p.x));
    }
    std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> rows;
    for (const auto& [x, r] : pts) rows.push_back(r);
    data += datablock("s" + std::to_string(s), rows);
    peaks.push_back(peak);
  }
  for (std::size_t s = 0; s < pg.series.size(); ++s) {
    plot += (s ? ", " : "plot ") + std::string("$s") + std::to_string(s) +
            (errors ? " using 1:2:3" : " using 1:2") + (numeric ? "" : ":xtic(4)") +
            (errors ? " with yerrorlines" : " with linespoints") + " lw 2 pt 7 title " +
            report::gp_quote(pg.series[s].first);
  }
  const std::string what = p99 ? "p99 latency (us)" : "throughput (ops/s)";
  // One series far below another would sit on the axis: a log y axis shows both.
  const bool log_y = report::needs_log_scale(peaks) && std::isfinite(ymin_pos);
  const std::string label = log_y ? what + ", log scale" : what;
  std::string body = data + "set title " + report::gp_quote(what + " vs " + pg.x_path) + "\n" +
                     "set xlabel " + report::gp_quote(pg.x_path) + "\nset ylabel " + report::gp_quote(label) +
                     "\n";
  if (log_y)
    body += "set logscale y\nset yrange " + report::padded_range(ymin_pos, ymax, true) + "\n";
  else if (std::isfinite(ymin))
    body += "set yrange " + report::padded_range(ymin, ymax, false) + "\n";
  // Wide numeric ranges (e.g. 1..1000 connections) read better on a log axis.
  const bool log_x = numeric && xmin > 0 && xmax / xmin >= 50;
  if (log_x) body += "set logscale x\n";
  // Margins on every side: no line, point or error bar on the frame.
  if (!numeric)
    body += "set xrange [-0.5:" + gnum(static_cast<double>(pg.x_order.size()) - 0.5) + "]\n";
  else
    body += "set xrange " + report::padded_range(xmin, xmax, log_x) + "\n";
  body += plot + "\n";
  const std::string id = p99 ? "plot-latency-p99" : "plot-throughput";
  return {id, gp.svg(id, body),
          what + " against " + pg.x_path + ", one line per variant" +
              (log_y ? " (log y: the series differ by "
                       "more than 20x)"
                     : "") +
              (errors ? "; error bars are 95 % confidence intervals over the replications." : "."),
          data};
}

// Latency CDF per variant from the histogram bins (latency_us.bins) of the shown runs, merged: the
// fraction of requests below each bin's upper edge, x on a log scale; and the tail, 1 - F on a log
// y axis, where p99, p99.9 and beyond are spread out instead of crowding under F = 1.
std::vector<Figure> cdf_plots(report::Gnuplot& gp, const Page& pg) {
  std::string data, cdf, tail;
  double xmin = std::numeric_limits<double>::infinity(), xmax = 0, tail_min = 1;
  int k = 0;
  for (const auto& v : pg.variants) {
    std::vector<const json*> bins;
    double min_us = std::numeric_limits<double>::infinity();
    for (const auto& r : pg.runs.at(v)) {
      const json::json_pointer b("/latency_us/bins"), m("/latency_us/min");
      if (!r.contains(b)) continue;
      bins.push_back(&r.at(b));
      if (r.contains(m) && r.at(m).is_number()) min_us = std::min(min_us, r.at(m).get<double>());
    }
    const auto pts = report::cdf_from_bins(bins);
    if (pts.empty()) continue;
    // The curve starts at the smallest latency, where no request is below yet.
    std::vector<std::string> rows, tail_rows;
    if (std::isfinite(min_us) && min_us > 0 && min_us < pts.front().edge_us)
      rows.push_back(gnum(min_us) + " 0");
    for (const auto& p : pts) {
      const double f = static_cast<double>(p.below) / static_cast<double>(p.total);
      rows.push_back(gnum(p.edge_us) + " " + gnum(f));
      if (p.below < p.total) {
        const double t = static_cast<double>(p.total - p.below) / static_cast<double>(p.total);
        tail_rows.push_back(gnum(p.edge_us) + " " + gnum(t));
        tail_min = std::min(tail_min, t);
      }
    }
    xmin = std::min(xmin, std::isfinite(min_us) && min_us > 0 ? std::min(min_us, pts.front().edge_us)
                                                              : pts.front().edge_us);
    xmax = std::max(xmax, pts.back().edge_us);
    const std::string n = std::to_string(k);
    data += datablock("c" + n, rows);
    cdf += (k ? ", " : "plot ") + std::string("$c") + n + " using 1:2 with lines lw 2 title " +
           report::gp_quote(v);
    if (!tail_rows.empty()) {
      data += datablock("t" + n, tail_rows);
      tail += (tail.empty() ? "plot " : ", ") + std::string("$t") + n + " using 1:2 with lines lw 2 title " +
              report::gp_quote(v);
    }
    ++k;
  }
  if (k == 0) return {};
  const std::string x = "set xlabel \"latency (us, log scale)\"\nset logscale x\nset xrange " +
                        report::padded_range(xmin, xmax, true) + "\n";
  std::vector<Figure> figs;
  const std::string cdf_body = data + "set title \"latency CDF\"\n" + x +
                               "set ylabel \"fraction of requests below\"\nset yrange " +
                               report::padded_range(0, 1, false) + "\nset key inside left top\n" + cdf + "\n";
  figs.push_back(
      {"plot-latency-cdf", gp.svg("plot-latency-cdf", cdf_body),
       "Latency CDF per variant from the latency histogram (latency_us.bins, bins about 1 % wide), "
       "the runs merged: the fraction of requests below each bin's upper edge. " +
           pg.runs_desc + ".",
       data});
  if (!tail.empty()) {
    const std::string tail_body = data + "set title \"latency tail: 1 - CDF\"\n" + x +
                                  "set ylabel \"fraction of requests above (log scale)\"\nset logscale y\n"
                                  "set format y \"%g\"\nset yrange " +
                                  report::padded_range(tail_min, 1, true) + "\nset key inside right top\n" +
                                  tail + "\n";
    figs.push_back(
        {"plot-latency-tail", gp.svg("plot-latency-tail", tail_body),
         "The tail of the same distributions: the fraction of requests above each latency, on a log "
         "scale (0.01 is p99, 0.001 is p99.9). " +
             pg.runs_desc + ".",
         data});
  }
  return figs;
}

// The mean of every metric per variant with its 95 % interval (compare only): one panel per
// metric, each on its own scale (log when one variant would sit on the axis next to another).
std::optional<Figure> ci_plot(report::Gnuplot& gp, const Page& pg) {
  if (pg.metric_cis.empty()) return std::nullopt;
  const int n = static_cast<int>(pg.metric_cis.size());
  const int cols = n >= 3 ? 3 : n, rows = (n + cols - 1) / cols;
  std::string data, body;
  std::string xtics;
  for (std::size_t i = 0; i < pg.variants.size(); ++i)
    xtics += (i ? ", " : "") + report::gp_quote(pg.variants[i]) + " " + std::to_string(i);
  body += fmt::format("set multiplot layout {},{}\nset key off\nset xtics ({})\nset xrange [-0.5:{}]\n", rows,
                      cols, xtics, gnum(static_cast<double>(pg.variants.size()) - 0.5));
  for (int m = 0; m < n; ++m) {
    const auto& mc = pg.metric_cis[static_cast<std::size_t>(m)];
    std::vector<std::string> rws;
    std::vector<double> peaks;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, lo_pos = lo;
    for (const auto& [v, mean, hw] : mc.by_variant) {
      if (!std::isfinite(mean)) continue;
      const auto pos = std::find(pg.variants.begin(), pg.variants.end(), v) - pg.variants.begin();
      const double e = std::isfinite(hw) ? hw : 0;
      rws.push_back(fmt::format("{} {} {}", pos, gnum(mean), gnum(e)));
      lo = std::min(lo, mean - e);
      hi = std::max(hi, mean + e);
      if (mean > 0) lo_pos = std::min(lo_pos, mean - e > 0 ? mean - e : mean / 2);
      peaks.push_back(mean);
    }
    if (rws.empty()) continue;
    const bool log_y = report::needs_log_scale(peaks) && std::isfinite(lo_pos);
    const std::string name = "m" + std::to_string(m);
    data += datablock(name, rws);
    body += "set title " + report::gp_quote(mc.label + (log_y ? " (log scale)" : "")) + "\n";
    body += log_y ? "set logscale y\nset yrange " + report::padded_range(lo_pos, hi, true) + "\n"
                  : "unset logscale y\nset yrange " + report::padded_range(lo, hi, false) + "\n";
    body += "plot $" + name + " using 1:2:3 with yerrorbars lw 2 pt 7 ps 1.3\n";
  }
  body += "unset multiplot\n";
  return Figure{"plot-means-ci", gp.svg("plot-means-ci", data + body, 960, 300 * rows),
                "Each metric's mean per variant with its 95 % confidence interval over the replications "
                "(Student t), one panel per metric on its own scale.",
                data};
}

// CPU per thread class, stacked per variant: the mean of cpu.by_thread over the shown runs, with
// the 95 % interval of their sum over those runs as an error bar.
std::optional<Figure> cpu_plot(report::Gnuplot& gp, const Page& pg) {
  std::vector<std::string> classes;
  std::map<std::string, std::map<std::string, double>> mean;  // variant -> class -> %
  std::map<std::string, std::vector<double>> totals;          // variant -> per run, the classes' sum
  for (const auto& v : pg.variants) {
    const auto& runs = pg.runs.at(v);
    for (const auto& r : runs) {
      const json::json_pointer ptr("/cpu/by_thread");
      if (!r.contains(ptr)) continue;
      double total = 0;
      for (const auto& [key, val] : r.at(ptr).items()) {
        if (!val.is_number()) continue;
        std::string c = key.size() > 4 && key.ends_with("_pct") ? key.substr(0, key.size() - 4) : key;
        if (std::find(classes.begin(), classes.end(), c) == classes.end()) classes.push_back(c);
        mean[v][c] += val.get<double>() / static_cast<double>(runs.size());
        total += val.get<double>();
      }
      totals[v].push_back(total);
    }
  }
  if (classes.empty()) return std::nullopt;
  std::vector<std::string> rows, tot_rows;
  double top = 0;
  bool bars = false;
  for (const auto& v : pg.variants) {
    std::string row = report::gp_quote(v);
    for (const auto& c : classes) row += " " + gnum(mean[v][c]);
    rows.push_back(row);
    const auto& t = totals[v];
    double m = 0, hw = 0;
    if (!t.empty()) {
      const auto ci = analysis::student_t_ci(t);
      m = ci.mean;
      hw = std::isfinite(ci.half_width) ? ci.half_width : 0;
      bars = bars || t.size() > 1;
    }
    tot_rows.push_back(gnum(m) + " " + gnum(hw));
    top = std::max(top, m + hw);
  }
  std::string plot = "plot ";
  for (std::size_t c = 0; c < classes.size(); ++c)
    plot += (c ? ", '' using " : "$cpu using ") + std::to_string(c + 2) + (c ? "" : ":xtic(1)") + " title " +
            report::gp_quote(classes[c]);
  // The bars of a rowstacked histogram sit at x = 0, 1, ...: the error bars go there too.
  if (bars)
    plot +=
        ", $cputotal using 0:1:2 with yerrorbars lc rgb \"black\" lw 2 pt 7 ps 0.8 title \"total ± 95% CI\"";
  const std::string data = datablock("cpu", rows) + datablock("cputotal", tot_rows);
  const std::string body = data +
                           "set title \"CPU by thread class\"\nset ylabel \"CPU (%, 100 = one core)\"\n"
                           "set style data histograms\nset style histogram rowstacked\n"
                           "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset yrange " +
                           report::padded_range(0, top > 0 ? top : 1, false) +
                           "\nset xrange [-0.6:" + gnum(static_cast<double>(pg.variants.size()) - 0.4) +
                           "]\nset grid noxtics\n" + plot + "\n";
  return Figure{"plot-cpu-by-thread", gp.svg("plot-cpu-by-thread", body),
                "CPU use per thread class (cpu.by_thread), stacked per variant" +
                    std::string(bars ? "; the error bars are the 95 % confidence interval of the total over "
                                       "the runs shown. "
                                     : ". ") +
                    pg.runs_desc + ".",
                data};
}

// One io-wq gauge over time, one line per variant; nullopt when no run sampled it. When one
// variant's values would sit on the axis next to another's, each variant gets a panel and a scale.
std::optional<Figure> gauge_plot(report::Gnuplot& gp, const Page& pg, const std::string& gauge,
                                 const std::string& id, const std::string& what) {
  struct Series {
    std::string variant, block;
    double tmin, tmax, ymin, ymax;
  };
  std::vector<Series> series;
  std::string data;
  for (const auto& v : pg.variants) {
    const auto& runs = pg.runs.at(v);
    if (runs.empty() || !runs.front().contains("timeseries")) continue;
    const auto& ts = runs.front().at("timeseries");
    if (!ts.contains(gauge) || !ts.contains("t_ms") || !ts.at(gauge).is_array() || !ts.at("t_ms").is_array())
      continue;
    const auto& t = ts.at("t_ms");
    const auto& y = ts.at(gauge);
    std::vector<std::string> rows;
    const double inf = std::numeric_limits<double>::infinity();
    Series s{v, "g" + std::to_string(series.size()), inf, -inf, inf, -inf};
    for (std::size_t i = 0; i < std::min(t.size(), y.size()); ++i) {
      const double ti = number_or_nan(t[i]), yi = number_or_nan(y[i]);
      rows.push_back(gnum(ti) + " " + gnum(yi));
      if (std::isfinite(ti)) s.tmin = std::min(s.tmin, ti), s.tmax = std::max(s.tmax, ti);
      if (std::isfinite(yi)) s.ymin = std::min(s.ymin, yi), s.ymax = std::max(s.ymax, yi);
    }
    if (rows.empty() || !std::isfinite(s.tmin)) continue;
    if (!std::isfinite(s.ymin)) s.ymin = s.ymax = 0;
    data += datablock(s.block, rows);
    series.push_back(std::move(s));
  }
  if (series.empty()) return std::nullopt;
  double tmin = series.front().tmin, tmax = series.front().tmax, ymin = series.front().ymin,
         ymax = series.front().ymax;
  std::vector<double> peaks;
  for (const auto& s : series) {
    tmin = std::min(tmin, s.tmin), tmax = std::max(tmax, s.tmax);
    ymin = std::min(ymin, s.ymin), ymax = std::max(ymax, s.ymax);
    peaks.push_back(s.ymax);
  }
  const bool panels = series.size() > 1 && report::needs_log_scale(peaks);
  std::string body = data + "set xlabel \"simulated time (ms)\"\nset ylabel " + report::gp_quote(what) +
                     "\nset xrange " + report::padded_range(tmin, tmax, false) + "\n";
  if (!panels) {
    body += "set title " + report::gp_quote(what + " over time") + "\nset yrange " +
            report::padded_range(ymin, ymax, false) + "\n";
    for (std::size_t k = 0; k < series.size(); ++k)
      body += (k ? ", " : "plot ") + std::string("$") + series[k].block +
              " using 1:2 with steps lw 2 title " + report::gp_quote(series[k].variant);
    body += "\n";
  } else {
    body += fmt::format("set multiplot layout {},1\nset key off\n", series.size());
    for (std::size_t k = 0; k < series.size(); ++k)
      body += "set title " + report::gp_quote(what + ": " + series[k].variant) + "\nset yrange " +
              report::padded_range(series[k].ymin, series[k].ymax, false) + "\nplot $" + series[k].block +
              fmt::format(" using 1:2 with steps lw 2 lc {}\n", k + 1);
    body += "unset multiplot\n";
  }
  const int height = panels ? 240 * static_cast<int>(series.size()) : 340;
  return Figure{
      id, gp.svg(id, body, 860, height),
      what + " (timeseries." + gauge + ", one sample per measurement interval)" +
          (panels ? "; one panel per variant, each on its own scale (their peaks differ by more than "
                    "20x). "
                  : ". ") +
          pg.runs_desc + ".",
      data};
}

std::string render(const fs::path& dir, const Page& pg, const std::vector<Figure>& figs,
                   const std::vector<std::string>& notes) {
  const std::string title = "uringsim report: " + pg.scenario_name;
  std::string h = report::page_head(title);
  h += "<h1>" + html_escape(title) + "</h1>\n";
  h += "<p class=\"meta\">A " + pg.kind + " of scenario <b>" + html_escape(pg.scenario_name) +
       "</b> (<code>" + html_escape(pg.scenario_path) + "</code>), from <code>" + html_escape(dir.string()) +
       "</code>. Report by uringsim " + html_escape(URINGSIM_VERSION) +
       (pg.results_version.empty() ? "" : "; runs by uringsim " + html_escape(pg.results_version)) +
       ".</p>\n";
  h += "<h2 id=\"inputs\">Inputs</h2>\n<table class=\"kv\">\n";
  h += "<tr><th>scenario</th><td>" + html_escape(pg.scenario_name) + " (<code>" +
       html_escape(pg.scenario_path) + "</code>)</td></tr>\n";
  for (const auto& [k, v] : pg.inputs) h += "<tr><th>" + html_escape(k) + "</th><td>" + v + "</td></tr>\n";
  h += "</table>\n";
  h += "<h2 id=\"results\">Results</h2>\n" + pg.table;
  h += "<h2 id=\"plots\">Plots</h2>\n";
  for (const auto& n : notes) h += "<p class=\"note\">" + html_escape(n) + "</p>\n";
  for (std::size_t i = 0; i < figs.size(); ++i) {
    h += "<figure class=\"plot\" id=\"" + figs[i].id + "\">\n" + figs[i].svg + "\n<figcaption><b>Figure " +
         std::to_string(i + 1) + ".</b> " + html_escape(figs[i].caption) + "</figcaption>\n";
    // The numbers behind the figure, as gnuplot read them.
    if (!figs[i].data.empty())
      h += "<details class=\"data\" id=\"" + figs[i].id + "-data\"><summary>data</summary><pre>" +
           html_escape(figs[i].data) + "</pre></details>\n";
    h += "</figure>\n";
  }
  return h + "</body></html>\n";
}

}  // namespace

void add_report_options(CLI::App& cmd, ReportOptions& o) {
  cmd.add_option("dir", o.dir, "A compare or sweep output directory")->required();
  cmd.add_option("--out", o.out, "HTML file to write (default: DIR/report.html)");
}

int cmd_report(const ReportOptions& o) {
  const fs::path dir = o.dir;
  Page pg;
  try {
    if (!fs::is_directory(dir)) throw InputError(o.dir + ": not a directory");
    if (fs::exists(dir / "twin.json")) return cmd_twin_report(o);
    if (fs::exists(dir / "compare.json"))
      load_compare(dir, pg);
    else if (fs::exists(dir / "sweep.csv"))
      load_sweep(dir, pg);
    else
      throw InputError(o.dir +
                       ": neither compare.json (uringsim compare) nor sweep.csv (uringsim sweep) found");
    for (const auto& v : pg.variants) {
      for (const auto& r : pg.runs[v]) {
        if (pg.scenario_name.empty()) pg.scenario_name = string_at(r, "/scenario/name");
        if (pg.results_version.empty()) pg.results_version = string_at(r, "/tool/version");
      }
    }
    if (pg.scenario_name.empty()) pg.scenario_name = fs::path(pg.scenario_path).stem().string();
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }

  const std::string gnuplot = report::gnuplot_or_explain();
  if (gnuplot.empty()) return kExitFailed;
  const std::string out = o.out.empty() ? (dir / "report.html").string() : o.out;
  try {
    report::Gnuplot gp(gnuplot);
    std::vector<Figure> figs;
    std::vector<std::string> notes;
    if (pg.kind == "sweep") {
      figs.push_back(sweep_plot(gp, pg, false));
      figs.push_back(sweep_plot(gp, pg, true));
    }
    if (auto f = ci_plot(gp, pg)) figs.push_back(*f);
    const auto cdfs = cdf_plots(gp, pg);
    figs.insert(figs.end(), cdfs.begin(), cdfs.end());
    if (cdfs.empty())
      notes.push_back(
          "Latency CDF skipped: no run has a latency histogram (latency_us.bins) with a request in it.");
    if (auto f = cpu_plot(gp, pg))
      figs.push_back(*f);
    else
      notes.push_back("CPU plot skipped: the runs recorded no cpu.by_thread.");
    const auto workers =
        gauge_plot(gp, pg, "iowq.unbound.workers", "plot-iowq-workers", "io-wq unbound workers");
    const auto queued =
        gauge_plot(gp, pg, "iowq.unbound.queued", "plot-iowq-queued", "io-wq unbound queue depth");
    if (workers) figs.push_back(*workers);
    if (queued) figs.push_back(*queued);
    if (!workers && !queued)
      notes.push_back(
          "io-wq plots skipped: no run has the time series iowq.unbound.workers or "
          "iowq.unbound.queued (the workload does not use io-wq).");
    analysis::write_file_atomic(out, render(dir, pg, figs, notes));
  } catch (const Interrupted& e) {
    return 128 + e.signal;  // gnuplot's temporary directory went with `gp`
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailed;
  }
  std::cout << "report: wrote " << out << "\n";
  return kExitOk;
}

}  // namespace uringsim::app
