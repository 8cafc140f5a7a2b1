// fio options -> a uringsim scenario. Each supported option has one handler below; the table in
// docs/import-fio.md lists the same names. Later assignments win, as in fio.
#include "tools/app/fio_to_scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "config/input_error.hpp"

namespace uringsim::app::fio {
namespace {

using config::InputError;

// fio's default unit prefix base (fio HOWTO, kb_base: 1024, "compatibility mode").
constexpr unsigned kDefaultKbBase = 1024;
// A scenario's machine has at least this many cores (the schema's default machine).
constexpr int kMinCores = 4;
constexpr double kUsPerSecond = 1e6, kUsPerMs = 1e3;
// kernel.ring.sq_entries: the schema's default, and its maximum, which is the kernel's
// IORING_MAX_ENTRIES (io_uring/io_uring.c): a larger ring is refused by io_uring_setup.
constexpr std::uint64_t kDefaultSqEntries = 4096, kMaxSqEntries = 32768;
// fio's percentile_list holds at most FIO_IO_U_LIST_MAX_LEN values (stat.h).
constexpr std::size_t kMaxPercentiles = 20;

// What one job asks for, in fio's terms; defaults are fio's (HOWTO: rw=read, rwmixread=50, bs=4k,
// iodepth=1, unpaced, buffered, no polling, numjobs=1).
struct Settings {
  std::string rw = "read";
  std::int64_t rwmixread = 50;
  std::uint64_t bs_bytes = 4096;
  std::uint64_t iodepth = 1;
  std::uint64_t rate_iops = 0;
  bool direct = false, hipri = false, sqthread_poll = false;
  std::int64_t sqthread_poll_cpu = -1, cpus_allowed = -1;
  std::uint64_t numjobs = 1;
  std::optional<double> runtime_us, ramp_us, sq_idle_us;
  std::optional<std::vector<double>> percentiles;
  std::optional<std::string> ioengine;
  std::string rate_where;
  // Scenario field (JSON pointer) -> the option that set it, as written (see written()).
  std::map<std::string, std::string> origin;

  std::vector<std::string> no_effect;  // "key=value" as written, for the description
  std::vector<std::string> notes;      // "where: key=value: no effect: why", one per such option
  std::vector<std::string> ignored;    // "key (where)" of options not understood

  // Same simulated behaviour, apart from how many copies run.
  bool same_job(const Settings& o) const {
    return rw == o.rw && rwmixread == o.rwmixread && bs_bytes == o.bs_bytes && iodepth == o.iodepth &&
           rate_iops == o.rate_iops && direct == o.direct && hipri == o.hipri &&
           sqthread_poll == o.sqthread_poll && sqthread_poll_cpu == o.sqthread_poll_cpu &&
           cpus_allowed == o.cpus_allowed && runtime_us == o.runtime_us && ramp_us == o.ramp_us &&
           sq_idle_us == o.sq_idle_us && ioengine == o.ioengine && percentiles == o.percentiles;
  }
};

std::string what(const Option& o) {
  return fmt::format("{}: {}", o.where, o.key);
}

// The option as the user wrote it, for messages about the scenario field it set: `--iodepth=8` on a
// command line, `job.fio:3: iodepth=8` in a job file.
std::string written(const Option& o) {
  const std::string kv = o.value ? o.key + "=" + *o.value : o.key;
  return o.from_cmdline ? "--" + kv : fmt::format("{}: {}", o.where, kv);
}

// The scenario fields each option sets (several names may set one field).
const std::map<std::string, std::string>& field_of() {
  static const std::map<std::string, std::string> m = {{"rw", "/workload/rw"},
                                                       {"readwrite", "/workload/rw"},
                                                       {"rwmixread", "/workload/rwmixread"},
                                                       {"rwmixwrite", "/workload/rwmixread"},
                                                       {"bs", "/workload/bs_bytes"},
                                                       {"blocksize", "/workload/bs_bytes"},
                                                       {"iodepth", "/workload/iodepth"},
                                                       {"rate_iops", "/workload/rate_iops"},
                                                       {"direct", "/workload/direct"},
                                                       {"hipri", "/workload/hipri"},
                                                       {"sqthread_poll", "/workload/sqthread_poll"},
                                                       {"sqthread_poll_cpu", "/workload/sqthread_poll_cpu"},
                                                       {"cpus_allowed", "/workload/cpus_allowed"},
                                                       {"numjobs", "/workload/numjobs"},
                                                       {"runtime", "/duration_ms"},
                                                       {"timeout", "/duration_ms"},
                                                       {"ramp_time", "/warmup_ms"},
                                                       {"io_sq_thread_idle", "/kernel/sqpoll/idle_us"},
                                                       {"percentile_list", "/measure/percentiles"}};
  return m;
}

const std::string& need_value(const Option& o) {
  if (!o.value) throw InputError(fmt::format("{}: option {} needs a value", o.where, o.key));
  return *o.value;
}

// fio lists separate read,write[,trim] values with commas; only one value for all is modelled.
std::string single_value(const Option& o) {
  const std::string& v = need_value(o);
  std::vector<std::string> parts;
  std::size_t pos = 0;
  for (;;) {
    const auto comma = v.find(',', pos);
    parts.push_back(v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  for (const auto& p : parts)
    if (p != parts.front())
      throw InputError(
          fmt::format("{}: separate read/write values \"{}\" are not modelled; give one value", what(o), v));
  return parts.front();
}

// FIO_OPT_STR_SET options (hipri, sqthread_poll, time_based): bare means on, else an integer, 0 = off.
bool flag(const Option& o) {
  return !o.value || parse_int(*o.value, what(o)) != 0;
}

// FIO_OPT_BOOL options (direct): fio requires a value, 0 or 1.
bool boolean(const Option& o) {
  const auto v = parse_int(need_value(o), what(o));
  if (v != 0 && v != 1) throw InputError(fmt::format("{}: expected 0 or 1, got \"{}\"", what(o), *o.value));
  return v == 1;
}

std::uint64_t at_least(std::uint64_t v, std::uint64_t min, const Option& o) {
  if (v < min) throw InputError(fmt::format("{}: must be at least {}, got \"{}\"", what(o), min, *o.value));
  return v;
}

// One CPU number; fio's CPU lists and ranges ("0-3", "1,5") are not modelled.
std::int64_t one_cpu(const Option& o) {
  const std::string& v = need_value(o);
  if (v.find_first_of(",-:") != std::string::npos)
    throw InputError(
        fmt::format("{}: CPU lists and ranges (\"{}\") are not modelled; give one CPU", what(o), v));
  return parse_int(v, what(o));
}

using Handler = std::function<void(Settings&, const Option&, unsigned kb_base)>;

// Options nearly every real job file has that change nothing the model simulates, with why. Options
// that change the workload (fsync, verify, thinktime, iodepth_batch_*, rate, force_async, ...) are
// not here: they are errors (or, with --lenient, warnings).
const std::vector<std::pair<const char*, const char*>>& no_effect_options() {
  static const std::vector<std::pair<const char*, const char*>> t = {
      {"name", "a label (it names the scenario)"},
      {"description", "a label"},
      {"filename", "the device is the simulator's drive model, whatever its path"},
      {"directory", "the device is the simulator's drive model, whatever its path"},
      {"filename_format", "the device is the simulator's drive model, whatever its path"},
      {"nrfiles", "the drive model has no files: all I/O goes to the one device"},
      {"openfiles", "the drive model has no files: all I/O goes to the one device"},
      {"file_service_type", "the drive model has no files: all I/O goes to the one device"},
      {"size", "the drive model has no addresses, and the run lasts duration_ms"},
      {"filesize", "the drive model has no addresses"},
      {"io_size", "the run lasts duration_ms, whatever the amount of I/O"},
      {"io_limit", "the run lasts duration_ms, whatever the amount of I/O"},
      {"loops", "the run lasts duration_ms, whatever the amount of I/O"},
      {"offset", "the drive model has no addresses"},
      {"time_based", "a simulation always runs for its duration"},
      {"startdelay", "the measurement starts after warmup_ms (ramp_time)"},
      {"thread", "fio's jobs as threads instead of processes: io_uring behaves the same"},
      {"group_reporting", "reporting only: the jobs are reported as one group"},
      {"new_group", "reporting only"},
      {"stonewall", "the scenario holds one job, so there is no earlier job to wait for"},
      {"wait_for_previous", "the scenario holds one job, so there is no earlier job to wait for"},
      {"randrepeat", "seeds fio's offset generator; offsets are not modelled"},
      {"randseed", "seeds fio's offset generator; offsets are not modelled"},
      {"norandommap", "fio's map of offsets done; offsets are not modelled"},
      {"random_generator", "fio's offset generator; offsets are not modelled"},
      {"random_distribution",
       "fio's offset distribution; the drive model's service time does not depend on "
       "the offset"},
      {"invalidate", "drops the page cache before the job; the model has no page cache"},
      {"fadvise_hint", "a page-cache hint; the model has no page cache"},
      {"allow_mounted_write", "a safety check of fio's"},
      {"create_on_open", "file layout before the job"},
      {"fallocate", "file layout before the job"},
      {"overwrite", "file layout before the job"},
      {"end_fsync", "runs after the job, outside the measurement"},
      {"refill_buffers", "buffer contents; the drive model does not look at data"},
      {"scramble_buffers", "buffer contents; the drive model does not look at data"},
      {"zero_buffers", "buffer contents; the drive model does not look at data"},
      {"buffer_compress_percentage", "buffer contents; the drive model does not look at data"},
      {"buffer_pattern", "buffer contents; the drive model does not look at data"},
      {"mem", "how fio allocates its buffers"},
      {"iomem", "how fio allocates its buffers"},
      {"mem_align", "how fio allocates its buffers"},
      {"iomem_align", "how fio allocates its buffers"},
      {"lockmem", "how fio allocates its buffers"},
      {"fixedbufs",
       "registered buffers; the simulated per-I/O costs are those of the default, unregistered "
       "path"},
      {"registerfiles",
       "registered files (fio sets it with sqthread_poll); the simulated per-I/O costs are "
       "those of the default path"},
      {"nonvectored",
       "read/write instead of readv/writev; the simulated per-I/O costs do not tell them "
       "apart"},
      {"unit_base", "reporting only (bits or bytes)"},
      {"output", "reporting only"},
      {"output-format", "reporting only (run --fio-json writes fio's JSON layout)"},
      {"lat_percentiles", "reporting only: the run's latency is fio's lat"},
      {"clat_percentiles", "reporting only: results.json has clat percentiles"},
      {"slat_percentiles", "reporting only: results.json has slat percentiles"},
      {"significant_figures", "reporting only"},
      {"unified_rw_reporting", "reporting only"},
      {"disable_lat", "reporting only"},
      {"disable_clat", "reporting only"},
      {"disable_slat", "reporting only"},
      {"disable_bw_measurement", "reporting only"},
      {"gtod_reduce", "reporting only: the simulator measures every latency"},
      {"clocksource", "the simulator's clock is exact"},
      {"write_lat_log", "fio's log files"},
      {"write_bw_log", "fio's log files"},
      {"write_iops_log", "fio's log files"},
      {"write_hist_log", "fio's log files"},
      {"log_avg_msec", "fio's log files"},
      {"log_hist_msec", "fio's log files"},
      {"per_job_logs", "fio's log files"},
      {"eta", "fio's progress display"},
      {"eta-newline", "fio's progress display"},
      {"status-interval", "fio's progress display"},
      {"exitall", "the scenario holds one job"},
      {"exitall_on_error", "the scenario holds one job"},
      {"continue_on_error", "the simulated job always goes on after an I/O error (counted in fio.errors)"},
      {"nice", "the simulated scheduler has no priorities"},
      {"prio", "the simulated drive has no I/O priorities"},
      {"prioclass", "the simulated drive has no I/O priorities"},
      {"ioscheduler", "the simulated drive has no I/O scheduler"},
      {"cpus_allowed_policy", "cpus_allowed is one CPU, which the policy does not change"},
      {"numa_cpu_nodes", "the simulated machine has no NUMA nodes"},
      {"numa_mem_policy", "the simulated machine has no NUMA nodes"},
  };
  return t;
}

const std::map<std::string, Handler>& handlers() {
  static const std::map<std::string, Handler> h = [] {
    std::map<std::string, Handler> m;
    m["ioengine"] = [](Settings& s, const Option& o, unsigned) { s.ioengine = need_value(o); };
    m["rw"] = [](Settings& s, const Option& o, unsigned) {
      const std::string& v = need_value(o);
      static const char* const kModelled[] = {"read", "write", "randread", "randwrite", "randrw"};
      if (std::find(std::begin(kModelled), std::end(kModelled), v) == std::end(kModelled))
        throw InputError(fmt::format(
            "{}: \"{}\" is not modelled (read, write, randread, randwrite and randrw are)", what(o), v));
      s.rw = v;
    };
    m["readwrite"] = m["rw"];
    m["rwmixread"] = [](Settings& s, const Option& o, unsigned) {
      const auto v = parse_int(need_value(o), what(o));
      if (v < 0 || v > 100)
        throw InputError(fmt::format("{}: expected a percentage 0..100, got {}", what(o), v));
      s.rwmixread = v;
    };
    m["rwmixwrite"] = [](Settings& s, const Option& o, unsigned) {
      const auto v = parse_int(need_value(o), what(o));
      if (v < 0 || v > 100)
        throw InputError(fmt::format("{}: expected a percentage 0..100, got {}", what(o), v));
      s.rwmixread = 100 - v;
    };
    m["bs"] = [](Settings& s, const Option& o, unsigned kb) {
      s.bs_bytes = at_least(parse_size(single_value(o), kb, what(o)), 1, o);
    };
    m["blocksize"] = m["bs"];
    // fio's integer options take size suffixes too (iodepth=1k is 1024), hence parse_size.
    m["iodepth"] = [](Settings& s, const Option& o, unsigned kb) {
      s.iodepth = at_least(parse_size(need_value(o), kb, what(o)), 1, o);
    };
    m["rate_iops"] = [](Settings& s, const Option& o, unsigned kb) {
      s.rate_iops = parse_size(single_value(o), kb, what(o));
      s.rate_where = o.where;
    };
    m["direct"] = [](Settings& s, const Option& o, unsigned) { s.direct = boolean(o); };
    m["hipri"] = [](Settings& s, const Option& o, unsigned) { s.hipri = flag(o); };
    m["sqthread_poll"] = [](Settings& s, const Option& o, unsigned) { s.sqthread_poll = flag(o); };
    m["sqthread_poll_cpu"] = [](Settings& s, const Option& o, unsigned) {
      const auto v = parse_int(need_value(o), what(o));
      if (v < 0) throw InputError(fmt::format("{}: expected a CPU number >= 0, got {}", what(o), v));
      s.sqthread_poll_cpu = v;
    };
    m["cpus_allowed"] = [](Settings& s, const Option& o, unsigned) {
      const auto v = one_cpu(o);
      if (v < 0) throw InputError(fmt::format("{}: expected a CPU number >= 0, got {}", what(o), v));
      s.cpus_allowed = v;
    };
    m["numjobs"] = [](Settings& s, const Option& o, unsigned kb) {
      s.numjobs = at_least(parse_size(need_value(o), kb, what(o)), 1, o);
    };
    m["runtime"] = [](Settings& s, const Option& o, unsigned) {
      const double us = parse_time_us(need_value(o), kUsPerSecond, what(o));
      if (us <= 0) throw InputError(fmt::format("{}: must be more than 0", what(o)));
      s.runtime_us = us;
    };
    m["timeout"] = m["runtime"];
    m["ramp_time"] = [](Settings& s, const Option& o, unsigned) {
      s.ramp_us = parse_time_us(need_value(o), kUsPerSecond, what(o));
    };
    // Seed 001's patched fio: the SQPOLL thread's idle time, in microseconds (its table's unit).
    m["io_sq_thread_idle"] = [](Settings& s, const Option& o, unsigned) {
      s.sq_idle_us = parse_time_us(need_value(o), 1.0, what(o));
    };
    // fio's FIO_OPT_FLOAT_LIST: percentages separated by ':'; the loader checks their range.
    m["percentile_list"] = [](Settings& s, const Option& o, unsigned) {
      const std::string& v = need_value(o);
      std::vector<double> list;
      std::size_t pos = 0;
      for (;;) {
        const auto colon = v.find(':', pos);
        const std::string item = v.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
        double x = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || !std::isfinite(x))
          throw InputError(
              fmt::format("{}: expected percentages separated by ':' (1:50:99.9), got \"{}\"", what(o), v));
        list.push_back(x);
        if (colon == std::string::npos) break;
        pos = colon + 1;
      }
      if (list.size() > kMaxPercentiles)
        throw InputError(fmt::format("{}: fio takes at most {} percentiles, got {}", what(o), kMaxPercentiles,
                                     list.size()));
      s.percentiles = std::move(list);
    };
    // Accepted, no effect on the simulation: a note says why (docs/import-fio.md has the same table).
    for (const auto& [key, why] : no_effect_options())
      m[key] = [why = std::string(why)](Settings& s, const Option& o, unsigned) {
        const std::string kv = o.value ? o.key + "=" + *o.value : o.key;
        s.no_effect.push_back(kv);
        s.notes.push_back(fmt::format("{}: {}: no effect: {}", o.where, kv, why));
      };
    // Read before the other options (kb_base_of): it changes how sizes are read.
    m["kb_base"] = [](Settings& s, const Option& o, unsigned) {
      s.no_effect.push_back(o.key + "=" + *o.value);
    };
    return m;
  }();
  return h;
}

// kb_base changes how every size is read, so it is found first (the last one given wins).
unsigned kb_base_of(const Job& job) {
  unsigned kb = kDefaultKbBase;
  for (const auto& o : job.options)
    if (o.key == "kb_base") {
      const auto v = parse_int(need_value(o), what(o));
      if (v != 1000 && v != 1024)
        throw InputError(fmt::format("{}: expected 1000 or 1024, got {}", what(o), v));
      kb = static_cast<unsigned>(v);
    }
  return kb;
}

Settings map_job(const Job& job) {
  Settings s;
  const unsigned kb = kb_base_of(job);
  for (const auto& o : job.options) {
    const auto it = handlers().find(o.key);
    if (it == handlers().end())
      s.ignored.push_back(fmt::format("{} ({})", o.key, o.where));
    else
      it->second(s, o, kb);
    const auto f = field_of().find(o.key);
    if (f != field_of().end()) s.origin[f->second] = written(o);
  }
  const std::string job_label = job.name.empty() ? std::string("the job") : "job \"" + job.name + "\"";
  if (!s.ioengine)
    throw InputError(
        fmt::format("{}: {} has no ioengine; only ioengine=io_uring is simulated (fio's default is psync)",
                    job.where, job_label));
  if (*s.ioengine != "io_uring")
    throw InputError(
        fmt::format("{}: ioengine={} is not simulated; only io_uring is", job.where, *s.ioengine));
  if (s.rate_iops > 0 && s.rw == "randrw")
    throw InputError(fmt::format(
        "{}: rate_iops with rw=randrw is not mapped: fio paces reads and writes separately, the simulator "
        "paces the total",
        s.rate_where));
  return s;
}

// Whole numbers are written as integers (300000, not 300000.0), as a person would write them.
nlohmann::ordered_json number(double x) {
  if (x == std::floor(x) && std::abs(x) < 9e15) return static_cast<std::int64_t>(x);
  return x;
}

// A scenario name (a directory name: [A-Za-z0-9._-], at most 100) made from a job or file name.
std::string as_scenario_name(const std::string& raw) {
  std::string out;
  for (const char c : raw.substr(0, 100))
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  return out == "." || out == ".." ? "fio" : out;
}

std::string default_name(const Job& job, const ImportOptions& opts) {
  if (!opts.name.empty()) return opts.name;  // as given: a bad one is refused, naming it
  if (!job.name.empty()) return as_scenario_name(job.name);
  if (opts.source != "--cmdline" && !opts.source.empty()) {
    const auto stem = std::filesystem::path(opts.source).stem().string();
    if (!stem.empty()) return as_scenario_name(stem);
  }
  return "fio";
}

std::string job_names(const std::vector<Job>& jobs) {
  std::string out;
  for (const auto& j : jobs) out += (out.empty() ? "" : ", ") + j.name;
  return out;
}

}  // namespace

Imported to_scenario(const std::vector<Job>& jobs, const ImportOptions& opts) {
  if (jobs.empty()) throw InputError(fmt::format("{}: no jobs defined (only [global])", opts.source));

  // Pick the job: the one asked for, the only one, or several that describe the same job.
  std::vector<const Job*> chosen;
  for (const auto& j : jobs)
    if (opts.job.empty() || j.name == opts.job) chosen.push_back(&j);
  if (chosen.empty())
    throw InputError(
        fmt::format("{}: no job named \"{}\" (jobs: {})", opts.source, opts.job, job_names(jobs)));
  if (!opts.job.empty()) chosen.erase(chosen.begin() + 1, chosen.end());  // the first of that name
  std::vector<Settings> settings;
  for (const Job* j : chosen) settings.push_back(map_job(*j));
  Settings s = settings.front();
  for (std::size_t i = 1; i < settings.size(); ++i) {
    if (!settings[i].same_job(s))
      throw InputError(
          fmt::format("{}: jobs {} differ; a scenario holds one fio job: pick one with --job NAME (jobs: {})",
                      opts.source, fmt::format("\"{}\" and \"{}\"", chosen.front()->name, chosen[i]->name),
                      job_names(jobs)));
    s.numjobs += settings[i].numjobs;  // fio runs all job sections at once
  }
  // Every ignored option of every chosen job, without repeating a [global] line.
  std::vector<std::string> ignored;
  for (const auto& st : settings)
    for (const auto& ig : st.ignored)
      if (std::find(ignored.begin(), ignored.end(), ig) == ignored.end()) ignored.push_back(ig);

  Imported out;
  for (const auto& st : settings)
    for (const auto& n : st.notes)
      if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end()) out.notes.push_back(n);
  if (!ignored.empty()) {
    if (!opts.lenient) {
      std::string msg = "unsupported fio option";
      msg += ignored.size() > 1 ? "s" : "";
      for (const auto& ig : ignored) msg += "\n  " + ig;
      msg += "\n(docs/import-fio.md lists the supported options; --lenient ignores the others)";
      throw InputError(msg);
    }
    for (const auto& ig : ignored) out.warnings.push_back("ignored fio option " + ig);
  }

  const Job& job = *chosen.front();
  std::string description = "Imported by uringsim import-fio from " +
                            (opts.source == "--cmdline" ? std::string("a fio command line") : opts.source);
  if (!job.name.empty()) description += fmt::format(", job \"{}\"", job.name);
  description += ".";
  if (!s.no_effect.empty()) {
    description += " Accepted without effect:";
    for (std::size_t i = 0; i < s.no_effect.size(); ++i) description += (i ? ", " : " ") + s.no_effect[i];
    description += ".";
  }
  if (!ignored.empty()) description += fmt::format(" {} fio option(s) ignored (--lenient).", ignored.size());

  int cores = kMinCores;
  const std::pair<std::int64_t, const char*> cpus[] = {{s.sqthread_poll_cpu, "/workload/sqthread_poll_cpu"},
                                                       {s.cpus_allowed, "/workload/cpus_allowed"}};
  for (const auto& [cpu, field] : cpus)
    if (cpu >= 0 && cpu + 1 > cores) {
      cores = static_cast<int>(cpu) + 1;
      out.origin["/machine/cores"] = s.origin[field];
    }
  // fio sizes its ring from iodepth (engines/io_uring.c passes it to io_uring_setup), so a depth
  // beyond the default ring is a ring that large.
  if (s.iodepth > kMaxSqEntries)
    throw InputError(fmt::format(
        "{}: fio sizes the io_uring ring from iodepth, and a ring holds at most {} entries (the kernel's "
        "IORING_MAX_ENTRIES; kernel.ring.sq_entries)",
        s.origin["/workload/iodepth"], kMaxSqEntries));

  auto& sc = out.scenario;
  sc["name"] = default_name(job, opts);
  sc["description"] = description;
  if (s.runtime_us) sc["duration_ms"] = number(*s.runtime_us / kUsPerMs);
  if (s.ramp_us) sc["warmup_ms"] = number(*s.ramp_us / kUsPerMs);
  sc["machine"] = {{"cores", cores}};
  if (s.sq_idle_us) sc["kernel"]["sqpoll"] = {{"idle_us", number(*s.sq_idle_us)}};
  if (s.iodepth > kDefaultSqEntries) {
    sc["kernel"]["ring"] = {{"sq_entries", s.iodepth}};
    out.origin["/kernel/ring/sq_entries"] = s.origin["/workload/iodepth"];
  }
  sc["workload"] = {{"type", "fio"},
                    {"rw", s.rw},
                    {"rwmixread", s.rwmixread},
                    {"bs_bytes", s.bs_bytes},
                    {"iodepth", s.iodepth},
                    {"rate_iops", s.rate_iops},
                    {"direct", s.direct},
                    {"hipri", s.hipri},
                    {"sqthread_poll", s.sqthread_poll},
                    {"sqthread_poll_cpu", s.sqthread_poll_cpu},
                    {"cpus_allowed", s.cpus_allowed},
                    {"numjobs", s.numjobs}};
  if (s.percentiles) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const double p : *s.percentiles) list.push_back(number(p));
    sc["measure"] = {{"percentiles", list}};
  }
  for (const auto& [field, option] : s.origin) out.origin.emplace(field, option);
  return out;
}

std::string explain_rejection(const std::string& message, const std::string& label,
                              const Imported& imported) {
  const std::string head = label + ": /";
  if (message.rfind(head, 0) != 0) return message;
  const std::string rest = message.substr(label.size() + 2);  // "/pointer: what is wrong"
  const std::string pointer = rest.substr(0, rest.find(": "));
  // The option that set this field, or the nearest enclosing field one did.
  std::string origin;
  for (std::string p = pointer; !p.empty(); p = p.substr(0, p.rfind('/'))) {
    const auto it = imported.origin.find(p);
    if (it != imported.origin.end()) {
      origin = it->second;
      break;
    }
  }
  std::string out = (origin.empty() ? label : origin) + ": " + rest;
  // The device table is the one part of the scenario no fio option sets.
  if (pointer == "/workload/bs_bytes" && rest.find("service time") != std::string::npos) {
    const auto bs = imported.scenario["workload"]["bs_bytes"].get<std::uint64_t>();
    out += fmt::format(
        "\n(the default device model has no service time for {}-byte I/O; a scenario of that size needs "
        "`device.read`/`device.write` entries with bs_bytes {} (docs/models/nvme.md): import with a listed "
        "size, then add the entries and set workload.bs_bytes)",
        bs, bs);
  }
  return out;
}

}  // namespace uringsim::app::fio
