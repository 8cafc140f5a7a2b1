#include "tools/app/profile_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

namespace uringsim::app {
namespace {

// Our user-space code paths are labelled "[app] event loop", "[client] send/recv".
bool is_user(const std::string& label) {
  return !label.empty() && label[0] == '[' && label.find(']') != std::string::npos;
}

// Letters, digits and _ . + - stay; every run of anything else becomes one '_', none at the ends.
std::string sanitize(const std::string& s) {
  std::string out;
  bool replaced = false;  // the last character written stands for replaced ones
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || c == '.' || c == '+' || c == '-') {
      out += c;
      replaced = false;
    } else if (!replaced && !out.empty()) {
      out += '_';
      replaced = true;
    }
  }
  if (replaced) out.pop_back();
  return out;
}

// perf's convert_unit(): "4K" for 4 321 samples, no unit (a blank) below 1 000.
std::string sample_count(double samples) {
  auto n = static_cast<unsigned long long>(std::max(0.0, samples));
  char unit = ' ';
  for (const char u : {'K', 'M', 'G'}) {
    if (n <= 1000) break;
    n /= 1000;
    unit = u;
  }
  return fmt::format("{}{}", n, unit);
}

}  // namespace

std::string symbol_name(const std::string& label) {
  if (!is_user(label)) return sanitize(label);
  const auto close = label.find(']');
  return sanitize(label.substr(1, close - 1) + " " + label.substr(close + 1));
}

std::string perf_symbol(const std::string& label) {
  return (is_user(label) ? "[.] " : "[k] ") + symbol_name(label);
}

std::string perf_report_text(const nlohmann::json& profile) {
  const double total = profile.at("total_cycles").get<double>();
  struct Row {
    std::string overhead, comm, sym;
  };
  std::vector<Row> rows;
  std::size_t comm_w = std::string("Command").size(), sym_w = std::string("Symbol").size();
  for (const auto& e : profile.at("entries")) {
    Row r{fmt::format("{:.2f}%", e.at("pct").get<double>()), e.at("comm").get<std::string>(),
          perf_symbol(e.at("symbol").get<std::string>())};
    comm_w = std::max(comm_w, r.comm.size());
    sym_w = std::max(sym_w, r.sym.size());
    rows.push_back(std::move(r));
  }
  std::string out =
      "# uringsim: simulated CPU cycles in the measurement window, by command and code path\n"
      "#\n"
      "# Total Lost Samples: 0\n"
      "#\n";
  out += fmt::format("# Samples: {} of event 'cycles'\n", sample_count(total / kCyclesPerSample));
  out += fmt::format("# Event count (approx.): {}\n", std::llround(total));
  out += "#\n";
  out += fmt::format("# {:>8}  {:<{}}  {}\n", "Overhead", "Command", comm_w, "Symbol");
  out +=
      fmt::format("# {}  {}  {}\n", std::string(8, '.'), std::string(comm_w, '.'), std::string(sym_w, '.'));
  out += "#\n";
  for (const auto& r : rows) out += fmt::format("  {:>8}  {:<{}}  {}\n", r.overhead, r.comm, comm_w, r.sym);
  out += "\n\n#\n";
  out += fmt::format("# spin slow path (native_queued_spin_lock_slowpath): {:.2f}% of busy cycles\n",
                     profile.at("spin_slowpath_pct").get<double>());
  out += "#\n";
  return out;
}

std::string folded_stacks(const nlohmann::json& profile) {
  std::vector<std::string> lines;
  for (const auto& e : profile.at("entries")) {
    const auto label = e.at("symbol").get<std::string>();
    const auto count = std::llround(e.at("cycles").get<double>());
    if (count <= 0) continue;  // a frame with no sample is not a stack
    lines.push_back(fmt::format("{};{}{} {}", sanitize(e.at("comm").get<std::string>()), symbol_name(label),
                                is_user(label) ? "" : "_[k]", count));
  }
  std::sort(lines.begin(), lines.end());  // as stackcollapse tools print them
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace uringsim::app
