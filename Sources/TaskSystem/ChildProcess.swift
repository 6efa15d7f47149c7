import CTaskSystem
import Glibc

/// Running another program to its end with this process's standard
/// streams (an editor on a private file, say), without Foundation's
/// `Process`, which would pull CoreFoundation into a program that uses
/// FoundationEssentials only.
public enum ChildProcess {
  /// How a child ended.
  public enum Ending: Sendable, Equatable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal with this number ended it.
    case signalled(Int32)
  }

  /// Starts `path` with `arguments` (the first is the child's `argv[0]`)
  /// and exactly `environment` (`NAME=value` entries) through
  /// `posix_spawn`, standard input, output and error shared with this
  /// process, and waits for it to end. While it runs, this process ignores
  /// SIGINT and SIGQUIT, as git and `pass` do for an editor: the terminal's
  /// Ctrl-C reaches the child (which starts with the default actions and
  /// no signal blocked) and this process lives on to clean up after it;
  /// its own actions (the fatal-signal handler among them) are restored
  /// afterwards.
  ///
  /// - Returns: how it ended.
  /// - Throws: `SystemError.failed` naming `posix_spawn` with its errno
  ///   (for example ENOENT for a missing program).
  public static func run(_ path: String, arguments: [String], environment: [String]) throws -> Ending {
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var status: Int32 = 0
    let result = task_system_spawn_and_wait(path, argv, envp, &status)
    guard result == 0 else { throw SystemError.failed(call: "posix_spawn", path: path, errno: result) }
    // The <sys/wait.h> macros, which do not import: the low 7 bits are the
    // signal (0 for an exit), the next 8 the exit status.
    let signal = status & 0x7f
    return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
  }
}
