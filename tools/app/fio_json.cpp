// results.json's fio section -> fio's JSON layout. The job options are the job file export-fio
// writes for the scenario, read back with the job file parser: the options as fio would list them.
#include "tools/app/fio_json.hpp"

#include <fmt/format.h>

#include <cmath>

#include "analysis/histogram.hpp"
#include "config/input_error.hpp"
#include "models/workloads/fio.hpp"
#include "tools/app/fio_options.hpp"
#include "tools/app/scenario_to_fio.hpp"

namespace uringsim::app::fio {
namespace {

using nlohmann::json;

// fio prints integer nanoseconds for min, max and percentiles, a real mean and stddev.
std::int64_t ns(const json& us) {
  return us.is_number() ? std::llround(us.get<double>() * 1e3) : 0;
}

// results' {count, mean, min, max, stdev, p1..p9999} in us -> fio's {min, max, mean, stddev, N,
// percentile} in ns; an empty one is all zeros without percentiles, as fio writes it.
json lat_ns(const json& lat) {
  const auto n = lat.at("count").get<std::uint64_t>();
  json j = {{"min", ns(lat.at("min"))},
            {"max", ns(lat.at("max"))},
            {"mean", n ? lat.at("mean").get<double>() * 1e3 : 0.0},
            {"stddev", n ? lat.at("stdev").get<double>() * 1e3 : 0.0},
            {"N", n}};
  if (n == 0) return j;
  json pct = json::object();
  for (const double p : models::FioModel::fio_percentiles())
    pct[fio_percentile_key(p)] = ns(lat.at(analysis::percentile_key(p)));
  j["percentile"] = pct;
  return j;
}

json empty_lat() {
  return {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", 0}};
}

json direction(const json* d, std::uint64_t bs, std::int64_t runtime_ms) {
  const std::uint64_t ios = d ? d->at("ios").get<std::uint64_t>() : 0;
  const std::uint64_t bytes = ios * bs;
  const std::int64_t bw_bytes = d ? std::llround(d->at("bw_bytes_per_s").get<double>()) : 0;
  return {{"io_bytes", bytes},
          {"io_kbytes", bytes / 1024},
          {"bw_bytes", bw_bytes},
          {"bw", bw_bytes / 1024},
          {"iops", d ? d->at("iops").get<double>() : 0.0},
          {"runtime", d ? runtime_ms : 0},
          {"total_ios", ios},
          {"short_ios", 0},
          {"drop_ios", 0},
          {"slat_ns", d ? lat_ns(d->at("slat_us")) : empty_lat()},
          {"clat_ns", d ? lat_ns(d->at("clat_us")) : empty_lat()},
          {"lat_ns", d ? lat_ns(d->at("lat_us")) : empty_lat()}};
}

}  // namespace

std::string fio_percentile_key(double p) {
  return fmt::format("{:f}", p);
}

json fio_json(const config::Scenario& scenario, const json& results, const std::string& tool_version) {
  const std::string job_text = scenario_to_fio(scenario);  // InputError unless a fio workload
  const auto jobs = parse_job_file(job_text, "the exported job");
  const Job& job = jobs.at(0);
  json options = json::object();
  options["name"] = job.name;
  for (const auto& o : job.options) options[o.key] = o.value.value_or("");

  const json& f = results.at("fio");
  const auto bs = scenario.at("/workload/bs_bytes").get<std::uint64_t>();
  const std::int64_t runtime_ms = std::llround(results.at("window").at("seconds").get<double>() * 1e3);
  auto dir = [&](const char* name) {
    const auto it = f.find(name);
    return direction(it == f.end() ? nullptr : &*it, bs, runtime_ms);
  };
  json j = {{"jobname", job.name},
            {"groupid", 0},
            {"error", 0},  // fio's errno of a failed job; failed I/Os are total_err
            {"eta", 0},
            {"elapsed", std::llround(results.at("simulated_ns").get<double>() / 1e9)},
            {"job options", options},
            {"read", dir("read")},
            {"write", dir("write")},
            {"trim", direction(nullptr, bs, runtime_ms)},
            {"job_runtime", runtime_ms},
            {"usr_cpu", f.at("cpu").at("usr_pct")},
            {"sys_cpu", f.at("cpu").at("sys_pct")},
            {"total_err", f.at("errors")}};
  if (f.contains("ctx") && f.at("ctx").is_number()) j["ctx"] = f.at("ctx");
  return {{"fio version", "uringsim-" + tool_version},
          {"global options", json::object()},
          {"jobs", json::array({j})},
          {"disk_util", json::array()},
          {"uringsim",
           {{"source", results.at("source")},
            {"scenario", results.at("scenario").at("name")},
            {"variant", results.at("variant")},
            {"seed", results.at("seed")},
            {"note", "simulated; fio's layout (jobs[0] is the group of all numjobs threads)"}}}};
}

}  // namespace uringsim::app::fio
