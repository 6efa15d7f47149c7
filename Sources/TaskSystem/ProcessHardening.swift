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

  /// Whether the process may currently dump core.
  public static var isDumpable: Bool { task_system_is_dumpable() == 1 }
}
