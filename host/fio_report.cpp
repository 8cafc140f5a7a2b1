// fio's JSON (fio 3.x: jobs[].{read,write,mixed}.{total_ios, iops, bw_bytes, runtime, slat_ns,
// clat_ns, lat_ns}, usr_cpu, sys_cpu, ctx, error) -> the simulator's keys, times in microseconds.
#include "host/fio_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "analysis/histogram.hpp"

namespace uringsim::host {
namespace {

using nlohmann::json;

const json& need(const json& j, const char* key, const char* where) {
  const auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error(fmt::format("fio's JSON output has no {}.{}", where, key));
  return *it;
}

// fio's percentile keys ("99.900000") as numbers, with their values in ns.
std::vector<std::pair<double, double>> fio_percentiles(const json& lat) {
  std::vector<std::pair<double, double>> out;
  const auto it = lat.find("percentile");
  if (it == lat.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items()) out.emplace_back(std::strtod(k.c_str(), nullptr), v.get<double>());
  return out;
}

// fio's {min, max, mean, stddev, N, percentile} in ns -> {count, mean, min, max, stdev, pNN} in us,
// null where there is no sample. `wanted`: these percentiles (null when fio has none); else all fio's.
json lat_us(const json& lat, const std::vector<double>* wanted) {
  const auto n = lat.value("N", std::uint64_t{0});
  auto us = [&](const char* key) { return n == 0 ? json(nullptr) : json(lat.value(key, 0.0) / 1e3); };
  json j = {
      {"count", n}, {"mean", us("mean")}, {"min", us("min")}, {"max", us("max")}, {"stdev", us("stddev")}};
  const auto have = fio_percentiles(lat);
  if (wanted) {
    for (const double p : *wanted) {
      const auto it =
          std::find_if(have.begin(), have.end(), [&](const auto& h) { return std::abs(h.first - p) < 1e-6; });
      j[analysis::percentile_key(p)] = it == have.end() || n == 0 ? json(nullptr) : json(it->second / 1e3);
    }
  } else {
    for (const auto& [p, v] : have)
      if (p > 0 && p <= 100) j[analysis::percentile_key(p)] = n == 0 ? json(nullptr) : json(v / 1e3);
  }
  return j;
}

json direction(const json& d) {
  return {{"ios", need(d, "total_ios", "job direction")},
          {"iops", need(d, "iops", "job direction")},
          {"bw_bytes_per_s", need(d, "bw_bytes", "job direction")},
          {"slat_us", lat_us(need(d, "slat_ns", "job direction"), nullptr)},
          {"clat_us", lat_us(need(d, "clat_ns", "job direction"), nullptr)},
          {"lat_us", lat_us(need(d, "lat_ns", "job direction"), nullptr)}};
}

}  // namespace

FioOutput split_fio_output(const std::string& output) {
  FioOutput out;
  std::string json_text;
  std::istringstream in(output);
  bool in_json = false, seen = false;
  for (std::string line; std::getline(in, line);) {
    if (!in_json && !seen && line == "{") in_json = true;
    if (in_json) {
      json_text += line + "\n";
      if (line == "}") {
        in_json = false;
        seen = true;
      }
    } else {
      out.text += line + "\n";
    }
  }
  if (!seen) throw std::runtime_error("fio's output has no JSON report");
  try {
    out.json = json::parse(json_text);
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("fio's JSON report does not parse: {}", e.what()));
  }
  return out;
}

json fio_results(const json& fio, const config::Scenario& s) {
  const json& jobs = need(fio, "jobs", "report");
  if (!jobs.is_array() || jobs.empty()) throw std::runtime_error("fio's JSON output lists no job");
  // group_reporting: the job threads are one entry.
  const json& job = jobs.front();
  if (const int err = job.value("error", 0); err != 0)
    throw std::runtime_error(fmt::format("fio's job failed with error {} ({})", err, std::strerror(err)));

  const auto rw = s.at("/workload/rw").get<std::string>();
  const bool reads = rw == "read" || rw == "randread" || rw == "randrw";
  const bool writes = rw == "write" || rw == "randwrite" || rw == "randrw";
  json r, f;
  f["jobs"] = s.at("/workload/numjobs");
  f["version"] = fio.value("fio version", "");
  std::uint64_t ios = 0;
  double runtime_ms = 0;
  for (const char* dir : {"read", "write"}) {
    const json& d = need(job, dir, "job");
    const bool used = std::strcmp(dir, "read") == 0 ? reads : writes;
    if (!used && need(d, "total_ios", dir).get<std::uint64_t>() == 0) continue;
    f[dir] = direction(d);
    ios += d.at("total_ios").get<std::uint64_t>();
    runtime_ms = std::max(runtime_ms, need(d, "runtime", dir).get<double>());
  }
  f["cpu"] = {{"usr_pct", need(job, "usr_cpu", "job")}, {"sys_pct", need(job, "sys_cpu", "job")}};
  f["ctx"] = job.value("ctx", std::uint64_t{0});

  // The run's latency is fio's lat: of the one direction, or of both together ("mixed", which the
  // runner asks for with unified_rw_reporting=both).
  const std::vector<double> wanted = s.at("/measure/percentiles").get<std::vector<double>>();
  const char* lat_dir = rw == "randrw" ? "mixed" : reads ? "read" : "write";
  const auto it = job.find(lat_dir);
  if (it == job.end())
    throw std::runtime_error(fmt::format("fio's JSON output has no job.{} (fio older than 3.27?)", lat_dir));
  r["latency_us"] = lat_us(need(*it, "lat_ns", lat_dir), &wanted);
  r["latency_us"].erase("stdev");  // not in the simulator's latency_us
  // fio's lat samples include the few I/Os in flight when its window closes; the run's count is the
  // window's completions, as in the simulator (fio's own count stays in fio.<dir>.lat_us.count).
  r["latency_us"]["count"] = ios;

  const double warmup_ms = s.at("/warmup_ms").get<double>();
  r["window"] = {{"start_ms", warmup_ms},
                 {"end_ms", warmup_ms + runtime_ms},
                 {"seconds", runtime_ms / 1e3},
                 {"completions", ios},
                 {"submitted", ios}};
  // Completions over fio's window: fio's IOPS, unrounded (its JSON rounds them to 6 decimals).
  r["throughput"] = {{"ops_per_s", runtime_ms > 0 ? static_cast<double>(ios) / (runtime_ms / 1e3) : 0.0}};
  // fio reports the I/Os of its window only, all completed (in-flight ones are reaped before it
  // reports; an I/O error ends the job, caught above).
  r["requests"] = {{"submitted", ios}, {"completed", ios}, {"failed", 0}, {"in_flight_at_end", 0}};
  r["fio"] = f;
  return r;
}

}  // namespace uringsim::host
