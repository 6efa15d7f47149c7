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
    let process = try binary.start(arguments, environment: device.environment.merging(extra) { $1 })
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
        #expect(ending.stderr.isEmpty, "\(what): \(ending.stderr.prefix(300))")
        #expect(ending.stdout.isEmpty, "\(what)")
      }
    }
  }

  /// RLIMIT_CORE is 0 (soft and hard) in every running process, read from
  /// /proc/PID/limits, so no core file can hold the note.
  @Test func noCoreFileLimitInEitherBinary() throws {
    let device = try Self.device()
    for (binary, arguments) in Self.readers(device) {
      let process = try Self.running(binary, arguments, device, [:])
      let limits = try String(contentsOfFile: "/proc/\(process.pid)/limits", encoding: .utf8)
      let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
      let fields = core.map { $0.split(separator: " ", omittingEmptySubsequences: true) } ?? []
      #expect(fields.count >= 6 && fields[4] == "0" && fields[5] == "0", "\(binary.path): \(core ?? "no line")")
      process.kill()
      _ = try process.finish()
    }
  }
}
