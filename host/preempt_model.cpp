#include "host/preempt_model.hpp"

#include "host/machine_info.hpp"

#include <sys/utsname.h>
#include <zlib.h>

#include <regex>

namespace uringsim::host {

namespace {

std::string read_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return "";
  std::string out;
  char buf[1 << 14];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

bool known(const std::string& m) {
  return m == "none" || m == "voluntary" || m == "full" || m == "lazy";
}

}  // namespace

std::string parse_debugfs_preempt(const std::string& text) {
  std::smatch m;
  static const std::regex re(R"(\(([a-z]+)\))");
  if (std::regex_search(text, m, re) && known(m[1])) return m[1];
  return "";
}

std::string parse_cmdline_preempt(const std::string& cmdline) {
  std::smatch m;
  static const std::regex re(R"((^|\s)preempt=([a-z]+)(\s|$))");
  if (std::regex_search(cmdline, m, re) && known(m[2])) return m[2];
  return "";
}

std::string parse_config_preempt(const std::string& config, bool* dynamic) {
  auto has = [&](const char* line) {
    const std::regex re(std::string("(^|\n)") + line + "(\n|$)");
    return std::regex_search(config, re);
  };
  if (dynamic) *dynamic = has("CONFIG_PREEMPT_DYNAMIC=y");
  if (has("CONFIG_PREEMPT_RT=y")) return "full";
  if (has("CONFIG_PREEMPT_NONE=y")) return "none";
  if (has("CONFIG_PREEMPT_VOLUNTARY=y")) return "voluntary";
  if (has("CONFIG_PREEMPT_LAZY=y")) return "lazy";
  if (has("CONFIG_PREEMPT=y")) return "full";
  return "";
}

PreemptModel read_preempt_model() {
  if (auto m = parse_debugfs_preempt(read_text("/sys/kernel/debug/sched/preempt")); !m.empty())
    return {m, "/sys/kernel/debug/sched/preempt"};
  std::string config = read_gzip("/proc/config.gz");
  std::string config_path = "/proc/config.gz";
  if (config.empty()) {
    utsname u{};
    if (::uname(&u) == 0) config_path = std::string("/boot/config-") + u.release;
    config = read_text(config_path);
  }
  bool dynamic = false;
  const std::string built = parse_config_preempt(config, &dynamic);
  // preempt= only means something to a PREEMPT_DYNAMIC kernel (or one whose config we cannot see).
  if (dynamic || config.empty())
    if (auto m = parse_cmdline_preempt(read_text("/proc/cmdline")); !m.empty())
      return {m, "/proc/cmdline preempt=" + m};
  if (!built.empty())
    return {built, config_path + " (built-in default" + (dynamic ? ", no preempt= at boot)" : ")")};
  return {};
}

}  // namespace uringsim::host
