# Sourced by the ftrace scripts (bench/sched_trace.sh, bench/ipi_trace.sh): take tracefs for one
# traced run and give it back as it was. tracefs_open mounts it if needed, refuses when someone
# else's session is on (its events would be cleared), and switches tracing off with an empty trace,
# no events and the given buffer size per CPU; tracefs_close (call it from the script's exit trap)
# switches tracing off, clears the events, restores the buffer size and tracing_on, and unmounts
# what tracefs_open mounted.
T=/sys/kernel/tracing
tracefs_mounted=
tracefs_armed=
tracefs_buffer_kb=
tracefs_was=
tracefs_open() {  # NAME BUFFER_KB
  if [ ! -d "$T/events" ]; then
    mount -t tracefs nodev "$T" || { echo "$1: cannot mount tracefs at $T" >&2; exit 2; }
    tracefs_mounted=1
  fi
  if [ "$(cat "$T/tracing_on")" = 1 ] && [ -n "$(cat "$T/set_event")" ]; then
    echo "$1: ftrace is in use (tracing_on and events set); not touching it" >&2
    exit 2
  fi
  # The size per CPU, or the size it would expand to ("7 (expanded: 1408)").
  tracefs_buffer_kb=$(sed -n 's/.*expanded: \([0-9]*\).*/\1/p; t; s/^\([0-9]*\).*/\1/p' "$T/buffer_size_kb")
  tracefs_was=$(cat "$T/tracing_on")
  tracefs_armed=1
  echo 0 >"$T/tracing_on"
  echo >"$T/trace"
  echo "$2" >"$T/buffer_size_kb"
  echo >"$T/set_event"
}
tracefs_close() {
  if [ -n "$tracefs_armed" ]; then
    echo 0 >"$T/tracing_on" || true
    echo >"$T/set_event" || true
    [ -n "$tracefs_buffer_kb" ] && echo "$tracefs_buffer_kb" >"$T/buffer_size_kb" || true
    [ -n "$tracefs_was" ] && echo "$tracefs_was" >"$T/tracing_on" || true
  fi
  [ -n "$tracefs_mounted" ] && umount "$T" 2>/dev/null || true
}
# The start of a traced run: refuse without root, make the run's directory OUT, no host run yet.
traced_run_begin() {  # NAME
  [ "$(id -u)" = 0 ] || { echo "$1: needs root (ftrace)" >&2; exit 2; }
  OUT=$(mktemp -d)
  host_pid=
}
# The end of a traced run, after tracefs_close: stop the `uringsim host` still running (its pid in
# host_pid, if set), copy the run's directory OUT to KEEP if that is set, and remove it.
traced_run_end() {
  [ -n "${host_pid:-}" ] && kill "$host_pid" 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$OUT"/. "$KEEP"/; fi
  rm -rf "$OUT"
}
