#include "tools/app/lock_stat_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tools/app/profile_text.hpp"

namespace uringsim::app {
namespace {

constexpr std::size_t kNameWidth = 40, kColumnWidth = 14, kColumns = 12;
constexpr std::size_t kTableWidth = kNameWidth + 1 + kColumns * (kColumnWidth + 1);
constexpr std::size_t kPoints = 4;  // LOCKSTAT_POINTS: sites shown per lock and kind

std::string line(char c, std::size_t indent, std::size_t n) {
  return std::string(indent, ' ') + std::string(n, c) + "\n";
}

std::uint64_t count(const nlohmann::json& s, const char* key) {
  return s.value(key, std::uint64_t{0});
}

// A lock_time block: the count, then min, max, total and average in µs with two decimals.
std::string times(std::uint64_t n, const nlohmann::json& s, const std::string& what) {
  const double total = s.at(what + "_ns_total").get<double>();
  std::string out = fmt::format("{:>{}}", n, kColumnWidth);
  for (const double ns : {s.value(what + "_ns_min", 0.0), s.at(what + "_ns_max").get<double>(), total,
                          n > 0 ? total / static_cast<double>(n) : 0.0})
    out += fmt::format(" {:>{}.2f}", ns / 1e3, kColumnWidth);
  return out;
}

// The `n` sites with the largest `key` (> 0), largest first; ties keep the sites' order.
std::vector<std::pair<std::string, std::uint64_t>> top_sites(const nlohmann::json& sites, const char* key) {
  std::vector<std::pair<std::string, std::uint64_t>> v;
  for (const auto& [site, s] : sites.items())
    if (count(s, key) > 0) v.emplace_back(site, count(s, key));
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > kPoints) v.resize(kPoints);
  return v;
}

std::string points(const std::string& name, const std::vector<std::pair<std::string, std::uint64_t>>& v) {
  if (v.empty()) return "";
  std::string out = line('-', kNameWidth - std::min(kNameWidth, name.size()), name.size());
  for (const auto& [site, n] : v)
    out += fmt::format("{:>{}} {:>{}} {:>29} {}\n", name, kNameWidth, n, kColumnWidth, "[<0000000000000000>]",
                       symbol_name(site));
  return out;
}

}  // namespace

std::string lock_stat_text(const nlohmann::json& locks) {
  std::string out = "lock_stat version 0.4\n" + line('-', 0, kTableWidth);
  out += fmt::format("{:>{}}", "class name", kNameWidth);
  for (const char* h :
       {"con-bounces", "contentions", "waittime-min", "waittime-max", "waittime-total", "waittime-avg",
        "acq-bounces", "acquisitions", "holdtime-min", "holdtime-max", "holdtime-total", "holdtime-avg"})
    out += fmt::format(" {:>{}}", h, kColumnWidth);
  out += "\n" + line('-', 0, kTableWidth) + "\n";

  // Most contended first, as the kernel sorts its classes.
  std::vector<std::pair<std::string, const nlohmann::json*>> order;
  for (const auto& [name, l] : locks.items()) order.emplace_back(name, &l);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return count(*a.second, "contended") > count(*b.second, "contended");
  });
  for (const auto& [name, lp] : order) {
    const auto& l = *lp;
    const std::uint64_t acq = count(l, "acquisitions"), con = count(l, "contended");
    if (acq == 0) continue;  // the kernel prints nothing for a class never taken
    out += fmt::format("{:>{}}:{:>{}} ", name, kNameWidth, count(l, "con_bounces"), kColumnWidth);
    out += times(con, l, "wait");
    out += fmt::format(" {:>{}} ", count(l, "acq_bounces"), kColumnWidth);
    out += times(acq, l, "hold") + "\n";
    if (con == 0) continue;
    const auto& sites = l.at("sites");
    out += points(name, top_sites(sites, "contended"));
    const auto contending = top_sites(sites, "contending");
    out += points(name, contending);
    if (!contending.empty()) out += "\n" + line('.', 0, kTableWidth) + "\n";
  }
  return out;
}

}  // namespace uringsim::app
