#include "host/machine_info.hpp"

#include "host/preempt_model.hpp"

#include <liburing.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "host/host_run.hpp"

namespace uringsim::host {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

namespace {

// The value of the first "key : value" line of /proc/cpuinfo text, or "".
std::string cpuinfo_value(const std::string& cpuinfo, const std::string& key) {
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (line.find_first_not_of(" \t", key.size()) != colon) continue;  // a longer key
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

nlohmann::json MachineInfo::to_json() const {
  return {{"kernel_release", kernel_release},
          {"cpu_model", cpu_model},
          {"nproc", nproc},
          {"ghz_nominal", ghz_nominal},
          {"ghz_source", ghz_source},
          {"date", date},
          {"preempt", preempt},
          {"preempt_source", preempt_source}};
}

std::pair<int, int> parse_kernel_version(const std::string& release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

std::pair<double, std::string> nominal_ghz(const std::string& cpuinfo) {
  static const std::regex at_ghz(R"(@\s*([0-9]+(\.[0-9]+)?)\s*GHz)");
  std::smatch m;
  const std::string model = cpuinfo_value(cpuinfo, "model name");
  if (std::regex_search(model, m, at_ghz)) return {std::stod(m[1].str()), "model name"};
  const std::string mhz = cpuinfo_value(cpuinfo, "cpu MHz");
  if (!mhz.empty()) {
    const double v = std::strtod(mhz.c_str(), nullptr);
    if (v > 0) return {v / 1000.0, "cpu MHz"};
  }
  return {0.0, ""};
}

MachineInfo machine_info() {
  MachineInfo m;
  utsname u{};
  if (::uname(&u) == 0) m.kernel_release = u.release;
  std::tie(m.kernel_major, m.kernel_minor) = parse_kernel_version(m.kernel_release);
  const std::string cpuinfo = read_text("/proc/cpuinfo");
  m.cpu_model = cpuinfo_value(cpuinfo, "model name");
  m.nproc = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  std::tie(m.ghz_nominal, m.ghz_source) = nominal_ghz(cpuinfo);
  m.date = utc_now_iso8601();
  const PreemptModel pm = read_preempt_model();
  m.preempt = pm.model;
  m.preempt_source = pm.source;
  return m;
}

int read_io_uring_disabled() {
  std::ifstream f("/proc/sys/kernel/io_uring_disabled");
  int v = -1;
  if (!(f >> v)) return -1;
  return v;
}

std::string io_uring_unavailable_reason(int disabled, int init_errno) {
  if (init_errno == 0) return "";
  if (init_errno == ENOSYS)
    return "this kernel has no io_uring (io_uring_setup: ENOSYS; it was built without CONFIG_IO_URING)";
  if (init_errno == EPERM) {
    if (disabled == 2) return "io_uring is disabled on this machine (kernel.io_uring_disabled = 2)";
    if (disabled == 1)
      return "io_uring is restricted to the group kernel.io_uring_group (kernel.io_uring_disabled = 1) "
             "and this process is not in it";
    return "io_uring_setup was refused (EPERM): a seccomp filter or the container runtime forbids it";
  }
  return fmt::format("cannot create an io_uring instance: {}", std::strerror(init_errno));
}

std::string op_name(int op) {
  switch (op) {
    case IORING_OP_NOP:
      return "IORING_OP_NOP";
    case IORING_OP_RECV:
      return "IORING_OP_RECV";
    case IORING_OP_SEND:
      return "IORING_OP_SEND";
    case IORING_OP_POLL_ADD:
      return "IORING_OP_POLL_ADD";
    case IORING_OP_READ:
      return "IORING_OP_READ";
    case IORING_OP_WRITE:
      return "IORING_OP_WRITE";
    default:
      return fmt::format("IORING_OP_{}", op);
  }
}

std::vector<std::string> missing_ops(const io_uring_probe& probe, const std::vector<int>& ops) {
  std::vector<std::string> missing;
  for (const int op : ops)
    if (!io_uring_opcode_supported(&probe, op)) missing.push_back(op_name(op));
  return missing;
}

void require_io_uring(const std::vector<int>& ops) {
  io_uring ring{};
  const int rc = io_uring_queue_init(4, &ring, 0);
  if (const std::string why = io_uring_unavailable_reason(read_io_uring_disabled(), rc < 0 ? -rc : 0);
      !why.empty())
    throw Unavailable(why);
  io_uring_probe* probe = io_uring_get_probe_ring(&ring);
  io_uring_queue_exit(&ring);
  if (!probe) throw Unavailable("this kernel's io_uring cannot be probed for its operations (before 5.6)");
  const auto missing = missing_ops(*probe, ops);
  io_uring_free_probe(probe);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw Unavailable(
        fmt::format("this kernel's io_uring does not support {}, which the workload needs", list));
  }
}

}  // namespace uringsim::host
