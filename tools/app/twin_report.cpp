// `uringsim report DIR` for a twin directory: the real kernel and the simulator side by side, a
// table per point and plots where each metric's host series carries its 95 % error bars.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "analysis/io.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/json_input.hpp"
#include "tools/app/report_util.hpp"
#include "uringsim_version.hpp"

namespace uringsim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using report::html_escape;

std::string num(const json& v) {
  if (!v.is_number()) return "–";
  const double x = v.get<double>(), a = std::abs(x);
  if (a >= 1000) return fmt::format("{:.0f}", x);
  if (a >= 10) return fmt::format("{:.1f}", x);
  return fmt::format("{:.3g}", x);
}

std::string with_ci(const json& side) {
  return side.at("ci95").is_number() ? num(side.at("mean")) + " ± " + num(side.at("ci95"))
                                     : num(side.at("mean"));
}

std::string point_label(const json& row, const std::vector<std::string>& paths, std::size_t skip) {
  std::string s = row.at("variant").get<std::string>();
  for (std::size_t k = 0; k < paths.size(); ++k) {
    if (k == skip) continue;
    const json& v = row.at("grid").value(paths[k], json());
    s += (s.empty() ? "" : " ") + paths[k] + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return s.empty() ? "scenario" : s;
}

double as_x(const json& v, bool& numeric) {
  if (v.is_number()) return v.get<double>();
  numeric = false;
  return 0;
}

// One metric against the first grid path: per series, host points with error bars and the
// simulated line in the same colour.
std::string metric_plot(report::Gnuplot& gp, const json& twin, const std::string& metric,
                        const std::string& label, const std::vector<std::string>& paths) {
  std::map<std::string, std::vector<std::tuple<double, std::string, double, double, double>>> series;
  std::vector<std::string> order;
  bool numeric = true;
  for (const auto& row : twin.at("rows")) {
    if (!row.at("metrics").contains(metric)) continue;
    const auto& e = row.at("metrics").at(metric);
    const std::string name = point_label(row, paths, 0);
    if (!series.count(name)) order.push_back(name);
    const json& xv = paths.empty() ? json(0) : row.at("grid").value(paths[0], json());
    const double x = as_x(xv, numeric);
    auto val = [](const json& j) { return j.is_number() ? j.get<double>() : NAN; };
    series[name].emplace_back(x, xv.is_string() ? xv.get<std::string>() : xv.dump(), val(e["host"]["mean"]),
                              val(e["host"]["ci95"]), val(e["sim"]["mean"]));
  }
  std::string body, plot;
  double xmin = INFINITY, xmax = -INFINITY;
  std::vector<std::string> xlabels;
  for (std::size_t s = 0; s < order.size(); ++s) {
    auto pts = series[order[s]];
    std::sort(pts.begin(), pts.end());
    body += "$s" + std::to_string(s) + " << EOD\n";
    for (auto& [x, xl, h, ci, sim] : pts) {
      if (!numeric) {
        auto it = std::find(xlabels.begin(), xlabels.end(), xl);
        if (it == xlabels.end()) xlabels.push_back(xl);
        x = static_cast<double>(std::find(xlabels.begin(), xlabels.end(), xl) - xlabels.begin());
      }
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      auto g = [](double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string("NaN"); };
      body += fmt::format("{} {} {} {} {}\n", g(x), g(h), g(std::isfinite(ci) ? ci : 0.0), g(sim),
                          report::gp_quote(xl));
    }
    body += "EOD\n";
    const std::string ds = "$s" + std::to_string(s);
    const int lc = static_cast<int>(s) + 1;
    plot += std::string(s ? ", " : "plot ") + ds + " using 1:2:3" + (numeric ? "" : ":xtic(5)") +
            " with yerrorbars lc " + std::to_string(lc) + " pt 7 ps 1.2 title " +
            report::gp_quote(order[s] + " host") + ", " + ds + " using 1:4 with linespoints lc " +
            std::to_string(lc) + " dt 2 lw 2 pt 6 title " + report::gp_quote(order[s] + " sim");
  }
  const std::string xlab = paths.empty() ? "point" : paths[0];
  body +=
      "set title " + report::gp_quote(label + ": host (error bars: 95 % CI) and simulation") +
      "\nset xlabel " + report::gp_quote(xlab) + "\nset ylabel " + report::gp_quote(label) +
      "\nset yrange [0:*]\nset key outside right top\nset offsets graph 0.05, graph 0.05, graph 0.08, 0\n";
  if (numeric && xmin > 0 && xmax / xmin >= 50) body += "set logscale x\n";
  if (!numeric) body += fmt::format("set xrange [-0.5:{}]\n", static_cast<double>(xlabels.size()) - 0.5);
  if (xmin == xmax) body += fmt::format("set xrange [{}:{}]\n", xmin - 1, xmax + 1);
  if (order.empty()) return "";
  return gp.svg("twin-" + metric, body + plot + "\n", 980, 420);
}

}  // namespace

int cmd_twin_report(const ReportOptions& o) {
  const fs::path dir = o.dir;
  json twin;
  try {
    twin = read_json_file(dir / "twin.json");
    if (!twin.contains("rows") || !twin["rows"].is_array() || !twin.contains("grids"))
      throw report::InputError((dir / "twin.json").string() + ": expected the keys rows (array) and grids");
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }
  const std::string gnuplot = report::gnuplot_or_explain();
  if (gnuplot.empty()) return kExitFailed;
  const std::string out = o.out.empty() ? (dir / "report.html").string() : o.out;
  try {
    std::vector<std::string> paths;
    for (const auto& g : twin.at("grids")) paths.push_back(g.at("path").get<std::string>());
    const std::string scenario = twin.value("scenario", std::string());
    std::string h = report::page_head("uringsim twin: " + scenario);
    h += "<h1>uringsim twin: " + html_escape(fs::path(scenario).stem().string()) + "</h1>\n";
    h += "<p class=\"meta\">The real kernel (<code>uringsim host</code>) against the simulator, point by "
         "point, "
         "from <code>" +
         html_escape(dir.string()) + "</code>. Report by uringsim " + html_escape(URINGSIM_VERSION) +
         ".</p>\n";
    h += "<h2>Inputs</h2>\n<table class=\"kv\">\n";
    h += "<tr><th>scenario</th><td><code>" + html_escape(scenario) + "</code></td></tr>\n";
    h += "<tr><th>calibration</th><td>" +
         (twin["calibration"].is_string()
              ? "<code>" + html_escape(twin["calibration"].get<std::string>()) + "</code>"
              : std::string("none: the cost table's defaults")) +
         "</td></tr>\n";
    h += "<tr><th>replications</th><td>" + twin.at("reps").dump() + " per point and side</td></tr>\n";
    for (const auto& g : twin.at("grids"))
      h += "<tr><th>grid</th><td><code>" + html_escape(g.at("path").get<std::string>()) +
           "</code> = " + html_escape(g.at("values").dump()) + "</td></tr>\n";
    std::string ignored;
    for (const auto& f : twin.value("model_only_fields", json::array()))
      ignored += (ignored.empty() ? "" : ", ") + std::string("<code>") +
                 html_escape(f.value("path", std::string()) + " = " + f.value("value", json()).dump()) +
                 "</code>";
    h += "<tr><th>model-only fields</th><td>" + (ignored.empty() ? std::string("none") : ignored) +
         " (applied to the simulated side only)</td></tr>\n</table>\n";

    h += "<h2>Errors</h2>\n<div class=\"scroll\"><table "
         "class=\"data\"><thead><tr><th>metric</th><th>points</th>"
         "<th>median |error|</th><th>worst |error|</th></tr></thead><tbody>\n";
    const json summary = twin.value("summary", json::object());
    for (const auto& [m, s] : summary.items()) {
      // Relative errors need a host value other than 0; a metric the host measured as 0 at every
      // point (an unused thread class, no IPIs) has absolute errors only.
      const bool rel = s.contains("median_abs_rel_error_pct");
      auto err = [&](const char* rel_key, const char* abs_key) {
        return rel ? num(s.at(rel_key)) : num(s.at(abs_key)) + " (absolute)";
      };
      h += "<tr><td>" + html_escape(m) + "</td><td class=\"n\">" + s.at("points").dump() +
           "</td><td class=\"n\">" + err("median_abs_rel_error_pct", "median_abs_error") +
           "</td><td class=\"n\">" + err("worst_abs_rel_error_pct", "worst_abs_error") + "</td></tr>\n";
    }
    h += "</tbody></table></div>\n";

    const std::vector<std::pair<std::string, std::string>> shown = {
        {"throughput.ops_per_s", "throughput (ops/s)"},
        {"latency_us.p50", "p50 latency (us)"},
        {"latency_us.p99", "p99 latency (us)"},
        {"cpu.total_pct", "CPU (%)"}};
    h += "<h2>Per point</h2>\n<div class=\"scroll\"><table class=\"data\"><thead><tr><th>point</th>";
    for (const auto& [m, label] : shown)
      h += "<th>" + html_escape(label) + " host</th><th>sim</th><th>error</th>";
    h += "</tr></thead><tbody>\n";
    for (const auto& row : twin.at("rows")) {
      h += "<tr><td>" + html_escape(point_label(row, paths, paths.size())) + "</td>";
      for (const auto& [m, label] : shown) {
        if (!row.at("metrics").contains(m)) {
          h += "<td></td><td></td><td></td>";
          continue;
        }
        const auto& e = row.at("metrics").at(m);
        const bool points = m == "cpu.total_pct";  // CPU errors in points, the rest relative
        h += "<td class=\"n\">" + with_ci(e.at("host")) + "</td><td class=\"n\">" + with_ci(e.at("sim")) +
             "</td><td class=\"n\">" +
             (points ? (e["abs_error"].is_number() ? fmt::format("{:+.1f} pt", e["abs_error"].get<double>())
                                                   : "–")
                     : (e["rel_error_pct"].is_number()
                            ? fmt::format("{:+.1f} %", e["rel_error_pct"].get<double>())
                            : "–")) +
             "</td>";
      }
      h += "</tr>\n";
    }
    h += "</tbody></table></div>\n<h2>Plots</h2>\n";
    report::Gnuplot gp(gnuplot);
    int fig = 0;
    for (const auto& [m, label] : shown) {
      const std::string svg = metric_plot(gp, twin, m, label, paths);
      if (svg.empty()) continue;
      h += "<figure class=\"plot\" id=\"twin-" + html_escape(m) + "\">\n" + svg + "\n<figcaption><b>Figure " +
           std::to_string(++fig) + ".</b> " + html_escape(label) +
           ": filled points with error bars are the real kernel (mean and 95 % CI over the replications), "
           "dashed lines the simulator.</figcaption>\n</figure>\n";
    }
    h += "</body></html>\n";
    analysis::write_file_atomic(out, h);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailed;
  }
  std::cout << "report: wrote " << out << "\n";
  return kExitOk;
}

}  // namespace uringsim::app
