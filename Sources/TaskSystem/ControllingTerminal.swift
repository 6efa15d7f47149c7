import Glibc

/// The process's controlling terminal (`/dev/tty`), for prompts: they go
/// to the terminal, never to standard output, and secrets are read with
/// echo off.
public final class ControllingTerminal {
  /// The terminal, open for reading and writing.
  public let descriptor: FileDescriptor

  /// Opens `/dev/tty`, or returns nil when the process has no terminal.
  public init?() {
    let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    descriptor = FileDescriptor(fd, name: "/dev/tty")
  }

  deinit { Glibc.close(descriptor.rawValue) }

  /// Runs `body` with the terminal's echo off; see
  /// `FileDescriptor.withEchoOff(_:)`.
  ///
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws; the terminal is restored either way.
  public func withEchoOff<Result>(_ body: () throws -> Result) rethrows -> Result {
    try descriptor.withEchoOff(body)
  }
}

extension FileDescriptor {
  /// Runs `body` with echo off on this descriptor's terminal (newlines
  /// still echoed); when it is not a terminal, just runs `body`. Pending
  /// input typed before the switch is discarded (TCSAFLUSH), so switch
  /// before showing a prompt. If SIGINT, SIGTERM, SIGHUP or SIGQUIT
  /// arrives meanwhile, the terminal is restored before the process dies
  /// of the signal, so it is never left silent.
  ///
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws; the terminal is restored either way.
  public func withEchoOff<Result>(_ body: () throws -> Result) rethrows -> Result {
    let fd = rawValue
    var saved = termios()
    guard tcgetattr(fd, &saved) == 0 else { return try body() }
    let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    savedTerminal = saved
    savedTerminalFD = fd
    let previous = signals.map { signal($0, restoreTerminalAndDie) }
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    quiet.c_lflag |= tcflag_t(ECHONL)
    _ = tcsetattr(fd, TCSAFLUSH, &quiet)
    defer {
      _ = tcsetattr(fd, TCSAFLUSH, &saved)
      for (number, handler) in zip(signals, previous) { signal(number, handler) }
      savedTerminalFD = -1
    }
    return try body()
  }
}

/// The terminal state to restore if a signal arrives while echo is off.
nonisolated(unsafe) private var savedTerminal = termios()
nonisolated(unsafe) private var savedTerminalFD: Int32 = -1

/// Restores the terminal, then dies of the same signal.
private func restoreTerminalAndDie(_ number: Int32) {
  if savedTerminalFD >= 0 { _ = tcsetattr(savedTerminalFD, TCSAFLUSH, &savedTerminal) }
  signal(number, SIG_DFL)
  raise(number)
}
