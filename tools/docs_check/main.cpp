// docs_check: re-runs the commands a documentation page shows and compares the numbers the page
// shows with the numbers those commands produce (docs/docs-check.md). The test suite runs it on
// every page that has markers; `--update` rewrites a stale page from the fresh numbers.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "analysis/io.hpp"
#include "checks.hpp"
#include "markdown.hpp"
#include "tools/app/read_file.hpp"
#include "tools/app/subprocess.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace docs_check;

namespace {

constexpr int kExitMismatch = 1, kExitBadInput = 2;

struct Run {
  std::string command;  // as the page shows it
  std::string output;   // its --out / -o path as the page shows it ("" for stdout runs)
  bool ok = false;
  std::string log;
  std::string clash;  // another command the page shows with the same id
};

std::string option_value(const std::string& cmd, const std::string& opt) {
  std::istringstream in(cmd);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  for (std::size_t k = 0; k + 1 < w.size(); ++k)
    if (w[k] == opt) return w[k + 1];
  return {};
}

// The commands of a page by run id: the last component of their --out (or -o) path.
std::map<std::string, Run> page_runs(const Page& page, const Plan& plan) {
  std::map<std::string, Run> runs;
  for (const auto& cmd : uringsim_commands(page)) {
    std::string out = option_value(cmd, "--out");
    if (out.empty()) out = option_value(cmd, "-o");
    if (out.empty()) continue;
    const auto id = fs::path(out).filename().string();
    if (runs.count(id) && runs[id].command != cmd) {
      runs[id].clash = cmd;  // an error only if a marker reads it
      continue;
    }
    runs[id] = Run{cmd, out, false, {}, {}};
  }
  // A stdout marker may also read one of the page's bench/ scripts (they print JSON too).
  auto shown = uringsim_commands(page);
  for (auto& c : shown_commands(page, "bench/")) shown.push_back(std::move(c));
  for (const auto& [id, cmd] : plan.stdout_runs) {
    if (std::find(shown.begin(), shown.end(), cmd) == shown.end())
      throw MarkerError(fmt::format("'stdout {}: {}': the page shows no such command", id, cmd));
    runs[id] = Run{cmd, "", false, {}, {}};
  }
  return runs;
}

std::string localise(std::string s, const fs::path& tmp) {
  // The page's /tmp paths go to this check's own directory, so pages cannot see each other's files.
  const std::string to = tmp.string() + "/";
  for (std::size_t p = s.find("/tmp/"); p != std::string::npos; p = s.find("/tmp/", p + to.size()))
    s.replace(p, 5, to);
  return s;
}

// The working directory of the commands: the source tree's folders linked in, and
// build/tools/uringsim pointing at the binary under test.
fs::path make_workdir(const fs::path& root, const fs::path& exe) {
  std::string tmpl = (fs::temp_directory_path() / "docs-check-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
  const fs::path dir = tmpl;
  for (const auto& e : fs::directory_iterator(root)) {
    const auto name = e.path().filename().string();
    if (name == "build" || name == "out" || name.rfind(".", 0) == 0) continue;
    fs::create_symlink(fs::absolute(e.path()), dir / name);
  }
  fs::create_directories(dir / "build/tools");
  fs::create_symlink(fs::absolute(exe), dir / "build/tools/uringsim");
  return dir;
}

// `<!-- docs-check file /tmp/x.json -->` before a code block, on any page: pages share base files.
void write_files(const std::vector<fs::path>& all_pages, const fs::path& tmp) {
  for (const auto& p : all_pages) {
    const Page page(uringsim::app::read_text_file(p));
    for (const auto& c : page.comments()) {
      std::istringstream in(c.body);
      std::string tag, kind, path;
      in >> tag >> kind >> path;
      if (tag != "docs-check" || kind != "file") continue;
      const CodeBlock* b = page.block_after(c.end);
      if (!b)
        throw MarkerError(
            fmt::format("{}:{}: 'file' with no code block after it", p.string(), page.line_of(c.begin)));
      fs::path to = localise(path, tmp);
      if (to.is_relative()) to = tmp / to;
      fs::create_directories(to.parent_path());
      std::ofstream(to) << b->text;
    }
  }
}

// A JSON pointer whose segments may pick an array element by its fields:
// "/profile/entries[comm=iou-wrk&symbol=_raw_spin_lock]/pct". nullptr when absent.
const json* lookup(const json& doc, const std::string& pointer) {
  if (pointer.empty()) return &doc;
  if (pointer[0] != '/')
    throw MarkerError(fmt::format("'{}' is no JSON pointer (it starts with '/')", pointer));
  const json* at = &doc;
  std::size_t p = 1;
  while (at && p <= pointer.size()) {
    auto e = pointer.find('/', p);
    const auto bracket = pointer.find('[', p);
    if (bracket < e) e = pointer.find('/', pointer.find(']', bracket));
    std::string seg = pointer.substr(p, e == std::string::npos ? std::string::npos : e - p);
    p = e == std::string::npos ? pointer.size() + 1 : e + 1;
    std::string select;
    if (const auto b = seg.find('['); b != std::string::npos && seg.back() == ']') {
      select = seg.substr(b + 1, seg.size() - b - 2);
      seg = seg.substr(0, b);
    }
    for (std::size_t k; (k = seg.find("~1")) != std::string::npos;) seg.replace(k, 2, "/");
    for (std::size_t k; (k = seg.find("~0")) != std::string::npos;) seg.replace(k, 2, "~");
    if (at->is_array() && !seg.empty() && seg.find_first_not_of("0123456789") == std::string::npos) {
      const auto k = std::stoul(seg);
      if (k >= at->size()) return nullptr;
      at = &(*at)[k];
    } else {
      if (!at->is_object() || !at->contains(seg)) return nullptr;
      at = &(*at)[seg];
    }
    if (select.empty()) continue;
    if (!at->is_array()) return nullptr;
    const json* match = nullptr;
    for (const auto& item : *at) {
      bool all = item.is_object();
      std::istringstream in(select);
      for (std::string cond; all && std::getline(in, cond, '&');) {
        const auto eq = cond.find('=');
        const auto key = cond.substr(0, eq), want = eq == std::string::npos ? "" : cond.substr(eq + 1);
        all = item.contains(key) &&
              (item[key].is_string() ? item[key].get<std::string>() : item[key].dump()) == want;
      }
      if (all) {
        match = &item;
        break;
      }
    }
    at = match;
  }
  return at;
}

struct Evaluator {
  const std::map<std::string, Run>& runs;
  fs::path tmp;
  std::map<std::string, json> cache;

  const json& document(const std::string& source) {
    if (auto it = cache.find(source); it != cache.end()) return it->second;
    const auto slash = source.find('/');
    const auto id = source.substr(0, slash);
    const auto it = runs.find(id);
    if (it == runs.end()) throw MarkerError(fmt::format("no command on the page writes '{}'", id));
    if (!it->second.ok) throw std::runtime_error(fmt::format("the command for '{}' failed", id));
    fs::path p;
    if (it->second.output.empty()) {
      p = tmp / (id + ".stdout");
    } else {
      p = localise(it->second.output, tmp);
      if (p.is_relative()) p = tmp / p;
      if (slash != std::string::npos) p /= source.substr(slash + 1);
      if (fs::is_directory(p)) p /= "results.json";
    }
    return cache[source] = json::parse(uringsim::app::read_text_file(p));
  }

  std::optional<double> operand(const std::string& e) {
    double scale = 1;
    std::string ref = e;
    if (const auto star = e.rfind('*'); star != std::string::npos) {
      scale = std::stod(e.substr(star + 1));
      ref = e.substr(0, star);
    }
    char* end = nullptr;
    const double constant = std::strtod(ref.c_str(), &end);
    if (!ref.empty() && *end == '\0') return constant * scale;  // a figure quoted from elsewhere (a seed)
    const auto colon = ref.find(':');
    if (colon == std::string::npos) throw MarkerError(fmt::format("'{}' is not RUN[/path]:/pointer", e));
    const json* found = lookup(document(ref.substr(0, colon)), ref.substr(colon + 1));
    if (!found || found->is_null()) return std::nullopt;
    const auto& v = *found;
    if (v.is_boolean()) return v.get<bool>() ? scale : 0;
    if (!v.is_number()) throw std::runtime_error(fmt::format("'{}' is {}, not a number", e, v.dump()));
    return v.get<double>() * scale;
  }

  // ratio(A,B) = A / B, diff(A,B) = A - B, pct(A,B) = (A - B) / B in %; each may nest and be
  // scaled: diff(A,B)*1000.
  std::optional<double> value(const std::string& e) {
    for (const std::string fn : {"ratio", "diff", "pct"}) {
      if (e.rfind(fn + "(", 0) != 0) continue;
      const auto close = e.rfind(')');
      double scale = 1;
      if (close + 1 < e.size()) {
        if (e[close + 1] != '*') throw MarkerError(fmt::format("'{}': expected '*N' after ')'", e));
        scale = std::stod(e.substr(close + 2));
      }
      const auto inner = e.substr(fn.size() + 1, close - fn.size() - 1);
      const std::size_t comma = operand_comma(inner);
      if (comma == std::string::npos) throw MarkerError(fmt::format("'{}': {} needs two operands", e, fn));
      const auto a = value(inner.substr(0, comma)), b = value(inner.substr(comma + 1));
      if (!a || !b || (fn != "diff" && *b == 0)) return std::nullopt;
      const double v = fn == "ratio" ? *a / *b : fn == "diff" ? *a - *b : (*a - *b) / *b * 100;
      return v * scale;
    }
    return operand(e);
  }
};

// The shown value's own rounding: half a unit of its last digit (of its rounded place for "67 200").
double rounding_of(const Number& n) {
  if (n.decimals > 0) return 0.5 * std::pow(10.0, -n.decimals);
  return 0.5 * std::pow(10.0, rounded_zeros(n));
}

std::vector<fs::path> all_pages(const fs::path& root) {
  std::vector<fs::path> out{root / "README.md"};
  for (const auto& e : fs::recursive_directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") out.push_back(e.path());
  return out;
}

// A glob such as `/tmp/o/*/results.json` also matches what other pages' commands write there.
std::vector<std::string> glob_clashes(const fs::path& page_path, const Page& page, const fs::path& root) {
  std::vector<std::string> out;
  std::map<std::string, std::string> writers;  // output path -> page
  for (const auto& p : all_pages(root)) {
    if (fs::equivalent(p, page_path)) continue;
    const Page other(uringsim::app::read_text_file(p));
    for (const auto& cmd : uringsim_commands(other)) {
      std::string o = option_value(cmd, "--out");
      if (o.empty()) o = option_value(cmd, "-o");
      if (!o.empty()) writers[o] = fs::relative(p, root).string();
    }
  }
  for (const auto& b : page.code_blocks()) {
    if (b.lang != "sh" && b.lang != "bash") continue;
    std::istringstream in(b.text);
    for (std::string w; in >> w;) {
      const auto star = w.find('*');
      if (star == std::string::npos || w[0] != '/') continue;
      const auto prefix = w.substr(0, star);
      for (const auto& [o, who] : writers)
        if (o.rfind(prefix, 0) == 0)
          out.push_back(fmt::format("the glob '{}' also reads '{}', written by {}", w, o, who));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Re-run the commands a documentation page shows and compare the numbers it shows"};
  std::vector<std::string> pages;
  std::string root = ".", exe;
  int jobs = 2;
  bool print = false, update = false, keep = false;
  app.add_option("pages", pages, "Markdown pages, relative to --root")->required();
  app.add_option("--root", root, "Source tree (default: .)");
  app.add_option("--uringsim", exe, "The binary to run (default: ROOT/build/tools/uringsim)");
  app.add_option("--jobs", jobs, "Commands run at once")->check(CLI::Range(1, 256));
  app.add_flag("--print", print, "Print every number with its fresh value, not only the differing ones");
  app.add_flag("--update", update, "Rewrite the pages' numbers with the fresh values");
  app.add_flag("--keep", keep, "Keep the working directory (printed) for inspection");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  if (exe.empty()) exe = (fs::path(root) / "build/tools/uringsim").string();
  if (!fs::exists(exe)) {
    std::cerr << "error: --uringsim: no such file: " << exe << "\n";
    return kExitBadInput;
  }
  const auto started = std::chrono::steady_clock::now();
  int status = 0;
  bool host_skipped = false;
  fs::path tmp;
  try {
    tmp = make_workdir(root, exe);
    write_files(all_pages(root), tmp);
    for (const auto& name : pages) {
      const fs::path path = fs::path(root) / name;
      if (!fs::is_regular_file(path)) {
        std::cerr << "error: no such page: " << path.string() << "\n";
        status = kExitBadInput;
        continue;
      }
      Page page(uringsim::app::read_text_file(path));
      Plan plan;
      std::map<std::string, Run> runs;
      try {
        plan = read_plan(page);
        runs = page_runs(page, plan);
      } catch (const MarkerError& e) {
        std::cerr << name << ": " << e.what() << "\n";
        status = kExitBadInput;
        continue;
      }
      for (const auto& clash : glob_clashes(path, page, root)) {
        std::cout << name << ": FAIL " << clash << "\n";
        status = std::max(status, kExitMismatch);
      }
      // Run only the commands whose outputs are read, all at once.
      std::set<std::string> needed;
      for (const auto& n : plan.numbers)
        for (const auto& id : runs_of(n.expr)) needed.insert(id);
      for (const auto& k : plan.keys) needed.insert(k.source.substr(0, k.source.find('/')));
      std::vector<std::string> ids;
      std::vector<uringsim::app::Job> todo;
      for (const auto& id : needed) {
        if (!runs.count(id) || !runs[id].clash.empty()) {
          if (runs.count(id))
            std::cerr << name << ": two commands write to '" << id << "': '" << runs[id].command << "' and '"
                      << runs[id].clash << "'\n";
          else
            std::cerr << name << ": no command on the page writes '" << id << "'\n";
          status = kExitBadInput;
          continue;
        }
        std::string sh = "cd '" + tmp.string() + "' && exec " + localise(runs[id].command, tmp);
        if (runs[id].output.empty()) sh += " >'" + (tmp / (id + ".stdout")).string() + "'";
        ids.push_back(id);
        todo.push_back({{"/bin/sh", "-c", sh}, (tmp / (id + ".log")).string()});
      }
      std::set<std::string> keys_runs;
      for (const auto& k : plan.keys) keys_runs.insert(k.source.substr(0, k.source.find('/')));
      const int sig =
          uringsim::app::run_each(todo, jobs, [&](std::size_t i, const uringsim::app::ChildResult& r) {
            auto& run = runs[ids[i]];
            run.ok = r.exit_code == 0;
            run.log = r.output;
            // A real-kernel run that this machine cannot do (exit 2 naming io_uring): skipped, not failed.
            if (!run.ok && r.exit_code == 2 && keys_runs.count(ids[i]) &&
                r.output.find("io_uring") != std::string::npos) {
              std::cout << name << ": note: skipped, this machine cannot run '" << run.command
                        << "': " << r.output;
              host_skipped = true;
              return;
            }
            if (!run.ok) {
              std::cout << name << ": FAIL command exited " << r.exit_code << ": " << run.command << "\n"
                        << r.output << "\n";
              status = std::max(status, kExitMismatch);
            }
          });
      if (sig != 0) {
        if (!keep) fs::remove_all(tmp);
        return 128 + sig;
      }
      Evaluator ev{runs, tmp, {}};
      std::size_t checked = 0, differ = 0;
      std::vector<std::pair<Number, std::string>> edits;
      for (const auto& n : plan.numbers) {
        const auto line = page.line_of(n.shown.begin);
        const std::string shown = page.text().substr(n.shown.begin, n.shown.end - n.shown.begin);
        std::optional<double> fresh;
        try {
          fresh = ev.value(n.expr);
        } catch (const MarkerError& e) {
          std::cerr << name << ":" << line << ": " << e.what() << "\n";
          status = kExitBadInput;
          continue;
        } catch (const std::exception& e) {
          std::cout << name << ":" << line << ": FAIL " << shown << ": " << e.what() << "\n";
          status = std::max(status, kExitMismatch);
          ++differ;
          continue;
        }
        ++checked;
        bool ok;
        std::string fresh_text;
        if (n.shown.placeholder) {
          ok = !fresh || *fresh == 0;
          fresh_text = fresh ? fmt::format("{}", *fresh) : "none";
        } else if (!fresh) {
          ok = false;
          fresh_text = "missing";
        } else {
          const double allowed =
              std::max({n.tol.rel * std::fabs(n.shown.value), n.tol.abs, rounding_of(n.shown)});
          ok = std::fabs(*fresh - n.shown.value) <= allowed * (1 + 1e-12);
          fresh_text = fmt::format("{:.6g}", *fresh);
          const auto again = format_like(n.shown, *fresh);
          if (update && again != shown) edits.push_back({n.shown, again});
        }
        if (!ok) ++differ, status = std::max(status, kExitMismatch);
        if (!ok || print)
          std::cout << fmt::format("{}:{}: {} shown {}, fresh {} ({})\n", name, line, ok ? "ok  " : "FAIL",
                                   shown, fresh_text, n.expr);
      }
      for (const auto& k : plan.keys) {
        if (const auto& run = runs[k.source.substr(0, k.source.find('/'))]; !run.ok && host_skipped) continue;
        try {
          const json& doc = ev.document(k.source);
          for (const auto& p : k.pointers) {
            ++checked;
            if (!lookup(doc, p)) {
              ++differ, status = std::max(status, kExitMismatch);
              std::cout << fmt::format("{}:{}: FAIL {} has no key {}\n", name, k.line, k.source, p);
            } else if (print) {
              std::cout << fmt::format("{}:{}: ok   {} has {} (value machine-dependent, not compared)\n",
                                       name, k.line, k.source, p);
            }
          }
        } catch (const std::exception& e) {
          ++differ, status = std::max(status, kExitMismatch);
          std::cout << fmt::format("{}:{}: FAIL {}: {}\n", name, k.line, k.source, e.what());
        }
      }
      std::size_t skipped = 0;
      for (const auto& s : plan.skipped) {
        skipped += s.numbers;
        std::cout << fmt::format("{}:{}: note: {} number(s) not checked: {}\n", name, s.line, s.numbers,
                                 s.reason);
      }
      if (!edits.empty()) {
        std::string text = page.text();
        std::sort(edits.begin(), edits.end(),
                  [](const auto& a, const auto& b) { return a.first.begin > b.first.begin; });
        for (const auto& [n, t] : edits) text.replace(n.begin, n.end - n.begin, t);
        uringsim::analysis::write_file_atomic(path.string(), text);
        std::cout << fmt::format("{}: updated {} number(s)\n", name, edits.size());
      }
      std::cout << fmt::format("{}: {} number(s) checked, {} differ, {} skipped; {} command(s) run\n", name,
                               checked, differ, skipped, todo.size());
    }
  } catch (const MarkerError& e) {
    std::cerr << "error: " << e.what() << "\n";
    status = kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    status = std::max(status, kExitMismatch);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << fmt::format("docs_check: {:.1f} s\n", secs);
  if (!tmp.empty()) {
    if (keep)
      std::cout << "working directory kept: " << tmp.string() << "\n";
    else
      fs::remove_all(tmp);
  }
  constexpr int kExitSkipped = 77;  // CTest's SKIP_RETURN_CODE for the docs cases
  return status == 0 && host_skipped ? kExitSkipped : status;
}
