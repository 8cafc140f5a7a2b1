#include "analysis/results_check.hpp"

#include <cmath>

#include <fmt/format.h>

namespace uringsim::analysis {
namespace {

enum class Kind { String, Object, Number, Count, NumberOrNull };

const char* kind_text(Kind k) {
  switch (k) {
    case Kind::String:
      return "a string";
    case Kind::Object:
      return "an object";
    case Kind::Number:
      return "a number";
    case Kind::Count:
      return "a non-negative integer";
    case Kind::NumberOrNull:
      return "a number or null";
  }
  return "";
}

bool is(const nlohmann::json& v, Kind k) {
  switch (k) {
    case Kind::String:
      return v.is_string();
    case Kind::Object:
      return v.is_object();
    case Kind::Number:
      return v.is_number();
    case Kind::Count:
      return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
    case Kind::NumberOrNull:
      return v.is_number() || v.is_null();
  }
  return false;
}

// Latency statistics are null when nothing completed in the window.
struct Key {
  const char* pointer;
  Kind kind;
};
constexpr Key kCore[] = {
    {"/source", Kind::String},
    {"/tool", Kind::Object},
    {"/tool/name", Kind::String},
    {"/tool/version", Kind::String},
    {"/scenario", Kind::Object},
    {"/window/start_ms", Kind::Number},
    {"/window/end_ms", Kind::Number},
    {"/window/seconds", Kind::Number},
    {"/window/completions", Kind::Count},
    {"/window/submitted", Kind::Count},
    {"/throughput/ops_per_s", Kind::Number},
    {"/latency_us/count", Kind::Count},
    {"/latency_us/mean", Kind::NumberOrNull},
    {"/latency_us/p50", Kind::NumberOrNull},
    {"/latency_us/p99", Kind::NumberOrNull},
    {"/requests/submitted", Kind::Count},
    {"/requests/completed", Kind::Count},
    {"/requests/failed", Kind::Count},
    {"/requests/in_flight_at_end", Kind::Number},
    {"/cpu/total_pct", Kind::Number},
    {"/cpu/by_thread", Kind::Object},
};

}  // namespace

std::vector<std::string> check_results(const nlohmann::json& r) {
  std::vector<std::string> problems;
  if (!r.is_object()) return {fmt::format("expected a JSON object, got {}", r.type_name())};
  bool complete = true;
  for (const auto& k : kCore) {
    const nlohmann::json::json_pointer p(k.pointer);
    if (!r.contains(p)) {
      problems.push_back(fmt::format("{}: missing", k.pointer));
      complete = false;
    } else if (!is(r.at(p), k.kind)) {
      problems.push_back(
          fmt::format("{}: expected {}, got {}", k.pointer, kind_text(k.kind), r.at(p).dump()));
      complete = false;
    }
  }
  if (complete) {
    const std::string source = r.at("source").get<std::string>();
    if (source != "simulation" && source != "host")
      problems.push_back(fmt::format("/source: expected \"simulation\" or \"host\", got \"{}\"", source));
    for (const auto& [k, v] : r.at("/cpu/by_thread"_json_pointer).items())
      if (!v.is_number())
        problems.push_back(fmt::format("/cpu/by_thread/{}: expected a number, got {}", k, v.dump()));
    const double seconds = r.at("/window/seconds"_json_pointer).get<double>();
    const double completions = r.at("/window/completions"_json_pointer).get<double>();
    const double tput = r.at("/throughput/ops_per_s"_json_pointer).get<double>();
    if (!(seconds > 0))
      problems.push_back(fmt::format("/window/seconds: expected a number > 0, got {}", seconds));
    if (seconds > 0) {
      const double expect = completions / seconds;
      if (std::abs(tput - expect) > 1e-9 * std::max(std::abs(expect), 1.0))
        problems.push_back(fmt::format(
            "/throughput/ops_per_s: expected window.completions / window.seconds = {} / {} = {}, got {}",
            completions, seconds, expect, tput));
    }
    if (r.at("/latency_us/count"_json_pointer).get<double>() != completions)
      problems.push_back(fmt::format("/latency_us/count: expected window.completions ({}), got {}",
                                     completions, r.at("/latency_us/count"_json_pointer).dump()));
  }
  return problems;
}

}  // namespace uringsim::analysis
