#include "config/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/cost_table.hpp"
#include "config/input_error.hpp"
#include "config/json_text.hpp"
#include "config/suggest.hpp"

namespace uringsim::config {

namespace {

using ojson = nlohmann::ordered_json;

// Strict reading of one file: every problem is "<source>: <pointer>: <what was expected>".
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw InputError(fmt::format("{}: {}: {}", source_, show_pointer(pointer), message));
  }

  // v must be an object with every key of `fields`, and no keys but those and `optional`.
  void fields(const ojson& v, const std::string& pointer, const std::vector<std::string>& fields,
              const std::vector<std::string>& optional = {}) const {
    if (!v.is_object()) fail(pointer, "expected object, got " + show_value(v));
    std::vector<std::string> known = fields;
    known.insert(known.end(), optional.begin(), optional.end());
    for (const auto& [key, value] : v.items())
      if (std::find(known.begin(), known.end(), key) == known.end()) unknown(key, known, pointer);
    for (const auto& f : fields)
      if (!v.contains(f)) fail(pointer_append(pointer, f), "missing required field");
  }

  [[noreturn]] void unknown(const std::string& key, const std::vector<std::string>& known,
                            const std::string& pointer) const {
    const auto guess = closest(key, known);
    fail(pointer_append(pointer, key),
         guess ? fmt::format("unknown key (did you mean {}?)", ojson(*guess).dump())
               : fmt::format("unknown key (expected one of: {})", fmt::join(known, ", ")));
  }

  std::string string(const ojson& obj, const std::string& pointer, const char* key) const {
    const ojson& v = obj.at(key);
    if (!v.is_string()) fail(pointer_append(pointer, key), "expected string, got " + show_value(v));
    return v.get<std::string>();
  }

  double number(const ojson& obj, const std::string& pointer, const char* key, double min,
                bool exclusive) const {
    const ojson& v = obj.at(key);
    const std::string p = pointer_append(pointer, key);
    const std::string want = fmt::format("a finite number {} {}", exclusive ? ">" : ">=", min);
    if (!v.is_number()) fail(p, fmt::format("expected {}, got {}", want, show_value(v)));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < min || (exclusive && x == min))
      fail(p, fmt::format("expected {}, got {}", want, show_value(v)));
    return x;
  }

  double finite(const ojson& obj, const std::string& pointer, const char* key) const {
    const ojson& v = obj.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(pointer_append(pointer, key), "expected a finite number, got " + show_value(v));
    return v.get<double>();
  }

  std::optional<double> optional_number(const ojson& obj, const std::string& pointer, const char* key) const {
    if (obj.at(key).is_null()) return std::nullopt;
    return number(obj, pointer, key, 0, false);
  }

  // Points [x, y], each finite, from 0 to 1e9 (as the scenario field), x increasing, at most 64.
  std::vector<std::pair<double, double>> curve(const ojson& obj, const std::string& pointer, const char* key,
                                               const char* x, const char* y) const {
    const ojson& v = obj.at(key);
    const std::string p = pointer_append(pointer, key);
    if (!v.is_array() || v.size() > 64)
      fail(p, fmt::format("expected an array of at most 64 points [{}, {}], got {}", x, y, show_value(v)));
    std::vector<std::pair<double, double>> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const ojson& pt = v[i];
      const std::string at = pointer_append(p, std::to_string(i));
      auto ok = [](const ojson& x) {
        return x.is_number() && std::isfinite(x.get<double>()) && x.get<double>() >= 0 &&
               x.get<double>() <= 1e9;
      };
      if (!pt.is_array() || pt.size() != 2 || !ok(pt[0]) || !ok(pt[1]))
        fail(at,
             fmt::format("expected a point [{}, {}] of numbers from 0 to 1e9, got {}", x, y, show_value(pt)));
      if (!out.empty() && pt[0].get<double>() <= out.back().first)
        fail(pointer_append(at, "0"), fmt::format("expected more than {} ({} must increase), got {}",
                                                  out.back().first, x, show_value(pt[0])));
      out.emplace_back(pt[0].get<double>(), pt[1].get<double>());
    }
    return out;
  }

  std::uint64_t count(const ojson& obj, const std::string& pointer, const char* key) const {
    const ojson& v = obj.at(key);
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
      fail(pointer_append(pointer, key), "expected an integer >= 0, got " + show_value(v));
    return v.get<std::uint64_t>();
  }

 private:
  std::string source_;
};

// Cost table units by key, read once from the embedded table.
const nlohmann::json& table() {
  static const nlohmann::json t = CostTable::defaults().describe();
  return t;
}

}  // namespace

nlohmann::json Calibration::provenance() const {
  return {{"kernel_release", kernel_release}, {"cpu_model", cpu_model}, {"date", date}};
}

nlohmann::json Calibration::to_json() const {
  nlohmann::json j;
  j["format"] = std::string(kCalibrationFormat);
  j["kernel_release"] = kernel_release;
  j["cpu_model"] = cpu_model;
  j["date"] = date;
  j["quick"] = quick;
  auto opt = [](const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); };
  j["machine"] = {{"cores", machine.cores},
                  {"ghz", machine.ghz},
                  {"ghz_source", machine.ghz_source},
                  {"wake_idle_ns", opt(machine.wake_idle_ns)},
                  {"wake_busy_ns", opt(machine.wake_busy_ns)},
                  {"idle_exit_ns", opt(machine.idle_exit_ns)},
                  {"halt_poll_ns", opt(machine.halt_poll_ns)},
                  {"preempt", machine.preempt ? nlohmann::json(*machine.preempt) : nlohmann::json(nullptr)}};
  if (machine.speed_ns_per_add) j["machine"]["speed_ns_per_add"] = *machine.speed_ns_per_add;
  if (machine.syscall_ns) j["machine"]["syscall_ns"] = *machine.syscall_ns;
  if (machine.wake_pack_util) j["machine"]["wake_pack_util"] = *machine.wake_pack_util;
  if (machine.stall_lengths) {
    j["machine"]["stall_lengths"] = nlohmann::json::array();
    for (const auto& [ns, per_s] : *machine.stall_lengths)
      j["machine"]["stall_lengths"].push_back({ns, per_s});
  } else if (machine.stall_every_ns && machine.stall_ns) {
    j["machine"]["stall_every_ns"] = *machine.stall_every_ns;
    j["machine"]["stall_ns"] = *machine.stall_ns;
  }
  if (machine.idle_exit_curve) {
    j["machine"]["idle_exit_curve"] = nlohmann::json::array();
    for (const auto& [idle, exit] : *machine.idle_exit_curve)
      j["machine"]["idle_exit_curve"].push_back({idle, exit});
  }
  if (passes)
    j["passes"] = {{"asked", passes->asked},
                   {"kept", passes->kept},
                   {"dropped", passes->dropped},
                   {"max_ns_per_add", opt(passes->max_ns_per_add)},
                   {"waited_s", passes->waited_s}};
  j["costs"] = nlohmann::json::object();
  for (const auto& [key, c] : costs)
    j["costs"][key] = {{"value", c.value},     {"unit", c.unit},     {"method", c.method},
                       {"samples", c.samples}, {"median", c.median}, {"spread", c.spread}};
  j["defaults_kept"] = nlohmann::json::array();
  for (const auto& [key, reason] : defaults_kept)
    j["defaults_kept"].push_back({{"key", key}, {"reason", reason}});
  return j;
}

Calibration parse_calibration_text(std::string_view text, const std::string& source) {
  const ojson file = parse_json_text(text, source);
  const Reader r(source);
  r.fields(file, "",
           {"format", "kernel_release", "cpu_model", "date", "quick", "machine", "costs", "defaults_kept"},
           {"passes"});
  Calibration c;
  c.source = source;
  if (r.string(file, "", "format") != kCalibrationFormat)
    r.fail("/format",
           fmt::format("expected \"{}\", got {}", kCalibrationFormat, show_value(file.at("format"))));
  c.kernel_release = r.string(file, "", "kernel_release");
  c.cpu_model = r.string(file, "", "cpu_model");
  c.date = r.string(file, "", "date");
  if (!file.at("quick").is_boolean())
    r.fail("/quick", "expected boolean, got " + show_value(file.at("quick")));
  c.quick = file.at("quick").get<bool>();
  if (file.contains("passes")) {
    const ojson& p = file.at("passes");
    r.fields(p, "/passes", {"asked", "kept", "dropped", "max_ns_per_add", "waited_s"});
    CalibrationPasses cp;
    auto small = [&](const char* key, std::uint64_t min) {
      const std::uint64_t n = r.count(p, "/passes", key);
      if (n < min || n > 1000)
        r.fail(pointer_append("/passes", key),
               fmt::format("expected an integer from {} to 1000, got {}", min, show_value(p.at(key))));
      return static_cast<int>(n);
    };
    cp.asked = small("asked", 1);
    cp.kept = small("kept", 1);
    cp.dropped = small("dropped", 0);
    if (cp.kept > cp.asked)
      r.fail("/passes/kept", fmt::format("expected at most asked ({}), got {}", cp.asked, cp.kept));
    cp.max_ns_per_add = r.optional_number(p, "/passes", "max_ns_per_add");
    cp.waited_s = r.number(p, "/passes", "waited_s", 0, false);
    c.passes = cp;
  }

  const ojson& m = file.at("machine");
  r.fields(m, "/machine",
           {"cores", "ghz", "ghz_source", "wake_idle_ns", "wake_busy_ns", "idle_exit_ns", "halt_poll_ns"},
           {"preempt", "speed_ns_per_add", "syscall_ns", "idle_exit_curve", "stall_every_ns", "stall_ns",
            "stall_lengths", "wake_pack_util"});
  const ojson& cores = m.at("cores");
  if (!cores.is_number_integer() || cores.get<std::int64_t>() < 1 || cores.get<std::int64_t>() > 4096)
    r.fail("/machine/cores", "expected an integer from 1 to 4096, got " + show_value(cores));
  c.machine.cores = cores.get<int>();
  c.machine.ghz = r.number(m, "/machine", "ghz", 0, true);
  c.machine.ghz_source = r.string(m, "/machine", "ghz_source");
  c.machine.wake_idle_ns = r.optional_number(m, "/machine", "wake_idle_ns");
  c.machine.wake_busy_ns = r.optional_number(m, "/machine", "wake_busy_ns");
  c.machine.idle_exit_ns = r.optional_number(m, "/machine", "idle_exit_ns");
  c.machine.halt_poll_ns = r.optional_number(m, "/machine", "halt_poll_ns");
  if (m.contains("speed_ns_per_add"))
    c.machine.speed_ns_per_add = r.optional_number(m, "/machine", "speed_ns_per_add");
  if (m.contains("syscall_ns")) c.machine.syscall_ns = r.optional_number(m, "/machine", "syscall_ns");
  if (m.contains("wake_pack_util")) {
    c.machine.wake_pack_util = r.number(m, "/machine", "wake_pack_util", 0, false);
    if (*c.machine.wake_pack_util > 1)
      r.fail("/machine/wake_pack_util",
             fmt::format("expected a fraction of one CPU from 0 to 1, got {}", *c.machine.wake_pack_util));
  }
  if (m.contains("idle_exit_curve"))
    c.machine.idle_exit_curve = r.curve(m, "/machine", "idle_exit_curve", "idle_ns", "exit_ns");
  if (m.contains("stall_every_ns") != m.contains("stall_ns"))
    r.fail("/machine", "expected stall_every_ns and stall_ns together, or neither");
  if (m.contains("stall_every_ns")) {
    c.machine.stall_every_ns = r.optional_number(m, "/machine", "stall_every_ns");
    c.machine.stall_ns = r.optional_number(m, "/machine", "stall_ns");
  }
  if (m.contains("stall_lengths")) {
    if (m.contains("stall_every_ns"))
      r.fail("/machine", "expected stall_lengths or stall_every_ns and stall_ns, not both");
    c.machine.stall_lengths = r.curve(m, "/machine", "stall_lengths", "ns", "per_s");
  }
  // Optional: calibrations made before it was read have none (the scenario's value stays).
  if (m.contains("preempt") && !m.at("preempt").is_null()) {
    const ojson& p = m.at("preempt");
    const std::string v = p.is_string() ? p.get<std::string>() : "";
    if (v != "none" && v != "voluntary" && v != "full")
      r.fail("/machine/preempt", "expected \"none\", \"voluntary\", \"full\" or null, got " + show_value(p));
    c.machine.preempt = v;
  }

  const ojson& costs = file.at("costs");
  if (!costs.is_object()) r.fail("/costs", "expected object, got " + show_value(costs));
  std::vector<std::string> keys;
  for (const auto& [key, _] : table().items()) keys.push_back(key);
  for (const auto& [key, e] : costs.items()) {
    const std::string p = pointer_append("/costs", key);
    if (!table().contains(key)) r.unknown(key, keys, "/costs");
    r.fields(e, p, {"value", "unit", "method", "samples", "median", "spread"});
    CalibratedCost cc;
    cc.unit = r.string(e, p, "unit");
    const std::string want = table().at(key).at("unit").get<std::string>();
    if (cc.unit != want)
      r.fail(pointer_append(p, "unit"), fmt::format("expected \"{}\" (the cost table's unit for {}), got {}",
                                                    want, key, show_value(e.at("unit"))));
    cc.value = r.number(e, p, "value", 0, false);
    cc.method = r.string(e, p, "method");
    cc.samples = r.count(e, p, "samples");
    cc.median = r.finite(e, p, "median");
    cc.spread = r.string(e, p, "spread");
    c.costs.emplace(key, std::move(cc));
  }

  const ojson& kept = file.at("defaults_kept");
  if (!kept.is_array()) r.fail("/defaults_kept", "expected array, got " + show_value(kept));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::string p = "/defaults_kept/" + std::to_string(i);
    r.fields(kept[i], p, {"key", "reason"});
    const std::string key = r.string(kept[i], p, "key");
    if (!table().contains(key)) {
      const auto guess = closest(key, keys);
      r.fail(p + "/key", fmt::format("expected a cost table key, got {}{}", show_value(kept[i].at("key")),
                                     guess ? fmt::format(" (did you mean \"{}\"?)", *guess) : ""));
    }
    if (c.costs.count(key)) r.fail(p + "/key", fmt::format("\"{}\" is also in /costs", key));
    if (!seen.insert(key).second) r.fail(p + "/key", fmt::format("\"{}\" is listed twice", key));
    c.defaults_kept.emplace_back(key, r.string(kept[i], p, "reason"));
  }
  return c;
}

Calibration load_calibration_file(const std::string& path) {
  return parse_calibration_text(read_input_file(path), path);
}

}  // namespace uringsim::config
