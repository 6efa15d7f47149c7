import Glibc

/// The signals that ask a server to stop, SIGINT and SIGTERM, handled by
/// the server itself (a `DispatchSource` of each) instead of by their
/// default action, which ends the process at once.
public enum StopSignals {
  /// SIGINT and SIGTERM.
  public static let numbers: [Int32] = [SIGINT, SIGTERM]

  /// Turns off the default action of SIGINT and SIGTERM, so that they reach
  /// the dispatch sources made for them (libdispatch needs this) and do not
  /// end the process. Call it before making those sources; until they are
  /// made, the signals are ignored.
  public static func leaveToSources() {
    for number in numbers { signal(number, SIG_IGN) }
  }
}
