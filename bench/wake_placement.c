// Where does Linux put a woken thread whose previous CPU is busy, when another CPU is idle?
// (docs/validation.md, session 15.) A waker pinned to CPU 0 spins; the wakee goes to sleep from
// CPU 0 (so that is its previous CPU), allowed on CPUs 0 and 1; the waker wakes it with a futex
// while still spinning, and the wakee notes the CPU it woke on. On a machine where the two CPUs
// share a scheduler cache domain, select_idle_sibling finds idle CPU 1. Needs 2 CPUs; runs ~0.3 s.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kRounds = 400 };
static atomic_int word, asleep, finished;
static int landed[2];

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void spin_s(double s) {
  const double t0 = now_s();
  while (now_s() - t0 < s) {
  }
}

static void allow(int only_cpu) {  // only_cpu < 0: CPUs 0 and 1
  cpu_set_t set;
  CPU_ZERO(&set);
  if (only_cpu < 0) {
    CPU_SET(0, &set);
    CPU_SET(1, &set);
  } else {
    CPU_SET(only_cpu, &set);
  }
  sched_setaffinity(0, sizeof set, &set);
}

static void* wakee(void* arg) {
  (void)arg;
  for (int i = 0; i < kRounds; ++i) {
    allow(0);   // run on CPU 0 ...
    allow(-1);  // ... then sleep there, free to move
    atomic_store(&asleep, 1);
    while (atomic_load(&word) == 0) syscall(SYS_futex, &word, FUTEX_WAIT, 0, NULL, NULL, 0);
    const int cpu = sched_getcpu();
    if (cpu == 0 || cpu == 1) ++landed[cpu];
    atomic_store(&word, 0);
  }
  atomic_store(&finished, 1);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, wakee, NULL);
  allow(0);
  while (!atomic_load(&finished)) {
    while (!atomic_load(&asleep) && !atomic_load(&finished)) {
    }
    spin_s(300e-6);  // the wakee is asleep; CPU 0 busy, CPU 1 idle
    atomic_store(&asleep, 0);
    atomic_store(&word, 1);
    syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0);
    spin_s(300e-6);  // stay busy while it lands
  }
  pthread_join(t, NULL);
  printf("woken from busy CPU 0, previous CPU 0: on CPU 0 %d times, on idle CPU 1 %d times\n", landed[0],
         landed[1]);
  return 0;
}
