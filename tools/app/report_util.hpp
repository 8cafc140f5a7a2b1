#pragma once
// Pieces of `uringsim report` that do not depend on the input kind, exposed for unit tests:
// reading CSV with errors that name the file and line, HTML escaping, and running
// gnuplot to get SVG text that can be embedded inline in an HTML page.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/input_error.hpp"

namespace uringsim::app::report {

// Bad or missing input; the message names the file (and line when known). Exit code 2. The one
// input error type, so that what the shared readers throw (read_text_file, read_json_file) is too.
using InputError = config::InputError;

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;  // line in the file where each row starts, for error messages
};

// RFC 4180 CSV (quoted fields, "" escapes, CRLF accepted). Every row must have as many fields as
// the header, else InputError "name:line: ...".
Csv parse_csv(const std::string& text, const std::string& name);

std::string html_escape(std::string_view s);
// The start of a report page, up to and including <body>: the title and the shared stylesheet.
std::string page_head(std::string_view title);
std::string gp_quote(std::string_view s);  // a double-quoted gnuplot string literal

// Absolute path of an executable found in $PATH, or "" when there is none.
std::string find_in_path(const std::string& prog);
// gnuplot's path, or "" after telling the user (stderr) how to install it.
std::string gnuplot_or_explain();

// Makes SVG text fit inline in a page holding several SVGs: drops the XML prolog and DOCTYPE and
// prefixes every id and local reference with `prefix` (gnuplot reuses ids like gpPt1 in each file).
std::string inline_svg(const std::string& svg, const std::string& prefix);

// An axis range "[a:b]" holding [lo, hi] with a margin on both sides, so that no line or point sits
// on the plot frame: 5 % of the span on a linear axis (of |lo| or 1 when lo == hi), 5 % of the
// decades and at least a factor 1.1 on a log axis (lo > 0 there, else std::invalid_argument).
std::string padded_range(double lo, double hi, bool log);
// Whether one linear axis would flatten a series: the smallest positive peak is below 5 % of the
// largest. Then the plot uses a log scale or a panel per series. Non-positive peaks are ignored.
bool needs_log_scale(const std::vector<double>& series_peaks);

// Why a results.json latency_us.bins value is not [[upper_edge_us, count], ...] with positive,
// non-decreasing edges and non-negative integer counts ("[3]: ..."), or "" when it is.
std::string bins_problem(const nlohmann::json& bins);
struct CdfPoint {
  double edge_us;       // a bin's upper edge
  std::uint64_t below;  // requests below it, over all the runs merged
  std::uint64_t total;  // all requests of those runs
};
// The latency CDF of one or more runs' bins (checked with bins_problem), merged by edge: one
// point per distinct edge, ascending; the last has below == total. Empty when there is no request.
std::vector<CdfPoint> cdf_from_bins(const std::vector<const nlohmann::json*>& runs_bins);

// Runs gnuplot scripts in a private temporary directory (removed on destruction).
class Gnuplot {
 public:
  explicit Gnuplot(std::string exe);
  ~Gnuplot();
  Gnuplot(const Gnuplot&) = delete;
  Gnuplot& operator=(const Gnuplot&) = delete;

  // Runs `body` after setting an SVG terminal of the given size; returns the inline-ready SVG.
  // Throws std::runtime_error with gnuplot's output when it fails.
  std::string svg(const std::string& id, const std::string& body, int width = 860, int height = 420);

 private:
  std::string exe_;
  std::filesystem::path dir_;
};

}  // namespace uringsim::app::report
