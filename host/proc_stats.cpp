#include "host/proc_stats.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace uringsim::host {
namespace {

std::string proc_dir(pid_t pid) {
  return pid == 0 ? std::string("/proc/self") : fmt::format("/proc/{}", pid);
}

// The whole of a small /proc file; false if it cannot be opened (the task is gone).
bool read_small(const std::string& path, std::string& out) {
  std::ifstream f(path);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

std::vector<pid_t> task_ids(pid_t pid) {
  const std::string dir = proc_dir(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw std::runtime_error(fmt::format("cannot read {}: {}", dir, std::strerror(errno)));
  std::vector<pid_t> ids;
  while (const dirent* e = ::readdir(d))
    if (std::isdigit(static_cast<unsigned char>(e->d_name[0]))) ids.push_back(std::atoi(e->d_name));
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A thread's CPU clock (clock_gettime accepts it for threads of the calling process): exact and up
// to date, where schedstat lags by up to a scheduler tick for a running thread.
std::int64_t own_thread_cpu_ns(pid_t tid) {
  const clockid_t clock =
      static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);  // per-thread, sched
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) return -1;
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string strip_newline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// utime + stime (fields 14 and 15) of a /proc stat line, in clock ticks. The command name in
// field 2 may contain spaces and parentheses, so fields are counted after its last ')'.
std::int64_t stat_line_cpu_ticks(const std::string& line) {
  const auto close = line.rfind(')');
  if (close == std::string::npos) throw std::runtime_error("malformed /proc stat line");
  std::istringstream in(line.substr(close + 1));
  std::string field;
  std::int64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return utime + stime;
}

std::uint64_t status_field(const std::string& status, const std::string& key) {
  const auto at = status.find(key + ":");
  if (at == std::string::npos) return 0;
  return std::strtoull(status.c_str() + at + key.size() + 1, nullptr, 10);
}

// A counter of /proc/PID/sched ("se.nr_migrations   :   12"), the key at a line's start.
std::optional<std::uint64_t> sched_field(const std::string& sched, const std::string& key) {
  for (std::size_t at = sched.find(key); at != std::string::npos; at = sched.find(key, at + 1)) {
    if (at > 0 && sched[at - 1] != '\n') continue;
    const auto colon = sched.find(':', at + key.size());
    const auto eol = sched.find('\n', at);
    if (colon == std::string::npos || colon > eol) return std::nullopt;
    if (sched.find_first_not_of(' ', at + key.size()) != colon) continue;  // a longer key
    return std::strtoull(sched.c_str() + colon + 1, nullptr, 10);
  }
  return std::nullopt;
}

}  // namespace

std::int64_t ns_per_clock_tick() {
  static const std::int64_t ns = 1'000'000'000 / std::max<long>(1, ::sysconf(_SC_CLK_TCK));
  return ns;
}

namespace {
// now - before (before: nullptr for a thread born in the window, 0), nullopt if either is unknown.
template <class T>
std::optional<T> grew(const std::optional<T> TaskStats::*field, const TaskStats& now,
                      const TaskStats* before) {
  const auto& n = now.*field;
  if (!n) return std::nullopt;
  if (!before) return *n;
  const auto& b = before->*field;
  if (!b) return std::nullopt;
  return *n - *b;
}
}  // namespace

void SchedCounts::add_thread(const std::string& cls, const TaskStats& now, const TaskStats* before) {
  const auto moves = grew(&TaskStats::nr_migrations, now, before);
  if (!moves)
    migrations.reset();
  else if (migrations)
    *migrations += *moves;
  const auto waited = grew(&TaskStats::run_delay_ns, now, before);
  if (!waited)
    run_delay_ns_by_class.reset();
  else if (run_delay_ns_by_class)
    (*run_delay_ns_by_class)[cls] += static_cast<double>(*waited);
}

std::vector<TaskStats> list_tasks(pid_t pid) {
  std::vector<TaskStats> out;
  for (const pid_t tid : task_ids(pid)) {
    const std::string dir = fmt::format("{}/task/{}", proc_dir(pid), tid);
    std::string comm, stat, status, schedstat;
    if (!read_small(dir + "/comm", comm) || !read_small(dir + "/stat", stat) ||
        !read_small(dir + "/status", status))
      continue;  // exited meanwhile
    TaskStats t;
    t.tid = tid;
    t.comm = strip_newline(comm);
    std::int64_t runtime_ns = pid == 0 || pid == ::getpid() ? own_thread_cpu_ns(tid) : -1;
    if (read_small(dir + "/schedstat", schedstat)) {  // "sum_exec_runtime run_delay pcount"
      char* end = nullptr;
      const long long v = std::strtoll(schedstat.c_str(), &end, 10);
      if (end != schedstat.c_str()) {
        if (runtime_ns < 0) runtime_ns = v;
        char* end2 = nullptr;
        const long long d = std::strtoll(end, &end2, 10);
        if (end2 != end) t.run_delay_ns = d;
      }
    }
    try {
      t.cpu_ns = runtime_ns >= 0 ? runtime_ns : stat_line_cpu_ticks(stat) * ns_per_clock_tick();
    } catch (const std::exception&) {
      continue;  // a truncated read of a dying task
    }
    t.voluntary_ctxt_switches = status_field(status, "voluntary_ctxt_switches");
    t.nonvoluntary_ctxt_switches = status_field(status, "nonvoluntary_ctxt_switches");
    if (std::string sched; read_small(dir + "/sched", sched))
      t.nr_migrations = sched_field(sched, "se.nr_migrations");
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::pair<pid_t, std::string>> list_task_names(pid_t pid) {
  std::vector<std::pair<pid_t, std::string>> out;
  for (const pid_t tid : task_ids(pid)) {
    std::string comm;
    if (read_small(fmt::format("{}/task/{}/comm", proc_dir(pid), tid), comm))
      out.emplace_back(tid, strip_newline(comm));
  }
  return out;
}

std::string thread_class(const std::string& comm) {
  const auto dash = comm.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == comm.size()) return comm;
  for (std::size_t i = dash + 1; i < comm.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(comm[i]))) return comm;
  return comm.substr(0, dash);
}

std::int64_t process_cpu_ns(pid_t pid) {
  if (pid == 0 || pid == ::getpid()) {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    auto ns = [](const timeval& tv) { return std::int64_t{tv.tv_sec} * 1'000'000'000 + tv.tv_usec * 1000; };
    return ns(ru.ru_utime) + ns(ru.ru_stime);
  }
  std::string stat;
  if (!read_small(proc_dir(pid) + "/stat", stat))
    throw std::runtime_error(fmt::format("cannot read {}/stat", proc_dir(pid)));
  return stat_line_cpu_ticks(stat) * ns_per_clock_tick();
}

ProcessSwitches process_switches() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return {static_cast<std::uint64_t>(ru.ru_nvcsw), static_cast<std::uint64_t>(ru.ru_nivcsw)};
}

std::int64_t children_cpu_ns() {
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  auto ns = [](const timeval& tv) { return std::int64_t{tv.tv_sec} * 1'000'000'000 + tv.tv_usec * 1000; };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}

std::int64_t busy_ticks_from_stat_line(const std::string& line) {
  std::istringstream in(line);
  std::string label;
  in >> label;
  if (label != "cpu") throw std::runtime_error("expected the \"cpu\" line of /proc/stat, got: " + line);
  // user nice system idle iowait irq softirq steal guest guest_nice
  std::vector<std::int64_t> v;
  std::int64_t x;
  while (in >> x) v.push_back(x);
  if (v.size() < 4) throw std::runtime_error("too few fields in the /proc/stat cpu line: " + line);
  v.resize(std::max<std::size_t>(v.size(), 10), 0);
  return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

std::int64_t machine_busy_ns() {
  std::ifstream f("/proc/stat");
  std::string line;
  if (!f || !std::getline(f, line)) throw std::runtime_error("cannot read /proc/stat");
  return busy_ticks_from_stat_line(line) * ns_per_clock_tick();
}

}  // namespace uringsim::host

namespace uringsim::host {

std::optional<std::map<std::string, std::uint64_t>> ipis_from_interrupts(const std::string& text) {
  std::istringstream in(text);
  std::string header;
  if (!std::getline(in, header)) return std::nullopt;
  // The header names one column per CPU ("CPU0 CPU1 ..."); a line has at most that many counts.
  std::istringstream hs(header);
  std::size_t cpus = 0;
  for (std::string w; hs >> w;) cpus += w.rfind("CPU", 0) == 0;
  std::map<std::string, std::uint64_t> out;
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string label = line.substr(0, colon);
    label.erase(0, label.find_first_not_of(' '));
    std::istringstream rest(line.substr(colon + 1));
    std::uint64_t sum = 0;
    std::string word, desc;
    for (std::size_t i = 0; i < cpus && rest >> word; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(word[0]))) {
        desc = word;  // fewer counts than CPUs: this is the description's first word
        break;
      }
      sum += std::strtoull(word.c_str(), nullptr, 10);
    }
    std::string tail;
    std::getline(rest, tail);
    desc += tail;
    const auto has = [&](const char* d) { return desc.find(d) != std::string::npos; };
    if (label == "RES" || (label.rfind("IPI", 0) == 0 && has("Rescheduling interrupts")))
      out["reschedule"] += sum;
    else if (label == "CAL" || (label.rfind("IPI", 0) == 0 && has("Function call interrupts")))
      out["function_call"] += sum;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<IpiCounts> ipis_between(const std::optional<IpiCounts>& start,
                                      const std::optional<IpiCounts>& end) {
  if (!start || !end) return std::nullopt;
  IpiCounts d;
  for (const auto& [kind, n] : *end) {
    const auto it = start->find(kind);
    const std::uint64_t before = it == start->end() ? 0 : it->second;
    d[kind] = n > before ? n - before : 0;
  }
  return d;
}

std::optional<std::map<std::string, std::uint64_t>> machine_ipis() {
  std::string text;
  if (!read_small("/proc/interrupts", text)) return std::nullopt;
  return ipis_from_interrupts(text);
}

}  // namespace uringsim::host
