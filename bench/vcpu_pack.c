// Does this kernel put a woken thread on its waker's CPU when another CPU is idle? Upstream's
// select_task_rq_fair does not: an idle previous CPU, or an idle CPU its scan finds, wins over the
// busy waker's (docs/validation.md, session 34). Some kernels (this project's VM runs one with a
// `kernel.sched_vcpu_pack` setting that no public source names) pack wakees onto the waker's vCPU.
// The waker is pinned to one CPU and runs a duty cycle: it spins `busy` us, wakes the sleeper with a
// futex while still spinning, then sleeps `idle` us. The wakee, allowed on both CPUs, sleeps from
// a CPU chosen by the case, and notes the CPU it wakes on. Two cases:
//   other: the wakee last ran on CPU 0, idle at the wake; the waker spins on CPU 1.
//   same:  the wakee last ran on CPU 0, where the waker spins; CPU 1 is idle.
// Each prints the share of wake-ups that land on the waker's CPU, per duty cycle: upstream gives
// 0 in both cases. The last row's waker never sleeps (session 15's probe: the two vCPUs share a
// scheduler cache domain, so select_idle_sibling finds the idle one). Needs 2 CPUs; runs ~10 s.
//   cc -O2 -pthread bench/vcpu_pack.c -o /tmp/vp && /tmp/vp
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kRounds = 300 };
static atomic_int word, asleep, finished;
static int waker_cpu, on_waker_cpu;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static void spin_us(double us) {
  const double t0 = now_us();
  while (now_us() - t0 < us) {
  }
}

static void allow(int only_cpu) {  // only_cpu < 0: CPUs 0 and 1
  cpu_set_t set;
  CPU_ZERO(&set);
  if (only_cpu != 1) CPU_SET(0, &set);
  if (only_cpu != 0) CPU_SET(1, &set);
  sched_setaffinity(0, sizeof set, &set);
}

static void* wakee(void* arg) {
  (void)arg;
  for (int i = 0; i < kRounds; ++i) {
    allow(0);   // run on CPU 0 ...
    allow(-1);  // ... then sleep there, free to move
    atomic_store(&asleep, 1);
    while (atomic_load(&word) == 0) syscall(SYS_futex, &word, FUTEX_WAIT, 0, NULL, NULL, 0);
    on_waker_cpu += sched_getcpu() == waker_cpu;
    atomic_store(&word, 0);
  }
  atomic_store(&finished, 1);
  return NULL;
}

// One duty cycle: the share of wake-ups that landed on the waker's CPU.
static double run(int cpu, double busy_us, double idle_us) {
  waker_cpu = cpu;
  on_waker_cpu = 0;
  atomic_store(&finished, 0);
  atomic_store(&asleep, 0);
  allow(cpu);
  pthread_t t;
  pthread_create(&t, NULL, wakee, NULL);
  for (;;) {
    while (!atomic_load(&asleep) && !atomic_load(&finished)) {
    }
    if (atomic_load(&finished)) break;
    spin_us(busy_us);
    atomic_store(&asleep, 0);
    atomic_store(&word, 1);
    syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0);
    if (idle_us > 0)
      usleep((useconds_t)idle_us);
    else
      spin_us(busy_us);  // still busy while the wakee lands
  }
  pthread_join(t, NULL);
  return (double)on_waker_cpu / kRounds;
}

int main(void) {
  static const double cycle[][2] = {{50, 1000},   {1000, 1000}, {2000, 1000},
                                    {2500, 1000}, {3000, 1000}, {300, 0}};
  printf("waker's duty cycle          share of wake-ups on the waker's CPU\n");
  printf("busy us  idle us            other (prev CPU idle)   same (prev = waker's, other CPU idle)\n");
  for (unsigned i = 0; i < sizeof cycle / sizeof cycle[0]; ++i)
    printf("%7.0f  %7.0f            %5.2f                   %5.2f\n", cycle[i][0], cycle[i][1],
           run(1, cycle[i][0], cycle[i][1]), run(0, cycle[i][0], cycle[i][1]));
  return 0;
}
