#pragma once
// Small pieces every host runner thread uses: its name (the comm `top` and cpu.by_thread show),
// its CPU, its nice value, and a file descriptor that closes itself.
#include <initializer_list>
#include <string>
#include <utility>

namespace uringsim::host {

// pthread_setname_np on the calling thread; names are cut to 15 characters by the kernel.
void name_this_thread(const std::string& name);
// sched_setaffinity of the calling thread to these CPUs: 0, or the errno of a refusal. The one
// place host code sets an affinity; the callers below word the error for their users.
int set_this_thread_cpus(std::initializer_list<int> cpus);
// The calling thread pinned to one CPU; host::Unavailable if the kernel refuses
// (e.g. the CPU is outside this process's cpuset). what: the field, for the message.
void pin_this_thread(int cpu, const std::string& what);
// setpriority of the calling thread; host::Unavailable if refused (a negative nice needs
// CAP_SYS_NICE).
void set_this_thread_nice(int nice, const std::string& what);

// The online CPUs (sysconf), which the host's CPU fields must be below.
int online_cpus();
// config::InputError "<source>: <pointer>: expected -1 or a CPU index below the online CPUs (N), got C".
void check_cpu_index(const std::string& source, const std::string& pointer, int cpu);

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  void reset();

 private:
  int fd_ = -1;
};

// "what: strerror(err)" as a std::runtime_error.
[[noreturn]] void throw_errno(const std::string& what, int err);

}  // namespace uringsim::host
