// `uringsim sweep`: a scenario over the Cartesian product of parameter grids x variants x
// replications, one `uringsim run` child per point, resumable and shardable; `uringsim merge` joins
// shard directories. Both derive sweep.csv / sweep.json only from DIR/sweep_spec.json and the
// finished points, so a merge of shards is byte-identical to one full sweep.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "analysis/io.hpp"
#include "config/scenario.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/json_input.hpp"
#include "tools/app/load_scenario.hpp"
#include "tools/app/read_file.hpp"
#include "tools/app/study_metrics.hpp"
#include "tools/app/study_runs.hpp"
#include "tools/app/subprocess.hpp"
#include "tools/app/sweep.hpp"

namespace uringsim::app {
namespace sweep {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const auto at = s.find(sep, pos);
    out.push_back(s.substr(pos, at == std::string::npos ? std::string::npos : at - pos));
    if (at == std::string::npos) return out;
    pos = at + 1;
  }
}

bool parse_int(const std::string& s, long long& v) {
  const auto* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  return !s.empty() && r.ec == std::errc() && r.ptr == end;
}

bool parse_num(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

// Expands start:stop:step (start, start+step, ... < stop) into value texts.
std::vector<std::string> expand_range(const std::string& text, const std::vector<std::string>& p) {
  constexpr std::size_t kMaxValues = 100000;  // a typo like 0:1e9:1 must not exhaust memory
  std::vector<std::string> out;
  long long a = 0, b = 0, c = 0;
  if (parse_int(p[0], a) && parse_int(p[1], b) && parse_int(p[2], c)) {
    if (c <= 0) throw std::invalid_argument("range " + text + ": step must be positive");
    for (long long x = a; x < b; x += c) {
      if (out.size() >= kMaxValues) throw std::invalid_argument("range " + text + ": too many values");
      out.push_back(std::to_string(x));
    }
  } else {
    double x0 = 0, x1 = 0, dx = 0;
    if (!parse_num(p[0], x0) || !parse_num(p[1], x1) || !parse_num(p[2], dx))
      throw std::invalid_argument("range " + text + ": start:stop:step must be numbers");
    if (dx <= 0) throw std::invalid_argument("range " + text + ": step must be positive");
    // start + k*step rather than repeated addition, so rounding errors do not accumulate.
    for (std::size_t k = 0;; ++k) {
      const double x = x0 + static_cast<double>(k) * dx;
      if (x >= x1) break;
      if (out.size() >= kMaxValues) throw std::invalid_argument("range " + text + ": too many values");
      out.push_back(fmt::format("{:.12g}", x));
    }
  }
  if (out.empty()) throw std::invalid_argument("range " + text + " is empty");
  return out;
}

}  // namespace

Grid parse_grid(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("--grid " + spec + ": expected path=v1,v2,...");
  Grid g{spec.substr(0, eq), {}};
  for (const auto& item : split(spec.substr(eq + 1), ',')) {
    if (item.empty()) throw std::invalid_argument("--grid " + spec + ": empty value");
    const auto parts = split(item, ':');
    if (parts.size() == 3) {
      for (auto& v : expand_range(item, parts)) g.values.push_back(std::move(v));
    } else {
      g.values.push_back(item);
    }
  }
  return g;
}

std::string safe_id(const std::string& raw) {
  constexpr std::size_t kMaxLen = 180;  // well below NAME_MAX (255) with room for the hash
  std::string out;
  for (const char c : raw) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '=' || c == ',' || c == '+' || c == '-';
    out += ok ? c : '_';
  }
  if (out != raw || out.size() > kMaxLen) out = out.substr(0, kMaxLen) + "~" + hex64(fnv1a(raw)).substr(0, 8);
  return out;
}

std::vector<std::size_t> run_order(const std::vector<int>& reps, bool reps_outer) {
  std::vector<std::size_t> order(reps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (reps_outer)
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return reps[a] < reps[b]; });
  return order;
}

}  // namespace sweep

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSpecFile = "sweep_spec.json";

using study::csv_field;

// A point's marker: its presence with the point's hash is what marks the point finished.
constexpr const char* kMarker = "point.json";

bool point_done(const fs::path& dir, const json& point) {
  return study::run_finished(dir, kMarker, point.at("scenario_hash").get<std::string>());
}

// sweep.csv and sweep.json from the spec and whichever points are finished in `out`.
void write_outputs(const std::string& out, const json& spec) {
  std::vector<std::string> paths;
  for (const auto& g : spec.at("grids")) paths.push_back(g.at("path").get<std::string>());
  std::string csv = "point,variant,rep,seed";
  for (const auto& p : paths) csv += "," + csv_field(p);
  for (const auto& m : study_metrics()) csv += std::string(",") + m.column;
  csv += ",results\n";
  json rows = json::array();
  for (const auto& pt : spec.at("points")) {
    const auto id = pt.at("id").get<std::string>();
    const fs::path dir = fs::path(out) / "points" / id;
    if (!point_done(dir, pt)) continue;
    json r;
    try {
      r = json::parse(read_text_file(dir / "results.json"));
    } catch (const std::exception&) {
      continue;  // unreadable results count as missing
    }
    const std::string rel = "points/" + id + "/results.json";
    json row = {{"point", pt.at("index")},
                {"id", id},
                {"variant", pt.at("variant")},
                {"rep", pt.at("rep")},
                {"seed", pt.at("seed")},
                {"grid", json::object()},
                {"results", rel}};
    csv += fmt::format("{},{},{},{}", pt.at("index").get<std::size_t>(),
                       csv_field(pt.at("variant").get<std::string>()), pt.at("rep").get<int>(),
                       pt.at("seed").get<std::uint64_t>());
    for (const auto& p : paths) {
      const auto text = pt.at("grid").at(p).get<std::string>();
      csv += "," + csv_field(text);
      row["grid"][p] = config::parse_set_value(text);
    }
    for (const auto& m : study_metrics()) {
      const std::string col = m.column, ptr = m.pointer;
      const json::json_pointer jp(ptr);
      const bool has = r.contains(jp) && r.at(jp).is_number();
      csv += "," + (has ? r.at(jp).dump() : std::string());
      row[col] = has ? r.at(jp) : json();
    }
    csv += "," + csv_field(rel) + "\n";
    rows.push_back(std::move(row));
  }
  json sj = {{"scenario", spec.at("scenario")},
             {"grids", spec.at("grids")},
             {"variants", spec.at("variants")},
             {"reps", spec.at("reps")},
             {"points", rows}};
  analysis::write_file_atomic(out + "/sweep.csv", csv);
  analysis::write_file_atomic(out + "/sweep.json", analysis::dump_json(sj));
}

}  // namespace

void add_sweep_options(CLI::App& cmd, SweepOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file")->required();
  cmd.add_option("--grid", o.grids,
                 "dotted.path=v1,v2,... or start:stop:step (values < stop); repeatable, Cartesian product")
      ->required()
      ->allow_extra_args(false);
  cmd.add_option("--variants", o.variants, "Comma-separated variants (default: all, or the base scenario)");
  cmd.add_option("--reps", o.reps, "Replications per point; rep r uses seed + r")
      ->check(CLI::Range(1, 100000));
  cmd.add_option("--jobs", o.jobs, "Simulations run at once (default: number of cores)");
  cmd.add_option("--set", o.sets, "Override a field in every run: dotted.path=value (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--shard", o.shard, "Run only shard i of N (1-based): points whose index % N == i-1");
  cmd.add_option("--out", o.out_dir, "Output directory")->required();
  cmd.add_flag("--quiet", o.quiet, "No progress output");
  cmd.add_flag("--allow-violations", o.allow_violations,
               "Pass --allow-violations to every run: points whose design-review checks fail still count");
  add_calibration_option(cmd, o.calibration);
}

int cmd_sweep(const SweepOptions& o) {
  // Everything is checked before anything is written.
  std::vector<sweep::Grid> grids;
  std::size_t shard_i = 1, shard_n = 1;
  try {
    for (const auto& g : o.grids) {
      grids.push_back(sweep::parse_grid(g));
      for (std::size_t k = 0; k + 1 < grids.size(); ++k)
        if (grids[k].path == grids.back().path)
          throw std::invalid_argument("--grid " + grids.back().path + " given twice");
    }
    if (!o.shard.empty()) {
      const auto slash = o.shard.find('/');
      long long i = 0, n = 0;
      const auto a = o.shard.substr(0, slash),
                 b = slash == std::string::npos ? "" : o.shard.substr(slash + 1);
      if (std::from_chars(a.data(), a.data() + a.size(), i).ptr != a.data() + a.size() || a.empty() ||
          std::from_chars(b.data(), b.data() + b.size(), n).ptr != b.data() + b.size() || b.empty() ||
          n < 1 || i < 1 || i > n)
        throw std::invalid_argument("--shard " + o.shard + ": expected i/N with 1 <= i <= N");
      shard_i = static_cast<std::size_t>(i);
      shard_n = static_cast<std::size_t>(n);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }

  std::string file_bytes, calibration_hash;
  std::optional<config::Calibration> calibration;
  config::Scenario base;
  try {
    if (!o.calibration.empty()) calibration_hash = study::hex64(study::fnv1a(read_text_file(o.calibration)));
    file_bytes = read_text_file(o.scenario);
    config::LoadOptions lo;
    lo.sets = o.sets;
    if (!o.calibration.empty()) calibration = config::load_calibration_file(o.calibration);
    lo.calibration = calibration;
    base = config::load_scenario_file(o.scenario, lo);
  } catch (const std::exception& e) {  // InputError, or a file that cannot be read
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }
  std::vector<std::string> variants;
  for (auto& v : sweep::split(o.variants, ','))
    if (!v.empty()) variants.push_back(v);
  if (variants.empty())
    for (const auto& [name, _] : base.doc.at("variants").items()) variants.push_back(name);
  const bool no_variants = variants.empty();
  if (no_variants) variants.push_back("");  // the base scenario itself
  for (const auto& v : variants)
    if (!v.empty() && !base.doc.at("variants").contains(v)) {
      std::cerr << "error: " << o.scenario << ": unknown variant \"" << v << "\"\n";
      return kExitBadInput;
    }

  // Each grid value on its own first, so the message names the bad value rather than a combination.
  for (const auto& g : grids)
    for (const auto& v : g.values) {
      try {
        config::LoadOptions lo;
        lo.sets = o.sets;
        lo.calibration = calibration;
        lo.sets.push_back(g.path + "=" + v);
        (void)config::load_scenario_file(o.scenario, lo);
      } catch (const config::InputError& e) {
        std::cerr << "error: --grid " << g.path << "=" << v << ": " << e.what() << "\n";
        return kExitBadInput;
      }
    }

  const study::Runner runner{o.runner, o.runner_args, o.calibration, calibration_hash};
  // Enumeration order: grids as given (the first varies slowest), then variants, then reps.
  const std::string file_hash = study::file_hash(file_bytes);
  json points = json::array();
  std::vector<std::size_t> combo(grids.size(), 0);
  for (bool more = true; more;) {
    std::vector<std::string> grid_sets;
    std::string id_grid;
    json grid_json = json::object();
    for (std::size_t k = 0; k < grids.size(); ++k) {
      const auto& val = grids[k].values[combo[k]];
      grid_sets.push_back(grids[k].path + "=" + val);
      id_grid += (k ? "," : "") + grid_sets.back();
      grid_json[grids[k].path] = val;
    }
    for (const auto& v : variants) {
      std::uint64_t seed = 0;
      try {
        config::LoadOptions lo;
        lo.variant = v;
        lo.sets = o.sets;
        lo.calibration = calibration;
        lo.sets.insert(lo.sets.end(), grid_sets.begin(), grid_sets.end());
        seed = config::load_scenario_file(o.scenario, lo).doc.at("seed").get<std::uint64_t>();
      } catch (const config::InputError& e) {
        std::cerr << "error: --grid " << id_grid << (v.empty() ? "" : " with variant " + v) << ": "
                  << e.what() << "\n";
        return kExitBadInput;
      }
      for (int r = 0; r < o.reps; ++r) {
        const std::uint64_t s = seed + static_cast<std::uint64_t>(r);
        std::string raw = id_grid;
        if (!v.empty()) raw += ",variant=" + v;
        raw += ",rep=" + std::to_string(r);
        std::vector<std::string> sets = o.sets;
        sets.insert(sets.end(), grid_sets.begin(), grid_sets.end());
        points.push_back({{"index", points.size()},
                          {"id", sweep::safe_id(raw)},
                          {"grid", grid_json},
                          {"variant", v},
                          {"rep", r},
                          {"seed", s},
                          {"scenario_hash", study::run_hash(file_hash, v, s, sets, runner)}});
      }
    }
    more = false;
    for (std::size_t k = grids.size(); k-- > 0;) {
      if (++combo[k] < grids[k].values.size()) {
        more = true;
        break;
      }
      combo[k] = 0;
    }
  }
  std::set<std::string> ids;
  for (const auto& p : points)
    if (!ids.insert(p.at("id").get<std::string>()).second) {
      std::cerr << "error: two points share the id " << p.at("id") << " (repeated grid value?)\n";
      return kExitBadInput;
    }

  json grids_json = json::array();
  for (const auto& g : grids) grids_json.push_back({{"path", g.path}, {"values", g.values}});
  json spec = {{"scenario", o.scenario},
               {"scenario_file_hash", file_hash},
               {"sets", o.sets},
               {"grids", grids_json},
               {"variants", no_variants ? json::array() : json(variants)},
               {"reps", o.reps},
               {"points", points}};
  if (o.runner != "run") spec["runner"] = o.runner;
  if (!o.calibration.empty()) spec["calibration"] = {{"file", o.calibration}, {"hash", calibration_hash}};

  const std::string& out = o.out_dir;
  const std::string spec_text = analysis::dump_json(spec);
  try {
    std::error_code ec;
    if (fs::exists(out + "/" + kSpecFile, ec) && read_text_file(out + "/" + kSpecFile) != spec_text &&
        !o.quiet)
      std::cerr << "sweep: " << out << " held a different sweep; replacing its spec (points with the same "
                << "hash are kept)\n";
    analysis::write_file_atomic(out + "/" + kSpecFile, spec_text);
    study::remove_stale_temps(out);
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write " << out << ": " << e.what() << "\n";
    return kExitFailed;
  }

  // This shard's points, in the order they run; those not yet done.
  std::vector<int> reps;
  for (const auto& p : points) reps.push_back(p.at("rep").get<int>());
  std::vector<std::size_t> mine, todo;
  for (const auto i : sweep::run_order(reps, o.reps_outer))
    if (i % shard_n == shard_i - 1) mine.push_back(i);
  for (const auto i : mine)
    if (!point_done(fs::path(out) / "points" / points[i].at("id").get<std::string>(), points[i]))
      todo.push_back(i);

  std::vector<Job> jobs;
  for (const auto i : todo) {
    const auto& p = points[i];
    const fs::path dir = fs::path(out) / "points" / p.at("id").get<std::string>();
    std::error_code ec;
    fs::create_directories(dir, ec);
    study::remove_stale_temps(dir);
    std::vector<std::string> sets = o.sets;
    for (const auto& g : grids) sets.push_back(g.path + "=" + p.at("grid").at(g.path).get<std::string>());
    jobs.push_back({study::run_command(o.scenario, dir.string(), p.at("seed").get<std::uint64_t>(),
                                       p.at("variant").get<std::string>(), sets, o.allow_violations, runner),
                    study::log_path(dir)});
  }

  const int par = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  study::Progress progress("sweep", mine.size(), todo.size(), o.quiet);
  progress.skipped(mine.size() - todo.size());
  if (!o.quiet)
    std::cerr << fmt::format(
        "sweep: {} points{}, {} to run, {} at a time\n", mine.size(),
        shard_n > 1 ? fmt::format(" in shard {}/{} of {}", shard_i, shard_n, points.size()) : "", todo.size(),
        par);
  progress.draw();
  int interrupted = 0;
  try {
    interrupted = run_each(jobs, par, [&](std::size_t k, const ChildResult& r) {
      const auto& p = points[todo[k]];
      const std::string id = p.at("id").get<std::string>();
      const fs::path dir = fs::path(out) / "points" / id;
      auto outcome = study::outcome_of(r, dir);
      if (outcome == study::Outcome::Ok) {
        try {
          json pj = p;
          pj.erase("index");
          pj.erase("id");
          for (auto& [path, v] : pj["grid"].items()) v = config::parse_set_value(v.get<std::string>());
          study::mark_finished(dir, kMarker, pj);
        } catch (const std::exception& e) {
          outcome = study::Outcome::Failed;
          progress.note(fmt::format("sweep: point {}: cannot write {}: {}", id, kMarker, e.what()));
        }
      } else if (outcome == study::Outcome::Failed) {
        progress.note(fmt::format("sweep: point {} {}", id, study::describe_failure(r, dir)));
      }
      progress.finished(outcome);
      progress.draw();
    });
  } catch (const std::exception& e) {
    progress.end();
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailed;
  }
  progress.end();

  try {
    write_outputs(out, spec);
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write " << out << ": " << e.what() << "\n";
    return kExitFailed;
  }
  if (interrupted)
    return study::interrupted_exit("sweep", interrupted, todo.size() - progress.ran() - progress.failed());
  if (!o.quiet) std::cerr << fmt::format("sweep: results in {}/sweep.csv\n", out);
  if (progress.not_run())
    std::cerr << fmt::format(
        "sweep: {} point{} not run (their runs were killed); run the same command again to finish\n",
        progress.not_run(), progress.not_run() == 1 ? "" : "s");
  return progress.failed() || progress.not_run() ? kExitFailed : kExitOk;
}

void add_merge_options(CLI::App& cmd, MergeOptions& o) {
  cmd.add_option("dirs", o.dirs, "Shard output directories of the same sweep")->required();
  cmd.add_option("--out", o.out_dir, "Output directory (may be one of the inputs)")->required();
  cmd.add_flag("--quiet", o.quiet, "Print nothing but errors");
}

namespace {

// A point id as sweep writes it (sweep::safe_id, maybe with its "~hash" suffix): one directory name.
bool is_point_id(const std::string& id) {
  return !id.empty() && id.size() <= 200 && id != "." && id != ".." &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  std::string_view("._=,+-~").find(c) != std::string_view::npos;
         });
}

// A shard's sweep_spec.json: its text, after checking it has the shape sweep writes (what
// write_outputs and the copying of points rely on). InputError naming the file and key otherwise.
std::string read_spec(const fs::path& dir) {
  const fs::path file = dir / kSpecFile;
  const std::string text = read_text_file(file);
  const json doc = read_json_file(file);
  const JsonIn spec(doc, file.string());
  (void)spec["scenario"].string();
  (void)spec["scenario_file_hash"].string();
  for (const char* list : {"sets", "variants"})
    for (std::size_t i = 0; i < spec[list].size(); ++i) (void)spec[list][i].string();
  std::vector<std::string> paths;
  const JsonIn grids = spec["grids"];
  for (std::size_t i = 0; i < grids.size(); ++i) {
    paths.push_back(grids[i]["path"].string());
    for (std::size_t k = 0; k < grids[i]["values"].size(); ++k) (void)grids[i]["values"][k].string();
  }
  if (spec["reps"].integer() < 1) spec["reps"].fail("expected an integer >= 1");
  const JsonIn points = spec["points"];
  std::set<std::string> ids;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const JsonIn p = points[i];
    if (p["index"].unsigned_integer() != i)
      p["index"].fail(fmt::format("expected {} (its place in the list)", i));
    const std::string id = p["id"].string();
    if (!is_point_id(id))
      p["id"].fail("expected a point id as sweep writes it (one directory name), got " + json(id).dump());
    if (!ids.insert(id).second) p["id"].fail("the id of an earlier point too");
    for (const auto& path : paths) (void)p["grid"][path].string();
    (void)p["variant"].string();
    if (p["rep"].integer() < 0) p["rep"].fail("expected an integer >= 0");
    (void)p["seed"].unsigned_integer();
    (void)p["scenario_hash"].string();
  }
  return text;
}

// A finished point found in a shard: the hash its marker holds, and its directory.
struct FoundPoint {
  std::string hash;
  fs::path dir;
};

// The finished points under root/points (those with a marker and results.json), every file they
// would copy checked: the marker and results.json parse, run_info.json (if any) is a file.
std::map<std::string, FoundPoint> finished_points(const fs::path& root) {
  std::map<std::string, FoundPoint> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / "points", ec)) {
    const fs::path marker = e.path() / kMarker;
    if (!fs::exists(marker, ec) || !fs::exists(e.path() / "results.json", ec)) continue;  // not finished
    const json pj = read_json_file(marker);
    (void)read_json_file(e.path() / "results.json");
    if (fs::exists(e.path() / "run_info.json", ec)) (void)read_text_file(e.path() / "run_info.json");
    out[e.path().filename().string()] = {JsonIn(pj, marker.string())["scenario_hash"].string(), e.path()};
  }
  return out;
}

}  // namespace

int cmd_merge(const MergeOptions& o) {
  // Everything is read and checked before anything is written.
  std::string spec_text;
  std::vector<std::string> inputs;
  std::map<std::string, FoundPoint> found;  // id -> where it is finished
  std::set<std::string> in_out;             // ids already finished in --out
  const std::string out_spec = o.out_dir + "/" + kSpecFile;
  try {
    std::error_code ec;
    // Every input must hold the same sweep, byte for byte, and so must --out if it already has one.
    for (const auto& d : o.dirs) {
      std::string t;
      try {
        t = read_spec(d);
      } catch (const config::InputError& e) {
        std::cerr << "error: " << d << " is not a sweep directory: " << e.what() << "\n";
        return kExitBadInput;
      }
      if (&d != &o.dirs.front() && t != spec_text) {
        std::cerr << "error: " << d << "/" << kSpecFile << " differs from " << o.dirs.front() << "/"
                  << kSpecFile << ": not shards of the same sweep\n";
        return kExitBadInput;
      }
      spec_text = t;
      if (!(fs::exists(o.out_dir, ec) && fs::equivalent(d, o.out_dir, ec))) inputs.push_back(d);
    }
    if (fs::exists(out_spec, ec) && read_text_file(out_spec) != spec_text) {
      std::cerr << "error: " << out_spec << " holds a different sweep\n";
      return kExitBadInput;
    }
    // A point id finished with two hashes is a conflict.
    auto collect = [&](const fs::path& root) -> bool {
      for (auto& [id, p] : finished_points(root)) {
        const auto [it, fresh] = found.emplace(id, p);
        if (!fresh && it->second.hash != p.hash) {
          std::cerr << "error: point " << id << " has scenario_hash " << p.hash << " in " << p.dir.string()
                    << " but " << it->second.hash << " in " << it->second.dir.string() << "\n";
          return false;
        }
      }
      return true;
    };
    if (!collect(o.out_dir)) return kExitBadInput;
    for (const auto& [id, _] : found) in_out.insert(id);
    for (const auto& d : inputs)
      if (!collect(d)) return kExitBadInput;
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }
  const json spec = json::parse(spec_text);

  try {
    analysis::write_file_atomic(out_spec, spec_text);
    study::remove_stale_temps(o.out_dir);
    std::size_t copied = 0;
    std::error_code ec;
    for (const auto& [id, p] : found) {
      if (in_out.count(id)) continue;
      const fs::path dst = fs::path(o.out_dir) / "points" / id;
      // results first, the marker last, each via a rename: the same finish marker as a sweep.
      for (const char* name : {"run_info.json", "results.json", kMarker}) {
        if (!fs::exists(p.dir / name, ec)) continue;
        analysis::write_file_atomic((dst / name).string(), read_text_file(p.dir / name));
      }
      ++copied;
    }
    write_outputs(o.out_dir, spec);
    if (!o.quiet) {
      std::size_t done = 0;
      for (const auto& p : spec.at("points"))
        if (point_done(fs::path(o.out_dir) / "points" / p.at("id").get<std::string>(), p)) ++done;
      std::cerr << fmt::format("merge: {} points copied; {}/{} points finished in {}\n", copied, done,
                               spec.at("points").size(), o.out_dir);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write " << o.out_dir << ": " << e.what() << "\n";
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace uringsim::app
