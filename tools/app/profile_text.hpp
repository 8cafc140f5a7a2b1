#pragma once
// The CPU profile (results.json `profile`) in the text formats other tools read: the layout of
// `perf report --stdio --sort comm,sym`, and the folded stacks flame-graph tools take.
#include <string>

#include <nlohmann/json.hpp>

namespace uringsim::app {

// The cycles of one sample, as if recorded with `perf record -e cycles -c 1000`: the sample count
// in the header is the event count divided by it.
constexpr double kCyclesPerSample = 1000;

// A symbol as perf prints it: "[k] io_submit_sqes" for kernel code paths, "[.] app_event_loop"
// for ours that are user space ("[app] event loop"). No spaces, so columns split on whitespace.
std::string perf_symbol(const std::string& label);
// The name alone, without the mark, spaces and punctuation replaced by '_'.
std::string symbol_name(const std::string& label);

// `perf report --stdio --sort comm,sym`: '#' header and comment lines, the column header and its
// dotted underline, one row per (command, symbol) sorted by overhead.
std::string perf_report_text(const nlohmann::json& profile);

// One line per (command, symbol): "comm;symbol count", count = cycles rounded to an integer;
// kernel symbols end in "_[k]" (as stackcollapse-perf --kernel marks them).
std::string folded_stacks(const nlohmann::json& profile);

}  // namespace uringsim::app
