import Glibc

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`):
/// unlike wall time, it does not grow while other processes hold the CPU,
/// so a measurement on a busy machine gives the same answer as on an idle
/// one.
public enum CPUClock {
  /// The calling thread's CPU time so far, in nanoseconds.
  public static func threadNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }
}
