// Result writers.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace uringsim::analysis {

// Writes content to a hidden temporary file in path's directory, fsyncs it and renames it over path, so
// readers see either the old file or the complete new one. Creates missing parent directories. On error
// the temporary file is removed and std::runtime_error is thrown.
void write_file_atomic(const std::string& path, const std::string& content);

// Deterministic text for results: 2-space indent, keys sorted (nlohmann::json objects are std::maps),
// trailing newline. NaN and +-infinity become null, so the output is always valid JSON. Invalid UTF-8 in
// strings is replaced rather than throwing.
std::string dump_json(const nlohmann::json& j);

// Peak resident set size of this process (VmHWM from /proc/self/status), or 0 if unavailable.
std::uint64_t peak_rss_bytes();

}  // namespace uringsim::analysis
