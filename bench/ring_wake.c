// What a send() costs its sender when it fires a poll armed by a ring task asleep in
// io_uring_enter (waiting for a CQE) on the other CPU: the poll's wake callback queues task_work
// and TWA_SIGNAL wakes the task (set_notify_signal -> wake_up_state). Against a send() that wakes
// nobody (the data is queued while the reader spins in user space), and beside a FUTEX_WAKE of a
// thread asleep on that CPU against one with nobody waiting, which is what `calibrate` times as
// costs.wake_cycles and the model charges for this wake-up (docs/validation.md, session 39).
// The sender is on CPU 0, the ring task on CPU 1; each wake comes after the task has slept
// `idle` us (argument, default 20). Medians of 380 rounds after 20. Needs 2 CPUs and liburing.
//   cc -O2 -pthread bench/ring_wake.c -o /tmp/rw -luring && /tmp/rw 20
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <liburing.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kRounds = 400, kWarm = 20, kBytes = 64 };
static atomic_int armed, reaped, queued, futex_word, futex_done;
static int server_fd;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void spin_ns(double ns) {
  const double end = now_ns() + ns;
  while (now_ns() < end) {
  }
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("ring_wake: sched_setaffinity (needs CPUs 0 and 1)");
    exit(1);
  }
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return v[n / 2];
}

static void read_all(int fd) {
  char in[kBytes];
  for (int got = 0; got < kBytes;) {
    const ssize_t r = recv(fd, in + got, (size_t)(kBytes - got), 0);
    if (r <= 0) {
      perror("ring_wake: recv");
      exit(1);
    }
    got += (int)r;
  }
}

static void* ring_task(void* arg) {
  (void)arg;
  pin(1);
  struct io_uring ring;
  if (io_uring_queue_init(8, &ring, 0) != 0) {  // no COOP_TASKRUN: TWA_SIGNAL
    fprintf(stderr, "ring_wake: io_uring_queue_init failed\n");
    exit(1);
  }
  for (int i = 1; i <= kRounds; ++i) {
    io_uring_prep_poll_add(io_uring_get_sqe(&ring), server_fd, POLLIN);
    io_uring_submit(&ring);
    atomic_store(&armed, i);
    struct io_uring_cqe* cqe;
    if (io_uring_wait_cqe(&ring, &cqe) != 0) {  // asleep in io_uring_enter until the send
      fprintf(stderr, "ring_wake: io_uring_wait_cqe failed\n");
      exit(1);
    }
    io_uring_cqe_seen(&ring, cqe);
    read_all(server_fd);
    atomic_store(&reaped, i);
    while (atomic_load(&queued) != i) {  // in user space while the plain send is queued
    }
    read_all(server_fd);
    atomic_store(&reaped, -i);
    while (atomic_load(&futex_word) != i)  // asleep in FUTEX_WAIT until the sender's wake
      syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, i - 1, NULL, NULL, 0);
    atomic_store(&futex_done, i);
  }
  io_uring_queue_exit(&ring);
  return NULL;
}

static double timed_send(int fd) {
  char out[kBytes] = {0};
  const double t0 = now_ns();
  if (send(fd, out, kBytes, 0) != kBytes) {
    perror("ring_wake: send");
    exit(1);
  }
  return now_ns() - t0;
}

static double timed_futex_wake(atomic_int* word) {
  const double t0 = now_ns();
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  return now_ns() - t0;
}

int main(int argc, char** argv) {
  const double idle_ns = (argc > 1 ? atof(argv[1]) : 20) * 1e3;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  const int listener = socket(AF_INET, SOCK_STREAM, 0), client = socket(AF_INET, SOCK_STREAM, 0);
  if (bind(listener, (struct sockaddr*)&a, sizeof a) || listen(listener, 1) ||
      getsockname(listener, (struct sockaddr*)&a, &len) || connect(client, (struct sockaddr*)&a, sizeof a)) {
    perror("ring_wake: loopback connection");
    return 1;
  }
  server_fd = accept(listener, NULL, NULL);
  const int one = 1;
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  pin(0);
  pthread_t t;
  pthread_create(&t, NULL, ring_task, NULL);
  static double wake[kRounds], plain[kRounds], futex[kRounds], futex_none[kRounds];
  int n = 0;
  atomic_int nobody = 0;
  for (int i = 1; i <= kRounds; ++i) {
    while (atomic_load(&armed) != i) {
    }
    spin_ns(idle_ns);
    const double w = timed_send(client);
    while (atomic_load(&reaped) != i) {
    }
    spin_ns(idle_ns);
    const double p = timed_send(client);
    atomic_store(&queued, i);
    while (atomic_load(&reaped) != -i) {
    }
    spin_ns(idle_ns);
    atomic_store(&futex_word, i);
    const double f = timed_futex_wake(&futex_word);
    while (atomic_load(&futex_done) != i) {
    }
    const double f0 = timed_futex_wake(&nobody);
    if (i > kWarm) {
      wake[n] = w, plain[n] = p, futex[n] = f, futex_none[n] = f0;
      ++n;
    }
  }
  pthread_join(t, NULL);
  const double mw = median(wake, n), mp = median(plain, n), mf = median(futex, n),
               mf0 = median(futex_none, n);
  printf(
      "after %.0f us asleep: send() waking the ring task %.0f ns, send() waking nobody %.0f ns: %.0f ns "
      "more; "
      "FUTEX_WAKE of a sleeper %.0f ns, with nobody waiting %.0f ns: %.0f ns more\n",
      idle_ns / 1e3, mw, mp, mw - mp, mf, mf0, mf - mf0);
  return 0;
}
