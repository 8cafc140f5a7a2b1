#include "tests/fuzz/sandbox.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace uringsim::fuzz {

Outcome run_in_child(const std::function<int()>& body, double timeout_s, const std::filesystem::path& log) {
  const auto start = std::chrono::steady_clock::now();
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    std::exit(3);
  }
  if (pid == 0) {
    setpgid(0, 0);
    const int in = open("/dev/null", O_RDONLY), out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
#if !defined(__SANITIZE_ADDRESS__)
    // A mutated size must not take the machine's memory (ASan reserves terabytes of shadow: not there).
    const rlimit as{4ull << 30, 4ull << 30};
    setrlimit(RLIMIT_AS, &as);
#endif
    const int rc = body();  // an exception escaping it aborts, as it would abort the CLI
    std::cout.flush();
    std::exit(rc);  // static destructors run, as after main()
  }
  setpgid(pid, pid);
  Outcome o;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r == pid) {
      if (WIFSIGNALED(status)) {
        o.kind = Outcome::Kind::Signal;
        o.code = WTERMSIG(status);
      } else {
        o.code = WEXITSTATUS(status);
      }
      break;
    }
    if (o.seconds > timeout_s) {  // the group exists: its leader is not reaped yet
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      o.kind = Outcome::Kind::Timeout;
      break;
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(5)) pause *= 2;
  }
  return o;
}

}  // namespace uringsim::fuzz
