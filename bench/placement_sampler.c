// For bench/placement.sh: every millisecond, each thread of process PID named like the echo's
// classes (io_uring_echo_s, iou-wrk-*, client-*): its schedstat (CPU time, run delay, slices) and
// the CPU it last ran on (field 39 of its stat). One CSV line per thread and sample, until the
// process exits. Reads /proc only; a C program so that sampling costs the machine little.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kMaxThreads = 64 };
typedef struct {
  int tid, fd_schedstat, fd_stat;
  char comm[64];
} Thread;
static Thread threads[kMaxThreads];
static int nthreads;

static int read_at0(int fd, char* buf, int size) {
  int n = (int)pread(fd, buf, (size_t)size - 1, 0);
  if (n < 0) n = 0;
  buf[n] = 0;
  return n;
}

static int wanted(const char* comm) {
  return !strncmp(comm, "io_uring_echo", 13) || !strncmp(comm, "iou-wrk", 7) || !strncmp(comm, "client", 6);
}

// New threads of the process (workers come and go); false once the process is gone.
static int discover(int pid) {
  char path[128];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR* dir = opendir(path);
  if (!dir) return 0;
  struct dirent* e;
  while ((e = readdir(dir))) {
    const int tid = atoi(e->d_name);
    if (tid <= 0 || nthreads >= kMaxThreads) continue;
    int known = 0;
    for (int i = 0; i < nthreads; i++) known |= threads[i].tid == tid;
    if (known) continue;
    char comm[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
    const int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    read_at0(fd, comm, sizeof comm);
    close(fd);
    comm[strcspn(comm, "\n")] = 0;
    if (!wanted(comm)) continue;
    Thread* t = &threads[nthreads++];
    t->tid = tid;
    snprintf(t->comm, sizeof t->comm, "%s", comm);
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
    t->fd_schedstat = open(path, O_RDONLY);
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    t->fd_stat = open(path, O_RDONLY);
  }
  closedir(dir);
  return 1;
}

static int last_cpu(const char* stat) {
  const char* p = strrchr(stat, ')');  // the command may hold spaces: count fields after it
  for (int field = 2; p && *p; p++)
    if (*p == ' ' && ++field == 39) return atoi(p + 1);
  return -1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PID OUT.csv\n", argv[0]);
    return 2;
  }
  const int pid = atoi(argv[1]);
  FILE* out = fopen(argv[2], "w");
  if (!out) return 2;
  struct timespec t0, next;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  next = t0;
  for (long k = 0;; k++) {
    if (k % 50 == 0 && !discover(pid)) break;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double t = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9;
    for (int i = 0; i < nthreads; i++) {
      char buf[1024];
      unsigned long long exec_ns, delay_ns, slices;
      if (threads[i].fd_schedstat < 0 || !read_at0(threads[i].fd_schedstat, buf, sizeof buf)) continue;
      if (sscanf(buf, "%llu %llu %llu", &exec_ns, &delay_ns, &slices) != 3) continue;
      const int cpu = read_at0(threads[i].fd_stat, buf, sizeof buf) ? last_cpu(buf) : -1;
      fprintf(out, "%.6f,%d,%s,%llu,%llu,%llu,%d\n", t, threads[i].tid, threads[i].comm, exec_ns, delay_ns,
              slices, cpu);
    }
    next.tv_nsec += 1000000;
    if (next.tv_nsec >= 1000000000) next.tv_nsec -= 1000000000, next.tv_sec++;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  fclose(out);
  return 0;
}
