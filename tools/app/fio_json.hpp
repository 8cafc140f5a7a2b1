#pragma once
// `run --fio-json FILE`: a simulated fio workload's results in the layout of fio's
// `--output-format=json`, so that tools written for fio read them (docs/results-format.md,
// "fio's JSON"). Everything comes from results.json's `fio` section and the scenario: the same
// numbers, in fio's units (ns, KiB/s, ms) and names.
#include <string>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"

namespace uringsim::app::fio {

// {"fio version", "jobs": [one job: jobname, groupid, error, job options, read/write/trim:
// {io_bytes, io_kbytes, bw_bytes, bw, iops, runtime, total_ios, short_ios, drop_ios,
// slat_ns/clat_ns/lat_ns: {min, max, mean, stddev, N, percentile: {"1.000000": ns, ...}}},
// job_runtime, usr_cpu, sys_cpu, ctx, total_err], "disk_util": [], "uringsim": {...}}.
// InputError when the scenario's workload is not fio; std::out_of_range-like json errors when
// `results` is not a simulated fio run's results.json.
nlohmann::json fio_json(const config::Scenario& scenario, const nlohmann::json& results,
                        const std::string& tool_version);

// fio's percentile key: the percentage with 6 decimals ("99.900000").
std::string fio_percentile_key(double p);

}  // namespace uringsim::app::fio
