#include "analysis/io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace uringsim::analysis {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw std::runtime_error(fmt::format("{} '{}': {}", what, path, std::strerror(err)));
}

// Copy with non-finite numbers replaced by null; done explicitly rather than relying on how the
// serializer happens to print them.
nlohmann::json sanitize(const nlohmann::json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    return std::isfinite(v) ? j : nlohmann::json(nullptr);
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = sanitize(it.value());
    return out;
  }
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : j) out.push_back(sanitize(v));
    return out;
  }
  return j;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  const fs::path target(path);
  if (target.filename().empty()) throw std::runtime_error(fmt::format("'{}' does not name a file", path));
  const fs::path dir = target.parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      throw std::runtime_error(fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  }
  // Same directory as the target so rename() stays within one filesystem and is atomic; pid plus a
  // counter keeps concurrent writers (processes or threads) from sharing a temporary.
  static std::atomic<std::uint64_t> counter{0};
  const fs::path tmp =
      dir / fmt::format(".{}.tmp.{}.{}", target.filename().string(), ::getpid(), counter.fetch_add(1));
  const std::string tmp_s = tmp.string();

  const int fd = ::open(tmp_s.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", tmp_s, errno);
  auto abandon = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp_s.c_str());
    fail(what, tmp_s, err);
  };
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("cannot write");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  // Without fsync a crash after rename could leave an empty file under the final name.
  if (::fsync(fd) != 0) abandon("cannot fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp_s.c_str());
    fail("cannot close", tmp_s, err);
  }
  if (::rename(tmp_s.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_s.c_str());
    fail("cannot rename temporary onto", path, err);
  }
}

std::string dump_json(const nlohmann::json& j) {
  return sanitize(j).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::uint64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::uint64_t kb = 0;
    if (fields >> kb) return kb * 1024;  // the kernel reports kB
    return 0;
  }
  return 0;
}

}  // namespace uringsim::analysis
