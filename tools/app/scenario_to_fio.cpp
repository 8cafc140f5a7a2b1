// A scenario -> a fio job file. The options are the ones fio_to_scenario.cpp reads, written so that
// import-fio gives the same workload, duration and warm-up back (tests/test_export_fio.cpp).
#include "tools/app/scenario_to_fio.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "config/input_error.hpp"

namespace uringsim::app::fio {
namespace {

using config::InputError;
using nlohmann::json;

// fio's percentile_list holds at most FIO_IO_U_LIST_MAX_LEN values (stat.h).
constexpr std::size_t kFioMaxPercentiles = 20;
// import-fio's ring: the schema's default, or the depth when it is larger (fio sizes its ring from iodepth).
constexpr std::int64_t kDefaultSqEntries = 4096;

// Fields written as fio options (or handled below), so not listed as inexpressible.
const std::set<std::string>& mapped_fields() {
  static const std::set<std::string> s = {"/name",
                                          "/description",
                                          "/variants",
                                          "/workload",
                                          "/duration_ms",
                                          "/warmup_ms",
                                          "/measure/percentiles",
                                          "/kernel/ring/sq_entries"};
  return s;
}

// Why fio cannot say it, by field or the nearest enclosing object.
std::string reason_for(const std::string& pointer, const json& value) {
  if (pointer == "/kernel/sqpoll/idle_us")
    return fmt::format("stock fio has no option; seed 001's patched fio: io_sq_thread_idle={}", value.dump());
  if (pointer == "/seed") return "the simulator's random streams";
  if (pointer.rfind("/machine/", 0) == 0) return "the simulated machine; fio runs on the machine at hand";
  if (pointer.rfind("/device/", 0) == 0) return "the simulated drive";
  if (pointer.rfind("/costs/", 0) == 0) return "the simulator's cost table";
  if (pointer.rfind("/measure/", 0) == 0) return "the simulator's time series";
  return "model only";
}

// The same scenario with every field at its default, to list only what this one changes.
const json& defaults_doc() {
  static const json d =
      config::load_scenario_text(R"({"name": "defaults", "workload": {"type": "fio"}})", "defaults").doc;
  return d;
}

// "; not expressible in fio: POINTER = VALUE (WHY)" for every leaf that differs from its default.
void list_model_only(const json& value, const json* dflt, const std::string& pointer,
                     std::vector<std::string>& out) {
  if (mapped_fields().count(pointer)) return;
  if (value.is_object()) {
    for (const auto& [key, v] : value.items()) {
      const json* d = dflt && dflt->is_object() && dflt->contains(key) ? &dflt->at(key) : nullptr;
      list_model_only(v, d, pointer + "/" + key, out);
    }
    return;
  }
  if (dflt && *dflt == value) return;
  // dump() escapes control characters, so one value is one comment line.
  out.push_back(fmt::format("; not expressible in fio: {} = {} ({})", pointer,
                            value.dump(-1, ' ', false, json::error_handler_t::replace),
                            reason_for(pointer, value)));
}

// fio's time syntax in the largest exact unit: 1s, 20ms, 300us. Times finer than a microsecond are
// rounded (the note says so); a positive time never becomes 0, which fio reads as "unlimited".
std::string fio_time(double ms, bool positive, const std::string& pointer, std::vector<std::string>& notes) {
  const double exact_us = ms * 1e3;
  auto us = static_cast<std::int64_t>(std::llround(exact_us));
  if (positive && us < 1) us = 1;
  if (std::abs(static_cast<double>(us) - exact_us) > 1e-6 * std::max(1.0, exact_us))
    notes.push_back(
        fmt::format("; not expressible in fio: {} = {} (fio's times are whole microseconds; written {}us)",
                    pointer, json(ms).dump(), us));
  if (us % 1000000 == 0 && us != 0) return fmt::format("{}s", us / 1000000);
  if (us % 1000 == 0 && us != 0) return fmt::format("{}ms", us / 1000);
  return fmt::format("{}us", us);
}

// A job section name fio and import-fio both read back as written: [A-Za-z0-9._-], not "global".
std::string section_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty()) return "job";
  if (out == "global") return "global-job";
  return out;
}

// filename= value: fio separates several files with ':' (escaped as "\:"), and a job file cannot hold
// a comment character, a control character or surrounding blanks in a value.
std::string filename_value(const std::string& target) {
  if (target.find_first_of(";#") != std::string::npos ||
      std::any_of(target.begin(), target.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20; }) ||
      target.front() == ' ' || target.back() == ' ')
    throw InputError(
        fmt::format("--target {}: a fio job file cannot name this path (it has ';', '#', a control character "
                    "or surrounding spaces)",
                    json(target).dump(-1, ' ', false, json::error_handler_t::replace)));
  std::string out;
  for (const char c : target) {
    if (c == ':') out += '\\';
    out += c;
  }
  return out;
}

std::string number_text(double x) {
  return fmt::format("{}", x);
}

}  // namespace

std::string scenario_to_fio(const config::Scenario& scenario, const ExportOptions& options) {
  const json& doc = scenario.doc;
  const json& w = doc.at("workload");
  const auto type = w.at("type").get<std::string>();
  if (type != "fio")
    throw InputError(fmt::format("/workload/type: expected \"fio\", got {}", json(type).dump()));

  std::vector<std::string> notes;  // the comments at the top
  list_model_only(doc, &defaults_doc(), "", notes);

  const auto iodepth = w.at("iodepth").get<std::int64_t>();
  const auto sq_entries = doc.at("/kernel/ring/sq_entries"_json_pointer).get<std::int64_t>();
  const std::int64_t fio_ring = std::max(iodepth, kDefaultSqEntries);
  if (sq_entries != fio_ring)
    notes.push_back(fmt::format(
        "; not expressible in fio: /kernel/ring/sq_entries = {} (fio sizes its ring from iodepth = {})",
        sq_entries, iodepth));

  std::vector<std::string> lines;  // the job's options, in the order of docs/import-fio.md's table
  lines.push_back("ioengine=io_uring");
  const auto rw = w.at("rw").get<std::string>();
  const auto mix = w.at("rwmixread").get<std::int64_t>();
  lines.push_back("rw=" + rw);
  lines.push_back(fmt::format("rwmixread={}", mix));
  lines.push_back(fmt::format("bs={}", w.at("bs_bytes").get<std::uint64_t>()));
  lines.push_back(fmt::format("iodepth={}", iodepth));

  const double rate = w.at("rate_iops").get<double>();
  if (rate > 0) {
    // fio's rate_iops is an integer per direction: a positive rate is never rounded to 0 (unpaced).
    auto whole = [](double r) { return std::max<std::int64_t>(1, std::llround(r)); };
    if (rate != std::floor(rate))
      notes.push_back(fmt::format(
          "; not expressible in fio: /workload/rate_iops = {} (fio's rate_iops is an integer; written {})",
          number_text(rate), whole(rate)));
    if (rw == "randrw") {
      // fio paces reads and writes separately; the workload paces the total, split here by the mix.
      const double r = rate * static_cast<double>(mix) / 100, wr = rate - r;
      const std::int64_t rr = r > 0 ? whole(r) : 0, ww = wr > 0 ? whole(wr) : 0;
      notes.push_back(fmt::format(
          "; approximate: /workload/rate_iops = {} paces reads and writes together; fio paces each "
          "direction, written as {} reads and {} writes per second (import-fio refuses the pair)",
          number_text(rate), rr, ww));
      lines.push_back(fmt::format("rate_iops={},{}", rr, ww));
    } else {
      lines.push_back(fmt::format("rate_iops={}", whole(rate)));
    }
  }
  lines.push_back(fmt::format("direct={}", w.at("direct").get<bool>() ? 1 : 0));
  if (w.at("hipri").get<bool>()) lines.push_back("hipri");
  if (w.at("hybrid_iopoll").get<bool>())
    notes.push_back(
        "; not expressible in fio: /workload/hybrid_iopoll (fio's io_uring engine never sets "
        "IORING_SETUP_HYBRID_IOPOLL; written as classic hipri)");
  if (w.at("filesystem").get<std::string>() == "xfs")
    notes.push_back(
        "; not expressible here: /workload/filesystem = xfs (point filename= at a preallocated file on an "
        "XFS "
        "mount instead of the block device)");
  if (w.at("sqthread_poll").get<bool>()) lines.push_back("sqthread_poll");
  if (const auto cpu = w.at("sqthread_poll_cpu").get<std::int64_t>(); cpu >= 0)
    lines.push_back(fmt::format("sqthread_poll_cpu={}", cpu));
  if (const auto cpu = w.at("cpus_allowed").get<std::int64_t>(); cpu >= 0)
    lines.push_back(fmt::format("cpus_allowed={}", cpu));
  lines.push_back(fmt::format("numjobs={}", w.at("numjobs").get<std::int64_t>()));
  // Job threads reported as one group, as the workload runs and reports them.
  lines.push_back("thread");
  lines.push_back("group_reporting");
  // A simulation runs for its duration, whatever the I/O done: fio's time_based.
  lines.push_back("time_based");
  lines.push_back("runtime=" + fio_time(doc.at("duration_ms").get<double>(), true, "/duration_ms", notes));
  lines.push_back("ramp_time=" + fio_time(doc.at("warmup_ms").get<double>(), false, "/warmup_ms", notes));

  // The run's latency is fio's lat; its percentiles are the scenario's.
  const json& pct = doc.at("/measure/percentiles"_json_pointer);
  lines.push_back("lat_percentiles=1");
  if (pct.size() <= kFioMaxPercentiles) {
    std::string list;
    for (const auto& p : pct) {
      if (!list.empty()) list += ':';
      list += number_text(p.get<double>());
    }
    lines.push_back("percentile_list=" + list);
  } else {
    notes.push_back(
        fmt::format("; not expressible in fio: /measure/percentiles = {} (fio takes at most {} "
                    "percentiles; fio's default list is used)",
                    pct.dump(), kFioMaxPercentiles));
  }

  for (const auto& extra : options.extra_options) lines.push_back(extra);
  if (!options.target.empty()) {
    lines.push_back("filename=" + filename_value(options.target));
    if (options.size_bytes > 0) lines.push_back(fmt::format("size={}", options.size_bytes));
  } else {
    notes.push_back(
        "; no filename: give the file or device to run on (uringsim export-fio --target PATH, or fio "
        "--filename=PATH --size=SIZE)");
  }

  const json name = doc.at("name");
  std::string out = "; fio job file written by uringsim export-fio from scenario " +
                    name.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!scenario.variant.empty())
    out += ", variant " + json(scenario.variant).dump(-1, ' ', false, json::error_handler_t::replace);
  out +=
      "\n; uringsim import-fio reads it back. Scenario fields fio has no option for, where not at their "
      "defaults:\n";
  for (const auto& n : notes) out += n + "\n";
  if (notes.empty()) out += "; (none)\n";
  out += "\n[" + section_name(doc.at("name").get<std::string>()) + "]\n";
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::uint64_t size_for_target(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISBLK(st.st_mode)) return 0;
    if (S_ISREG(st.st_mode) && st.st_size > 0) return static_cast<std::uint64_t>(st.st_size);
  }
  return kDefaultFileBytes;
}

}  // namespace uringsim::app::fio
