#include "tools/app/report_util.hpp"

#include <iostream>

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "tools/app/read_file.hpp"
#include "tools/app/subprocess.hpp"

namespace uringsim::app::report {
namespace fs = std::filesystem;

Csv parse_csv(const std::string& text, const std::string& name) {
  Csv out;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, in_row = false;
  int line = 1, row_line = 1;
  auto end_row = [&] {
    row.push_back(std::move(field));
    field.clear();
    if (out.header.empty()) {
      out.header = std::move(row);
    } else {
      if (row.size() != out.header.size())
        throw InputError(name + ":" + std::to_string(row_line) + ": expected " +
                         std::to_string(out.header.size()) + " fields as in the header, got " +
                         std::to_string(row.size()));
      out.rows.push_back(std::move(row));
      out.lines.push_back(row_line);
    }
    row.clear();
    in_row = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_row) {
      row_line = line;
      in_row = true;
    }
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"') {
      if (!field.empty())
        throw InputError(name + ":" + std::to_string(line) + ": quote inside an unquoted field");
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      // A blank line carries no row (e.g. the file's trailing newline).
      if (row.empty() && field.empty())
        in_row = false;
      else
        end_row();
      ++line;
    } else {
      field += c;
    }
  }
  if (quoted) throw InputError(name + ":" + std::to_string(row_line) + ": unterminated quoted field");
  if (in_row && (!row.empty() || !field.empty())) end_row();
  if (out.header.empty()) throw InputError(name + ":1: empty file, expected a header line");
  return out;
}

std::string gnuplot_or_explain() {
  const std::string gnuplot = find_in_path("gnuplot");
  if (gnuplot.empty())
    std::cerr << "error: gnuplot not found in PATH; run ./setup.sh (it installs gnuplot-nox)\n";
  return gnuplot;
}

std::string page_head(std::string_view title) {
  return R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>)" +
         html_escape(title) + R"(</title>
<style>
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222;line-height:1.45;background:#fafafa}
h1{font-size:1.6em;margin-bottom:.2em}
h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
.meta{color:#555;margin:.3em 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em;background:#fff}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
thead th{background:#eef2f7}
table.kv th{background:#eef2f7;white-space:nowrap}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.sig td{background:#fff4cc}
figure.plot{margin:1.2em 0;padding:.6em;border:1px solid #ddd;border-radius:4px;background:#fff}
figure.plot svg{max-width:100%;height:auto;display:block;margin:0 auto}
figcaption{font-size:.9em;color:#444;margin-top:.4em}
details.data{font-size:.85em;margin-top:.3em}
details.data pre{max-height:16em;overflow:auto;background:#f6f6f6;padding:.4em}
p.note{color:#6b4f00;background:#fff8e1;border-left:4px solid #f0c040;padding:.4em .8em}
code{font-family:"DejaVu Sans Mono",monospace;font-size:.92em}
</style></head>
<body>
)";
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string gp_quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') continue;  // a newline would end the gnuplot command
    out += c;
  }
  return out + "\"";
}

std::string find_in_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path cand = fs::path(dir) / prog;
    if (access(cand.c_str(), X_OK) == 0 && fs::is_regular_file(cand)) return cand.string();
  }
  return "";
}

std::string inline_svg(const std::string& svg, const std::string& prefix) {
  const auto start = svg.find("<svg");
  if (start == std::string::npos) throw std::runtime_error("gnuplot wrote no <svg> element");
  // Ids, and the local references to them: xlink:href='#id', href="#id", url(#id).
  static const std::regex refs(R"((\bid=['"]|href=['"]#|url\(#))");
  return std::regex_replace(svg.substr(start), refs, "$1" + prefix + "-");
}

std::string padded_range(double lo, double hi, bool log) {
  if (hi < lo) std::swap(lo, hi);
  double a, b;
  if (log) {
    if (!(lo > 0)) throw std::invalid_argument("padded_range: a log axis needs lo > 0");
    const double f = std::max(1.1, std::pow(hi / lo, 0.05));
    a = lo / f;
    b = hi * f;
  } else {
    const double span = hi > lo ? hi - lo : (lo != 0 ? std::abs(lo) : 1.0);
    a = lo - 0.05 * span;
    b = hi + 0.05 * span;
  }
  return fmt::format("[{}:{}]", a, b);
}

bool needs_log_scale(const std::vector<double>& series_peaks) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const double p : series_peaks)
    if (p > 0 && std::isfinite(p)) {
      lo = std::min(lo, p);
      hi = std::max(hi, p);
    }
  return hi > 0 && lo < 0.05 * hi;
}

std::string bins_problem(const nlohmann::json& bins) {
  if (!bins.is_array()) return ": expected an array of [upper_edge_us, count] pairs";
  double prev = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const auto& b = bins[i];
    const std::string at = "[" + std::to_string(i) + "]";
    if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number_unsigned())
      return at + ": expected [upper_edge_us, count] with a number and a non-negative integer";
    const double edge = b[0].get<double>();
    if (!(edge > 0) || edge < prev || !std::isfinite(edge))
      return at + ": expected edges that are positive, finite and ascending, got " + b[0].dump();
    prev = edge;
  }
  return "";
}

std::vector<CdfPoint> cdf_from_bins(const std::vector<const nlohmann::json*>& runs_bins) {
  std::map<double, std::uint64_t> count;  // edges are the same numbers in every run (fixed layout)
  std::uint64_t total = 0;
  for (const auto* bins : runs_bins)
    for (const auto& b : *bins) {
      const auto c = b[1].get<std::uint64_t>();
      count[b[0].get<double>()] += c;
      total += c;
    }
  std::vector<CdfPoint> out;
  if (total == 0) return out;
  std::uint64_t below = 0;
  for (const auto& [edge, c] : count) {
    if (c == 0) continue;
    below += c;
    out.push_back({edge, below, total});
  }
  return out;
}

Gnuplot::Gnuplot(std::string exe) : exe_(std::move(exe)) {
  char tmpl[] = "/tmp/uringsim-report-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary directory");
  dir_ = tmpl;
}

Gnuplot::~Gnuplot() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string Gnuplot::svg(const std::string& id, const std::string& body, int width, int height) {
  const fs::path script = dir_ / (id + ".gp"), out = dir_ / (id + ".svg");
  {
    std::ofstream f(script);
    // noenhanced: names like io_uring_echo_s must not turn into subscripts.
    f << "set terminal svg size " << width << "," << height
      << " fixed noenhanced font \"sans,12\" background \"white\"\n"
      << "set output " << gp_quote(out.string()) << "\n"
      << "set datafile missing \"NaN\"\n"
      << "set grid lc rgb \"#dddddd\"\n"
      << "set key outside right top\n"
      << body << "\nunset output\n";
  }
  const auto r = run_parallel({{exe_, script.string()}}, 1);
  if (r[0].exit_code != 0 || !fs::exists(out))
    throw std::runtime_error("gnuplot failed on plot " + id + " (exit " + std::to_string(r[0].exit_code) +
                             "): " + r[0].output);
  return inline_svg(read_text_file(out), id);
}

}  // namespace uringsim::app::report
