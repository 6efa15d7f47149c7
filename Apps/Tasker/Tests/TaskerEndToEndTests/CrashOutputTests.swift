import Foundation
import TaskerTestSupport
import Testing

/// Issue 22, break 5: tasker installed no fatal-signal handling, so SIGSEGV
/// to a running command made the Swift backtracer print registers and the
/// memory they point to (decrypted plaintext among it) and let the process
/// go on, and a core file held the note read from standard input. `tasker`
/// now hardens its process exactly as `taskkey` does; the same test runs
/// against both binaries, the debug builds beside the tests and the
/// shipped builds where they were made (`make app-release`, `make release`).
@Suite("Crash output: tasker and taskkey print nothing on a fatal signal")
struct CrashOutputTests {
  static let plaintext = Array("NOTE-PLAINTEXT-5d1e2b-never-printed".utf8)
  /// What the Swift runtime of a static (shipped) build prints when it starts
  /// with `SWIFT_BACKTRACE=enable=yes` and finds no `swift-backtrace` beside it.
  static let noBacktracerNotice = "swift runtime: unable to locate swift-backtrace; disabling backtracing.\n"

  /// Every binary under test, with the arguments of a command that reads
  /// a note from standard input and holds it while it waits for more.
  static func readers(_ device: TestDevice) -> [(Binary, [String])] {
    let binaries = [Binary.tasker, Binary.taskkey] + Binary.shipped
    return binaries.map { binary in
      binary.path.hasSuffix("/taskkey")
        ? (binary, ["seal", "--key-file", device.root.path("k")])
        : (binary, ["add", "Signal test", "--notes", "-"])
    }
  }

  static func device() throws -> TestDevice {
    let device = try TestDevice()
    let made = try Binary.taskkey.run(["keygen", "--out", device.root.path("k")])
    guard made.status == 0 else { throw SetupFailure("keygen: \(made.stderr)") }
    return device
  }

  static func running(_ binary: Binary, _ arguments: [String], _ device: TestDevice, _ extra: [String: String])
    throws -> RunningProcess
  {
    // Started with core files allowed (this machine's default limit may be
    // 0 already): the binary itself must bring the limit to 0.
    let allowCores = "ulimit -c unlimited 2>/dev/null || ulimit -c 4096 2>/dev/null; exec \"$0\" \"$@\""
    let process = try Binary(path: "/bin/sh").start(
      ["-c", allowCores, binary.path] + arguments, environment: device.environment.merging(extra) { $1 })
    try process.write(plaintext)
    process.waitUntilBlockedReading()
    return process
  }

  @Test(arguments: [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE])
  func fatalSignalEndsTheProcessAndPrintsNothing(signal: Int32) throws {
    let device = try Self.device()
    for (binary, arguments) in Self.readers(device) {
      for extra in [[:], ["SWIFT_BACKTRACE": "enable=yes,interactive=no,sanitize=no"]] {
        let process = try Self.running(binary, arguments, device, extra)
        process.send(signal)
        let ending = try process.finish()
        let what = "\(binary.path) signal \(signal) \(extra)"
        #expect(process.signalled, "\(what): exit \(ending.status)")
        #expect(ending.status == signal, "\(what)")
        // A static build asked for the backtracer by SWIFT_BACKTRACE says at
        // start-up, before main, that it has none (nothing of memory).
        let printed = ending.stderr.replacingOccurrences(of: Self.noBacktracerNotice, with: "")
        #expect(printed.isEmpty, "\(what): \(ending.stderr.prefix(300))")
        #expect(ending.stdout.isEmpty, "\(what)")
      }
    }
  }

  /// RLIMIT_CORE is 0 (soft and hard) in every running process, read from
  /// /proc/PID/limits, and the process is not dumpable: run as another
  /// user (65534, so that the kernel's rule shows), a process that called
  /// `PR_SET_DUMPABLE 0` has its /proc/PID files owned by root, so no core
  /// file can hold the note and no process of that user can attach or read
  /// its memory. (Under `swift test` the hard core limit may be 0 already;
  /// the dumpable check fails on a binary without the hardening wherever.)
  @Test func noCoreFileAndNotDumpableInEitherBinary() throws {
    let device = try Self.device()
    let nobody = try TemporaryDirectory()
    let key = nobody.path("k")
    try FileManager.default.copyItem(atPath: device.root.path("k"), toPath: key)
    #expect(chown(nobody.path, 65534, 65534) == 0 && chown(key, 65534, 65534) == 0)
    let allowCores = "ulimit -c unlimited 2>/dev/null || ulimit -c 4096 2>/dev/null; exec \"$0\" \"$@\""
    for (binary, arguments) in Self.readers(device) {
      let asNobody = arguments.map { $0 == device.root.path("k") ? key : $0 }
      let process = try Binary(path: "/usr/bin/setpriv").start(
        ["--reuid", "65534", "--regid", "65534", "--clear-groups", "/bin/sh", "-c", allowCores, binary.path]
          + asNobody, environment: ["HOME": nobody.path])
      try process.write(Self.plaintext)
      process.waitUntilBlockedReading()
      let limits = try String(contentsOfFile: "/proc/\(process.pid)/limits", encoding: .utf8)
      let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
      let fields = core.map { $0.split(separator: " ", omittingEmptySubsequences: true) } ?? []
      #expect(fields.count >= 6 && fields[4] == "0" && fields[5] == "0", "\(binary.path): \(core ?? "no line")")
      let owner = try FileManager.default.attributesOfItem(atPath: "/proc/\(process.pid)/environ")[.ownerAccountID]
      #expect(
        (owner as? NSNumber)?.intValue == 0, "\(binary.path) is dumpable: /proc/PID/environ owned by \(owner ?? "?")")
      process.kill()
      let ending = try process.finish()
      #expect(process.signalled && ending.status == SIGKILL, "\(binary.path) ended before the check: \(ending.stderr)")
    }
  }
}
