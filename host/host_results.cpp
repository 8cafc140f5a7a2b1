#include "host/host_results.hpp"

#include <fmt/format.h>

#include "analysis/io.hpp"

namespace uringsim::host {

void add_per_request(nlohmann::json& r, const SchedCounts& sched, std::uint64_t requests,
                     const std::vector<std::string>& classes) {
  const auto& [switches_by_class, ipis, migrations, run_delay_ns_by_class] = sched;
  auto per = [&](std::uint64_t n) {
    return requests > 0 ? nlohmann::json(static_cast<double>(n) / static_cast<double>(requests))
                        : nlohmann::json(nullptr);
  };
  std::uint64_t switches = 0;
  nlohmann::json by_class = nlohmann::json::object();
  for (const auto& cls : classes) {
    const auto it = switches_by_class.find(cls);
    const std::uint64_t n = it == switches_by_class.end() ? 0 : it->second;
    by_class[cls] = n;
    switches += n;
  }
  nlohmann::json totals = {{"requests", requests},
                           {"context_switches", switches},
                           {"context_switches_by_class", by_class},
                           {"ipis", nullptr},
                           {"ipis_by_kind", nullptr}};
  nlohmann::json per_request = {{"context_switches", per(switches)}, {"ipis", nullptr}};
  if (ipis) {
    std::uint64_t n = 0;
    for (const auto& [kind, count] : *ipis) n += count;
    totals["ipis"] = n;
    totals["ipis_by_kind"] = *ipis;
    per_request["ipis"] = per(n);
  }
  totals["migrations"] = migrations ? nlohmann::json(*migrations) : nlohmann::json(nullptr);
  per_request["migrations"] = migrations ? per(*migrations) : nlohmann::json(nullptr);
  per_request["run_delay_us_by_class"] = nullptr;
  if (run_delay_ns_by_class) {
    per_request["run_delay_us_by_class"] = nlohmann::json::object();
    for (const auto& [cls, ns] : *run_delay_ns_by_class)
      per_request["run_delay_us_by_class"][cls] =
          requests > 0 ? nlohmann::json(ns / 1e3 / static_cast<double>(requests)) : nlohmann::json(nullptr);
  }
  r["per_request"] = per_request;
  r["per_request_totals"] = totals;
}

nlohmann::json host_results(const config::Scenario& s, const HostOptions& o, const FrameResult& run,
                            const std::vector<std::string>& ring_classes) {
  nlohmann::json r = run.metrics->to_json();
  r["source"] = "host";
  r["tool"] = {{"name", "uringsim"}, {"version", o.tool_version}};
  r["scenario"] = s.doc;
  r["variant"] = s.variant;
  r["seed"] = s.at("/seed");
  r["cpu"] = run.cpu.cpu;
  r["context_switches"] = run.cpu.context_switches;
  r["iowq"]["workers_peak"] = run.window.workers_peak;
  std::vector<std::string> classes = ring_classes;
  classes.push_back("iou-wrk");
  add_per_request(r, run.cpu.sched, run.cpu.requests, classes);
  return r;
}

nlohmann::json host_run_info(const config::Scenario& s, const MachineInfo& m, const FrameResult& run,
                             const nlohmann::json& ignored) {
  nlohmann::json j = m.to_json();
  j["io_uring_disabled"] = read_io_uring_disabled();
  j["warmup_ms"] = s.at("/warmup_ms");
  j["window_ms"] = run.cpu.seconds * 1e3;  // as measured between the CPU snapshots
  j["wall_s"] = run.wall_s;
  j["other_cpu_pct"] = run.cpu.other_cpu_pct;
  j["runner_cpu_pct"] = run.cpu.runner_cpu_pct;
  j["quiet_wait"] = run.quiet.to_json();
  j["cpu_speed"] = {{"before", run.speed_before.to_json()}, {"after", run.speed_after.to_json()}};
  j["idle_wake"] = {{"before", wake_probe_json(run.wake_before)}};
  j["syscall"] = {{"before", run.syscall_before.to_json()}};
  j["kick"] = {{"before", kick_probe_json(run.kick_before)}};
  j["ignored_fields"] = ignored;
  j["peak_rss_bytes"] = analysis::peak_rss_bytes();
  return j;
}

std::vector<std::pair<std::string, std::string>> host_summary(const nlohmann::json& r,
                                                              const nlohmann::json& info) {
  auto num = [](const nlohmann::json& j, const char* key, const char* spec) -> std::string {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? fmt::format(fmt::runtime(spec), it->get<double>()) : "-";
  };
  std::vector<std::pair<std::string, std::string>> out;
  const auto& lat = r.at("latency_us");
  out.emplace_back("throughput", num(r.at("throughput"), "ops_per_s", "{:.1f} ops/s"));
  out.emplace_back("latency (us)", "mean " + num(lat, "mean", "{:.3f}") + "  p50 " +
                                       num(lat, "p50", "{:.3f}") + "  p99 " + num(lat, "p99", "{:.3f}") +
                                       "  max " + num(lat, "max", "{:.3f}"));
  std::string by;
  for (const auto& [k, v] : r.at("cpu").at("by_thread").items())
    by += fmt::format("  {} {:.1f}", k.substr(0, k.size() - 4), v.get<double>());
  out.emplace_back("cpu", num(r.at("cpu"), "total_pct", "{:.1f} %") + (by.empty() ? "" : " =" + by));
  const auto& rq = r.at("requests");
  out.emplace_back(
      "requests",
      fmt::format("submitted {}  completed {}  in flight {}", rq.at("submitted").get<std::uint64_t>(),
                  rq.at("completed").get<std::uint64_t>(), rq.at("in_flight_at_end").get<std::int64_t>()));
  if (const auto pr = r.find("per_request"); pr != r.end())
    out.emplace_back("per request", num(*pr, "context_switches", "{:.3f}") +
                                        " context switches (ring threads, io-wq), " +
                                        num(*pr, "ipis", "{:.3f}") + " IPIs (whole machine)");
  out.emplace_back("other processes", num(info, "other_cpu_pct", "{:.1f} % CPU") +
                                          num(info, "runner_cpu_pct", " (the runner itself: {:.1f} %)"));
  out.emplace_back("machine",
                   fmt::format("{}, {} CPUs, {}", info.at("kernel_release").get<std::string>(),
                               info.at("nproc").get<int>(), info.at("cpu_model").get<std::string>()));
  return out;
}

}  // namespace uringsim::host
