// How much of a busy CPU goes to things other than its thread? (docs/validation.md, sessions 17
// and 32.) A thread pinned to each CPU named (arguments, default 1; several spin at once) reads
// CLOCK_MONOTONIC in a loop for SECONDS (environment, default 2); each gap between two readings
// over 1 us is time the CPU spent elsewhere: the guest's own interrupts (the timer tick,
// /proc/interrupts LOC) or, on a VM, the host taking the vCPU away, which the guest does not see.
// Prints per CPU the gaps' count per second, their sizes and total share, the long ones (over
// 100 us and 1 ms, and the longest), and the guest's local timer interrupts on that CPU over the
// same time for comparison. On this project's VM the host takes a vCPU away for milliseconds far
// more often when both vCPUs spin (`cpu_gaps 0 1`) than when one does (`cpu_gaps 0`).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxGaps = 200000, kMaxCpus = 64 };

struct Spin {
  int cpu;
  double seconds;
  double* gaps;
  int n;
  double total;
  int failed;
};

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

// The LOC line of /proc/interrupts: the local timer interrupts of `cpu` so far (-1: unknown).
static long local_timer_interrupts(int cpu) {
  FILE* f = fopen("/proc/interrupts", "r");
  if (!f) return -1;
  char line[8192];
  long n = -1;
  while (fgets(line, sizeof line, f)) {
    char* p = line;
    while (*p == ' ') ++p;
    if (strncmp(p, "LOC:", 4) != 0) continue;
    p += 4;
    for (int c = 0; c <= cpu; ++c) n = strtol(p, &p, 10);
    break;
  }
  fclose(f);
  return n;
}

static int by_size(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void* spin(void* arg) {
  struct Spin* s = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(s->cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    s->failed = 1;
    return NULL;
  }
  const double start = now_ns(), end = start + s->seconds * 1e9;
  double prev = start;
  while (prev < end) {
    const double t = now_ns();
    if (t - prev > 1000 && s->n < kMaxGaps) {
      s->gaps[s->n++] = t - prev;
      s->total += t - prev;
    }
    prev = t;
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char* env = getenv("SECONDS");
  const double seconds = env && atof(env) > 0 ? atof(env) : 2;
  int n = argc > 1 ? argc - 1 : 1;
  if (n > kMaxCpus) n = kMaxCpus;
  struct Spin spins[kMaxCpus];
  pthread_t threads[kMaxCpus];
  long loc0[kMaxCpus];
  for (int i = 0; i < n; ++i) {
    spins[i] = (struct Spin){.cpu = argc > 1 ? atoi(argv[i + 1]) : 1, .seconds = seconds};
    spins[i].gaps = malloc(sizeof(double) * kMaxGaps);
    if (!spins[i].gaps) return 1;
    loc0[i] = local_timer_interrupts(spins[i].cpu);
  }
  for (int i = 0; i < n; ++i) pthread_create(&threads[i], NULL, spin, &spins[i]);
  for (int i = 0; i < n; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < n; ++i) {
    struct Spin* s = &spins[i];
    if (s->failed) {
      fprintf(stderr, "cpu %d: could not pin a thread there\n", s->cpu);
      return 1;
    }
    const long loc1 = local_timer_interrupts(s->cpu);
    qsort(s->gaps, s->n, sizeof s->gaps[0], by_size);
    int over100 = 0, over1000 = 0;
    double long_ns = 0;
    for (int k = 0; k < s->n; ++k) {
      if (s->gaps[k] > 100e3) ++over100, long_ns += s->gaps[k];
      if (s->gaps[k] > 1e6) ++over1000;
    }
    const int m = s->n;
    printf("cpu %d: %.0f gaps over 1 us per second, %.2f %% of the CPU; gap p10 %.1f us, median %.1f us, p90 %.1f us\n",
           s->cpu, m / seconds, 100.0 * s->total / (seconds * 1e9), m ? s->gaps[m / 10] / 1e3 : 0,
           m ? s->gaps[m / 2] / 1e3 : 0, m ? s->gaps[m * 9 / 10] / 1e3 : 0);
    printf("cpu %d: over %.0f s, %d gaps over 100 us (%.1f ms in all), %d over 1 ms, the longest %.0f us\n", s->cpu,
           seconds, over100, long_ns / 1e6, over1000, m ? s->gaps[m - 1] / 1e3 : 0);
    if (loc0[i] >= 0 && loc1 >= 0)
      printf("cpu %d: %.0f local timer interrupts per second\n", s->cpu, (loc1 - loc0[i]) / seconds);
    free(s->gaps);
  }
  return 0;
}
