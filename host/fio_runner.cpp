// The fio workload on the host: check what the job needs (fio, io_uring, the target, the CPUs),
// write the job file, run fio as a bounded child, sample its threads' CPU over the window, and
// turn its JSON report into results.json. docs/host.md (fio on the host).
#include "host/fio_runner.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "analysis/io.hpp"
#include "host/child_process.hpp"
#include "host/fio_report.hpp"
#include "host/guard.hpp"
#include "host/host_results.hpp"
#include "host/kick_probe.hpp"
#include "host/machine_info.hpp"
#include "host/model_fields.hpp"
#include "host/proc_stats.hpp"
#include "host/quiet.hpp"
#include "host/ring_setup.hpp"
#include "host/speed_probe.hpp"
#include "host/syscall_probe.hpp"
#include "host/wake_probe.hpp"
#include "tools/app/scenario_to_fio.hpp"

namespace uringsim::host {
namespace {

using Clock = RunGuard::Clock;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr double kFioMarginS = 15;   // fio's start-up and end beyond ramp_time + runtime
constexpr double kFillBudgetS = 60;  // writing the default file, within the guard's hard limit
constexpr auto kJobStartPoll = std::chrono::milliseconds(2);
constexpr auto kExitPoll = std::chrono::milliseconds(10);
constexpr std::size_t kFillChunk = 1 << 20;

Clock::duration after(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string errno_text(int e) {
  return std::strerror(e);
}

// A new directory under the temporary directory ($TMPDIR, else /tmp), removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    const fs::path parent = fs::temp_directory_path(ec);
    if (ec) throw Unavailable(fmt::format("no temporary directory: {}", ec.message()));
    std::string tmpl = (parent / "uringsim-fio-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw Unavailable(
          fmt::format("cannot create a directory in {}: {}", parent.string(), errno_text(errno)));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct Job {
  std::string rw;
  bool reads = false, writes = false, direct = false, hipri = false, sqpoll = false;
  std::uint64_t bs = 0;
  int numjobs = 1, iodepth = 1, wait_nr = 1;
  double ramp_s = 0, runtime_s = 0;
};

Job job_of(const config::Scenario& s) {
  Job j;
  j.rw = s.at("/workload/rw").get<std::string>();
  j.reads = j.rw == "read" || j.rw == "randread" || j.rw == "randrw";
  j.writes = !j.reads || j.rw == "randrw";
  j.direct = s.at("/workload/direct").get<bool>();
  j.hipri = s.at("/workload/hipri").get<bool>();
  j.sqpoll = s.at("/workload/sqthread_poll").get<bool>();
  j.bs = s.at("/workload/bs_bytes").get<std::uint64_t>();
  j.numjobs = s.at("/workload/numjobs").get<int>();
  j.iodepth = s.at("/workload/iodepth").get<int>();
  j.wait_nr = s.at("/workload/wait_nr").get<int>();
  j.ramp_s = s.at("/warmup_ms").get<double>() / 1e3;
  j.runtime_s = s.at("/duration_ms").get<double>() / 1e3;
  return j;
}

// A pinned CPU (fio's cpus_allowed, the kernel's SQ_AFF) must be one this process may run on.
// field: the dotted name, as --set takes it.
void require_cpu(const config::Scenario& s, const std::string& field) {
  std::string pointer = "/" + field;
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  const auto cpu = s.at(pointer).get<std::int64_t>();
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return;  // cannot tell: fio will say
  if (cpu < CPU_SETSIZE && CPU_ISSET(static_cast<int>(cpu), &set)) return;
  std::string list;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) list += fmt::format("{}{}", list.empty() ? "" : ",", c);
  throw Unavailable(fmt::format("{}: CPU {} is not available here (CPUs {}); --set {}=-1 or one of those",
                                pointer, cpu, list, field));
}

// The default file: written (not only allocated, whose unwritten extents reads would skip) with a
// non-zero pattern and synced, so the job's reads go to real blocks. Stops early on a stop request.
void fill_file(const std::string& path, std::uint64_t size, const RunGuard& guard) {
  const Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) throw Unavailable(fmt::format("cannot create {}: {}", path, errno_text(errno)));
  // Reserve the space first, so a full filesystem is found before anything is written.
  if (const int rc = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(size)); rc != 0 && rc != EOPNOTSUPP)
    throw Unavailable(
        fmt::format("cannot allocate the {} MiB file {}: {}", size >> 20, path, errno_text(rc)));
  std::string chunk(kFillChunk, '\0');
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>('a' + i % 26);
  for (std::uint64_t done = 0; done < size && !guard.stop_requested();) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - done));
    const ssize_t w = ::pwrite(fd.get(), chunk.data(), n, static_cast<off_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Unavailable(fmt::format("cannot write {}: {}", path, errno_text(errno)));
    done += static_cast<std::uint64_t>(w);
  }
  if (::fdatasync(fd.get()) != 0)
    throw Unavailable(fmt::format("cannot sync {}: {}", path, errno_text(errno)));
}

// One read as the job will do it: O_DIRECT (alignment, filesystem support) and, with hipri, on an
// IORING_SETUP_IOPOLL ring (the device must have poll queues).
void probe_read(const std::string& path, const Job& job, std::uint64_t file_size) {
  const std::string hint_direct =
      "use a target on a filesystem that allows it (--target, or TMPDIR for the default file), or --set "
      "workload.direct=false";
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | (job.direct ? O_DIRECT : 0)));
  if (fd.get() < 0) {
    const int e = errno;
    if (job.direct && e == EINVAL)
      throw Unavailable(
          fmt::format("target {}: O_DIRECT is refused (workload.direct is true); {}", path, hint_direct));
    throw Unavailable(fmt::format("target {}: cannot open for reading: {}", path, errno_text(e)));
  }
  if (!job.direct || file_size < job.bs) return;
  void* buf = nullptr;
  if (::posix_memalign(&buf, 4096, job.bs) != 0) throw std::bad_alloc();
  const std::unique_ptr<void, decltype(&std::free)> hold(buf, &std::free);
  if (::pread(fd.get(), buf, job.bs, 0) < 0)
    throw Unavailable(
        fmt::format("target {}: an O_DIRECT read of {} bytes (workload.bs_bytes) is refused: {}", path,
                    job.bs, errno_text(errno)));
  if (!job.hipri) return;
  io_uring ring{};
  if (const int rc = io_uring_queue_init(2, &ring, IORING_SETUP_IOPOLL); rc < 0)
    throw Unavailable(
        fmt::format("workload.hipri: io_uring_setup(IORING_SETUP_IOPOLL) is refused: {}", errno_text(-rc)));
  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  io_uring_prep_read(sqe, fd.get(), buf, static_cast<unsigned>(job.bs), 0);
  int res = io_uring_submit(&ring);
  if (res >= 0) {
    // An IOPOLL ring's completions are found by polling: one pass per io_uring_enter(GETEVENTS),
    // for up to a second (liburing's timed wait does not apply to IOPOLL rings).
    io_uring_cqe* cqe = nullptr;
    const auto give_up = Clock::now() + std::chrono::seconds(1);
    while (io_uring_peek_cqe(&ring, &cqe) != 0 && Clock::now() < give_up)
      ::syscall(__NR_io_uring_enter, ring.ring_fd, 0, 0, IORING_ENTER_GETEVENTS, nullptr, 0);
    res = cqe ? cqe->res : -ETIMEDOUT;
  }
  io_uring_queue_exit(&ring);
  if (res < 0)
    throw Unavailable(
        fmt::format("target {}: a polled read (IORING_SETUP_IOPOLL, workload.hipri) fails: {}; the device "
                    "needs poll queues "
                    "(nvme.poll_queues), or --set workload.hipri=false",
                    path, errno_text(-res)));
}

// Kernel knobs this kernel has but fio sets no option for, where the scenario asks for something
// other than what fio then gets.
std::vector<ModelField> fio_model_fields(const config::Scenario& s, const Job& job) {
  std::vector<ModelField> out;
  auto add = [&](const std::string& path, const std::string& why) { out.push_back({path, s.at(path), why}); };
  if (job.sqpoll && s.at("/kernel/sqpoll/idle_us").get<double>() != 1e6)
    add("/kernel/sqpoll/idle_us",
        "stock fio has no option for sq_thread_idle: it passes 0, which the kernel takes as 1 s");
  if (s.at("/kernel/ring/cq_entries").get<int>() != 0)
    add("/kernel/ring/cq_entries",
        "fio sizes its rings from iodepth, its CQ too (IORING_SETUP_CQSIZE = iodepth)");
  for (const char* path : {"/kernel/iowq/max_bound", "/kernel/iowq/max_unbound"})
    if (s.at(path).get<int>() != 0)
      add(path, "fio does not limit io-wq workers (IORING_REGISTER_IOWQ_MAX_WORKERS)");
  return out;
}

// fio's version from `fio --version` ("fio-3.33"), run as a bounded child; {0, 0} if it says
// something else.
std::pair<int, int> fio_version(const std::string& fio_path, const TempDir& dir, const RunGuard& guard) {
  const fs::path out = dir.path() / "version.out";
  ChildProcess child({fio_path, "--version"}, out.string());
  const auto give_up = Clock::now() + std::chrono::seconds(2);  // fio answers in milliseconds
  while (!child.poll() && Clock::now() < give_up && guard.sleep_until(Clock::now() + kExitPoll)) {
  }
  if (!child.poll()) child.stop(0.2);
  guard.throw_if_aborted();
  std::ifstream f(out);
  std::string text;
  std::getline(f, text);
  int major = 0, minor = 0;
  if (std::sscanf(text.c_str(), "fio-%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

// The setup flags fio's io_uring engine gives its rings on this kernel. From fio 3.33 on
// (engines/io_uring.c, fio_ioring_queue_init; the same through 3.42) it asks for COOP_TASKRUN |
// SINGLE_ISSUER | DEFER_TASKRUN and, on -EINVAL, drops DEFER_TASKRUN with SINGLE_ISSUER, then
// COOP_TASKRUN; before 3.33 it asks for none. No option changes that. An SQPOLL ring refuses all
// three (check_setup_flags), so it ends with none; otherwise this kernel is asked the same way.
unsigned fio_setup_flags(std::pair<int, int> version, const Job& job) {
  if (version < std::make_pair(3, 33) || job.sqpoll) return 0;
  auto kernel_takes = [&](unsigned flags) {
    io_uring ring{};
    io_uring_params p{};
    p.flags = flags | (job.hipri ? IORING_SETUP_IOPOLL : 0);
    const int rc = io_uring_queue_init_params(2, &ring, &p);
    if (rc == 0) io_uring_queue_exit(&ring);
    return rc != -EINVAL;  // another error would fail fio's setup as it fails here
  };
  for (const unsigned flags :
       {IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
        unsigned{IORING_SETUP_COOP_TASKRUN}})
    if (kernel_takes(flags)) return flags;
  return 0;
}

// workload.setup_flags: the kernel's rules (check_setup_flags, with SQPOLL), then what fio does by
// itself, the only thing it can run. [] (the default) leaves fio to its own, which results.json
// records (fio.setup_flags).
void check_fio_setup_flags(const config::Scenario& s, const Job& job, std::pair<int, int> version,
                           unsigned fio_flags) {
  const unsigned asked = check_setup_flags(s, job.sqpoll);
  if (asked == 0 || asked == fio_flags) return;
  std::string want = "[]";
  if (fio_flags != 0) {
    want.clear();
    for (const auto& n : setup_flag_names(fio_flags))
      want += fmt::format("{}\"{}\"", want.empty() ? "[" : ", ", n);
    want += "] or []";
  }
  throw config::InputError(fmt::format(
      "{}: /workload/setup_flags: fio cannot be told which setup flags to use (its io_uring engine has no "
      "option for them); fio {}{} sets up {} itself on this kernel, so expected {}, got {}",
      s.source,
      version.first > 0 ? fmt::format("{}.{}", version.first, version.second) : "(its version unknown)",
      job.sqpoll ? " with sqthread_poll" : "", setup_flag_macros(fio_flags), want,
      s.at("/workload/setup_flags").dump()));
}

struct Target {
  std::string path;
  std::uint64_t size_bytes = 0;  // fio's size= (0: a block device, all of it)
  bool created = false;          // the runner's own file, in its temporary directory
};

Target prepare_target(const Job& job, const HostOptions& o, const TempDir& dir, const RunGuard& guard) {
  Target t;
  std::uint64_t file_size = 0;
  if (o.target.empty()) {
    t.path = (dir.path() / "data").string();
    t.size_bytes = app::fio::kDefaultFileBytes;
    t.created = true;
    fill_file(t.path, t.size_bytes, guard);
    file_size = t.size_bytes;
  } else {
    t.path = o.target;
    struct stat st {};
    if (::stat(t.path.c_str(), &st) != 0)
      throw Unavailable(fmt::format("target {}: {}", t.path, errno_text(errno)));
    if (S_ISDIR(st.st_mode))
      throw Unavailable(fmt::format("target {}: is a directory; give a file or a block device", t.path));
    if (S_ISBLK(st.st_mode) && job.writes)
      throw Unavailable(fmt::format(
          "target {}: a block device, and the workload writes (rw = {}); the host runner does not write to "
          "devices, whose data it would destroy: give a file",
          t.path, job.rw));
    if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
      throw Unavailable(fmt::format("target {}: neither a regular file nor a block device", t.path));
    t.size_bytes = app::fio::size_for_target(t.path);
    file_size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : UINT64_MAX;
    // fio writes what the job writes, and lays out (writes) a file shorter than size=.
    // (Opened, not access()ed: root passes access() on files that refuse writes.)
    if (job.writes || file_size < t.size_bytes) {
      const Fd w(::open(t.path.c_str(), O_WRONLY | O_CLOEXEC));
      if (w.get() < 0)
        throw Unavailable(fmt::format("target {}: not writable ({}), and the job {}", t.path,
                                      errno_text(errno), job.writes ? "writes" : "must extend it to size="));
    }
  }
  probe_read(t.path, job, file_size);
  return t;
}

// What /proc says about fio's threads at one instant, with the machine's and this process's CPU.
struct Snapshot {
  Clock::time_point t;
  std::vector<TaskStats> tasks;
  std::int64_t machine_busy_ns = 0, self_ns = 0;
  std::optional<std::map<std::string, std::uint64_t>> ipis;  // the machine's (machine_ipis)
};

std::optional<Snapshot> snapshot(pid_t pid) {
  Snapshot s;
  try {
    s.machine_busy_ns = machine_busy_ns();
    s.self_ns = process_cpu_ns();
    s.ipis = machine_ipis();
    s.tasks = list_tasks(pid);
  } catch (const std::exception&) {
    return std::nullopt;  // fio has gone
  }
  s.t = Clock::now();
  if (s.tasks.empty()) return std::nullopt;
  return s;
}

// fio's job threads are named "fio" like its main and helper threads; they exist once the job is set
// up, which is when the ramp starts. nullopt if fio exits, a stop comes, or give_up passes first.
std::optional<Clock::time_point> wait_job_threads(ChildProcess& child, int numjobs, const RunGuard& guard,
                                                  Clock::time_point give_up) {
  while (!child.poll() && Clock::now() < give_up) {
    int fio_threads = 0;
    try {
      for (const auto& [tid, comm] : list_task_names(child.pid())) fio_threads += comm == "fio";
    } catch (const std::exception&) {
    }
    if (fio_threads >= numjobs + 1) return Clock::now();
    if (!guard.sleep_until(Clock::now() + kJobStartPoll)) return std::nullopt;
  }
  return std::nullopt;
}

struct CpuWindow {
  json cpu = {{"total_pct", nullptr}, {"by_thread", json::object()}};
  double seconds = 0;
  std::optional<double> other_cpu_pct;
  int threads_exited = 0;
  SchedCounts sched;  // of the live threads, and the machine's IPIs
};

// Each fio thread's CPU over the window goes to its class ("fio", "iou-sqp", "iou-wrk"); a thread
// born in the window counts from 0; one that exits in it is lost (counted in threads_exited).
CpuWindow cpu_window(const Snapshot& a, const Snapshot& b) {
  CpuWindow w;
  w.seconds = seconds(b.t - a.t);
  if (w.seconds <= 0) return w;
  std::map<pid_t, const TaskStats*> before;
  for (const auto& t : a.tasks) before[t.tid] = &t;
  std::map<std::string, double> by_class;
  double fio_ns = 0;
  for (const auto& t : b.tasks) {
    const auto it = before.find(t.tid);
    const TaskStats zero{};
    const TaskStats& b0 = it == before.end() ? zero : *it->second;  // born in the window: all of it
    const double d = static_cast<double>(t.cpu_ns - b0.cpu_ns);
    by_class[thread_class(t.comm)] += std::max(0.0, d);
    w.sched.switches_by_class[thread_class(t.comm)] +=
        (t.voluntary_ctxt_switches - b0.voluntary_ctxt_switches) +
        (t.nonvoluntary_ctxt_switches - b0.nonvoluntary_ctxt_switches);
    fio_ns += std::max(0.0, d);
    w.sched.add_thread(thread_class(t.comm), t, it != before.end() ? it->second : nullptr);
    if (it != before.end()) before.erase(it);
  }
  w.threads_exited = static_cast<int>(before.size());
  const double window_ns = w.seconds * 1e9;
  json by = json::object();
  for (const auto& [cls, ns] : by_class) by[cls + "_pct"] = 100.0 * ns / window_ns;
  w.cpu = {{"total_pct", 100.0 * fio_ns / window_ns}, {"by_thread", by}};
  const double other = static_cast<double>(b.machine_busy_ns - a.machine_busy_ns) - fio_ns -
                       static_cast<double>(b.self_ns - a.self_ns);
  w.other_cpu_pct = std::max(0.0, 100.0 * other / window_ns);
  w.sched.ipis = ipis_between(a.ipis, b.ipis);
  return w;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string last_lines(const std::string& text, int n) {
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  const std::size_t end = pos;
  for (int i = 0; i < n && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  return text.substr(pos == 0 ? 0 : pos + 1, end - (pos == 0 ? 0 : pos + 1));
}

std::vector<std::pair<std::string, std::string>> summary(const json& r, const json& info) {
  auto num = [](const json& j, const char* spec) {
    return j.is_number() ? fmt::format(fmt::runtime(spec), j.get<double>()) : std::string("-");
  };
  std::vector<std::pair<std::string, std::string>> out;
  const json& lat = r.at("latency_us");
  out.emplace_back("throughput", num(r.at("/throughput/ops_per_s"_json_pointer), "{:.1f} IOPS"));
  out.emplace_back("latency (us)", "mean " + num(lat.value("mean", json()), "{:.3f}") + "  p50 " +
                                       num(lat.value("p50", json()), "{:.3f}") + "  p99 " +
                                       num(lat.value("p99", json()), "{:.3f}") + "  max " +
                                       num(lat.value("max", json()), "{:.3f}"));
  for (const char* dir : {"read", "write"})
    if (r.at("fio").contains(dir)) {
      const json& d = r.at("fio").at(dir);
      out.emplace_back(
          std::string("fio ") + dir,
          fmt::format("{} ios  {:.1f} IOPS  {:.1f} MiB/s", d.at("ios").get<std::uint64_t>(),
                      d.at("iops").get<double>(), d.at("bw_bytes_per_s").get<double>() / 1048576));
    }
  std::string by;
  for (const auto& [k, v] : r.at("/cpu/by_thread"_json_pointer).items())
    by += fmt::format("  {} {:.1f}", k.substr(0, k.size() - 4), v.get<double>());
  out.emplace_back("cpu",
                   num(r.at("/cpu/total_pct"_json_pointer), "{:.1f} %") + (by.empty() ? "" : " =" + by));
  out.emplace_back("other processes", num(info.at("other_cpu_pct"), "{:.1f} % CPU"));
  out.emplace_back("target",
                   info.at("/fio/target"_json_pointer).get<std::string>() +
                       (info.at("/fio/target_created"_json_pointer).get<bool>() ? " (temporary)" : ""));
  out.emplace_back("machine",
                   fmt::format("{}, {} CPUs, {}; {}", info.at("kernel_release").get<std::string>(),
                               info.at("nproc").get<int>(), info.at("cpu_model").get<std::string>(),
                               info.at("/fio/version"_json_pointer).get<std::string>()));
  return out;
}

}  // namespace

HostRun run_fio(const config::Scenario& s, const HostOptions& o) {
  if (const auto type = s.at("/workload/type").get<std::string>(); type != "fio")
    throw config::InputError(
        fmt::format("{}: /workload/type: expected \"fio\", got {}", s.source, json(type).dump()));
  const Job job = job_of(s);
  const MachineInfo machine = machine_info();
  std::vector<ModelField> model_fields = model_only_fields(s, machine);
  for (auto& f : fio_model_fields(s, job)) model_fields.push_back(std::move(f));
  const json ignored = check_model_fields(s, model_fields, o.ignore_model_fields);
  check_setup_flags(s, job.sqpoll);  // the kernel's rules, before fio is looked for
  if (job.wait_nr > job.iodepth)
    throw config::InputError(
        fmt::format("{}: /workload/wait_nr: expected at most workload.iodepth ({}), got {}", s.source,
                    job.iodepth, job.wait_nr));
  const std::string fio_path = find_on_path("fio");
  if (fio_path.empty())
    throw Unavailable("fio is not installed (no fio on PATH; Debian: apt-get install fio)");
  require_io_uring({});
  require_cpu(s, "workload.cpus_allowed");
  if (job.sqpoll) require_cpu(s, "workload.sqthread_poll_cpu");

  RunGuard guard(o.quiet_wait_s + kFillBudgetS + job.ramp_s + job.runtime_s + kFioMarginS);
  const TempDir dir;  // destroyed before the guard: on every way out, Interrupted included
  const std::pair<int, int> version = fio_version(fio_path, dir, guard);
  const unsigned fio_flags = fio_setup_flags(version, job);
  check_fio_setup_flags(s, job, version, fio_flags);
  const Target target = prepare_target(job, o, dir, guard);
  guard.throw_if_aborted();

  app::fio::ExportOptions eo;
  eo.target = target.path;
  eo.size_bytes = target.size_bytes;
  // Both directions' latency together, for the run's latency_us (fio's "mixed").
  if (job.rw == "randrw") eo.extra_options = {"unified_rw_reporting=both"};
  // wait_nr: the fewest completions each of fio's waits reaps (1, fio's default, is left unsaid).
  if (job.wait_nr != 1) eo.extra_options.push_back(fmt::format("iodepth_batch_complete_min={}", job.wait_nr));
  const std::string job_text = app::fio::scenario_to_fio(s, eo);
  const fs::path job_path = dir.path() / "job.fio", out_path = dir.path() / "fio.out",
                 log_path = dir.path() / "fio.log";
  analysis::write_file_atomic(job_path.string(), job_text);

  const QuietOutcome quiet =
      wait_for_quiet(o.quiet_wait_s, o.quiet_other_cpu_pct, guard, o.quiet_max_ns_per_add);
  guard.throw_if_aborted();
  const SpeedProbe speed_before = probe_cpu_speed();
  const std::optional<WakeProbe> wake_before = probe_idle_wake(guard);
  const SyscallProbe syscall_before = probe_syscall();
  const std::optional<KickProbe> kick_before = probe_kick(guard);
  guard.throw_if_aborted();

  const std::vector<std::string> argv = {fio_path, "--output-format=normal,json",
                                         "--output=" + out_path.string(), "--eta=never", job_path.string()};
  if (!o.quiet)
    std::cerr << fmt::format("fio: ramp {:g} s + runtime {:g} s on {}\n", job.ramp_s, job.runtime_s,
                             target.path);
  const auto t_spawn = Clock::now();
  const auto fio_deadline = t_spawn + after(job.ramp_s + job.runtime_s + kFioMarginS);
  ChildProcess child(argv, log_path.string());

  // The window: from the ramp's end for runtime, less a little at the end so that the job threads
  // are still there for the second snapshot.
  std::optional<Snapshot> a, b;
  if (const auto t_jobs = wait_job_threads(child, job.numjobs, guard, fio_deadline)) {
    const auto t_a = *t_jobs + after(job.ramp_s);
    const auto t_b = t_a + after(job.runtime_s - std::min(0.05, job.runtime_s / 10));
    if (guard.sleep_until(t_a) && !child.poll()) a = snapshot(child.pid());
    if (a && guard.sleep_until(t_b) && !child.poll()) b = snapshot(child.pid());
  }
  while (!child.poll() && !guard.stop_requested() && Clock::now() < fio_deadline)
    guard.sleep_until(std::min(Clock::now() + kExitPoll, fio_deadline));
  if (!child.poll()) {
    child.stop();
    guard.throw_if_aborted();  // SIGINT/SIGTERM (Interrupted), or the hard limit
    throw std::runtime_error(
        fmt::format("fio did not finish within {:.1f} s (ramp_time + runtime + {:g} s); it was stopped "
                    "(SIGTERM, then SIGKILL)",
                    seconds(fio_deadline - t_spawn), kFioMarginS));
  }
  guard.throw_if_aborted();
  const int status = *child.poll();
  const double wall_s = seconds(Clock::now() - t_spawn);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("fio failed ({}):\n{}", describe_wait_status(status),
                                         last_lines(read_text(log_path), 20)));

  const FioOutput out = split_fio_output(read_text(out_path));
  json r = fio_results(out.json, s);
  CpuWindow cw = a && b ? cpu_window(*a, *b) : CpuWindow{};
  // Without both snapshots (fio's threads ended early), fio's own account: usr + sys per job thread.
  const bool cpu_from_proc = a && b;
  if (!cpu_from_proc) {
    const double pct = (r["/fio/cpu/usr_pct"_json_pointer].get<double>() +
                        r["/fio/cpu/sys_pct"_json_pointer].get<double>()) *
                       job.numjobs;
    cw.cpu = {{"total_pct", pct}, {"by_thread", {{"fio_pct", pct}}}};
  }
  r["source"] = "host";
  r["tool"] = {{"name", "uringsim"}, {"version", o.tool_version}};
  r["scenario"] = s.doc;
  r["variant"] = s.variant;
  r["seed"] = s.at("/seed");
  r["cpu"] = cw.cpu;
  const json& sqp = cw.cpu.at("by_thread").value("iou-sqp_pct", json());
  r["fio"]["sq_thread_cpu_pct"] =
      job.sqpoll && sqp.is_number() ? json(sqp.get<double>() / job.numjobs) : json();
  r["fio"]["setup_flags"] = setup_flag_names(fio_flags);
  r["fio"]["wait_nr"] = job.wait_nr;
  // Per request over the CPU window, whose I/Os are fio's rate times its length; fio's job threads
  // own the rings (its main and helper threads, also "fio", mostly sleep).
  const double window_ios = r.at("/throughput/ops_per_s"_json_pointer).get<double>() * cw.seconds;
  if (cpu_from_proc)
    add_per_request(r, cw.sched, static_cast<std::uint64_t>(std::llround(window_ios)),
                    {"fio", "iou-sqp", "iou-wrk"});
  json info = machine.to_json();
  info["io_uring_disabled"] = read_io_uring_disabled();
  info["warmup_ms"] = s.at("/warmup_ms");
  info["window_ms"] = cw.seconds * 1e3;  // between the CPU snapshots
  info["wall_s"] = wall_s;
  info["other_cpu_pct"] = cw.other_cpu_pct ? json(*cw.other_cpu_pct) : json();
  info["quiet_wait"] = quiet.to_json();
  info["cpu_speed"] = {{"before", speed_before.to_json()}, {"after", probe_cpu_speed().to_json()}};
  info["idle_wake"] = {{"before", wake_probe_json(wake_before)}};
  info["syscall"] = {{"before", syscall_before.to_json()}};
  info["kick"] = {{"before", kick_probe_json(kick_before)}};
  info["ignored_fields"] = ignored;
  info["peak_rss_bytes"] = analysis::peak_rss_bytes();
  std::string command;
  for (const auto& arg : argv) command += fmt::format("{}{}", command.empty() ? "" : " ", arg);
  info["fio"] = {
      {"path", fio_path},
      {"version", r["fio"]["version"]},
      {"command", command},
      {"job_file", job_text},
      {"target", target.path},
      {"target_created", target.created},
      {"size_bytes", target.size_bytes},
      {"exit", describe_wait_status(status)},
      {"cpu_source", cpu_from_proc ? "/proc" : "fio"},
      {"cpu_window_s", cpu_from_proc ? json({seconds(a->t - t_spawn), seconds(b->t - t_spawn)}) : json()},
      {"threads_exited_in_window", cw.threads_exited}};

  HostRun run;
  run.summary = summary(r, info);
  run.results = std::move(r);
  run.run_info = std::move(info);
  run.text = out.text;
  return run;
}

}  // namespace uringsim::host
