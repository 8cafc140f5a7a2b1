#include "host/thread_setup.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "config/input_error.hpp"
#include "host/host_run.hpp"

namespace uringsim::host {

void name_this_thread(const std::string& name) {
  ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
}

int set_this_thread_cpus(std::initializer_list<int> cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int c : cpus) CPU_SET(c, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

void pin_this_thread(int cpu, const std::string& what) {
  if (const int err = set_this_thread_cpus({cpu}))
    throw Unavailable(fmt::format("{}: cannot pin to CPU {}: {} (is it outside this process's CPU set?)",
                                  what, cpu, std::strerror(err)));
}

void set_this_thread_nice(int nice, const std::string& what) {
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice) != 0)
    throw Unavailable(fmt::format("{}: cannot set nice {}: {}{}", what, nice, std::strerror(errno),
                                  nice < 0 ? " (a negative nice needs CAP_SYS_NICE)" : ""));
}

int online_cpus() {
  return static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
}

void check_cpu_index(const std::string& source, const std::string& pointer, int cpu) {
  const int n = online_cpus();
  if (cpu >= n)
    throw config::InputError(fmt::format(
        "{}: {}: expected -1 or a CPU index below the online CPUs ({}), got {}", source, pointer, n, cpu));
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  reset();
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void throw_errno(const std::string& what, int err) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(err)));
}

}  // namespace uringsim::host
