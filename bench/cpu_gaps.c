// How much of a busy CPU goes to things other than its thread? (docs/validation.md, session 17.)
// A thread pinned to CPU N (argument, default 1) reads CLOCK_MONOTONIC in a loop for 2 s; each gap
// between two readings over 1 us is time the CPU spent elsewhere: the guest's own interrupts
// (the timer tick, /proc/interrupts LOC) or, on a VM, the host taking the vCPU away, which the
// guest does not see. Prints the gaps' count per second, their sizes and total share, and the
// guest's local timer interrupts on that CPU over the same time for comparison.
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxGaps = 100000 };
static double gaps[kMaxGaps];

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

int main(int argc, char** argv) {
  const int cpu = argc > 1 ? atoi(argv[1]) : 1;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (sched_setaffinity(0, sizeof s, &s) != 0) {
    perror("sched_setaffinity");
    return 1;
  }
  const double seconds = 2;
  const long loc0 = local_timer_interrupts(cpu);
  const double start = now_ns(), end = start + seconds * 1e9;
  double prev = start, total = 0;
  int n = 0;
  while (prev < end) {
    const double t = now_ns();
    if (t - prev > 1000 && n < kMaxGaps) {
      gaps[n++] = t - prev;
      total += t - prev;
    }
    prev = t;
  }
  const long loc1 = local_timer_interrupts(cpu);
  qsort(gaps, n, sizeof gaps[0], by_size);
  printf("cpu %d: %.0f gaps over 1 us per second, %.2f %% of the CPU; gap p10 %.1f us, median %.1f us, p90 %.1f us\n",
         cpu, n / seconds, 100.0 * total / (seconds * 1e9), n ? gaps[n / 10] / 1e3 : 0, n ? gaps[n / 2] / 1e3 : 0,
         n ? gaps[n * 9 / 10] / 1e3 : 0);
  if (loc0 >= 0 && loc1 >= 0) printf("cpu %d: %.0f local timer interrupts per second\n", cpu, (loc1 - loc0) / seconds);
  return 0;
}
