import CTaskSystem
import Glibc

/// Process-wide protections for a process that holds unlocked keys.
public enum ProcessHardening {
  /// Stops the process from writing core dumps and from being attached to
  /// by other processes of the same user: `prctl(PR_SET_DUMPABLE, 0)` and
  /// `RLIMIT_CORE` of zero.
  ///
  /// - Throws: `SystemError.failed` naming the call that failed.
  public static func disableCoreDumps() throws {
    var limit = rlimit(rlim_cur: 0, rlim_max: 0)
    guard setrlimit(Int32(RLIMIT_CORE.rawValue), &limit) == 0 else {
      throw SystemError.failed(call: "setrlimit(RLIMIT_CORE)", path: "<process>", errno: errno)
    }
    guard task_system_disable_dumpable() == 0 else {
      throw SystemError.failed(call: "prctl(PR_SET_DUMPABLE)", path: "<process>", errno: errno)
    }
  }

  /// Makes every signal that would dump core end the process at once,
  /// printing nothing: SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT,
  /// SIGQUIT, SIGSYS, SIGXCPU and SIGXFSZ. This replaces the Swift runtime's
  /// backtracer (whatever `SWIFT_BACKTRACE` says), which would print
  /// registers and the memory they point to, and then let a process that
  /// was sent such a signal go on. With `disableCoreDumps()` no core file
  /// is written either.
  ///
  /// - Throws: `SystemError.failed` naming the call that failed.
  public static func endOnFatalSignals() throws {
    guard task_system_end_on_fatal_signals() == 0 else {
      throw SystemError.failed(call: "sigaction", path: "<process>", errno: errno)
    }
  }

  /// Whether `signal` is handled by `endOnFatalSignals()`'s handler.
  public static func endsProcess(on signal: Int32) -> Bool { task_system_ends_on_signal(signal) == 1 }

  /// Whether the process may currently dump core.
  public static var isDumpable: Bool { task_system_is_dumpable() == 1 }
}
