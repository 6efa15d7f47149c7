import Foundation
import TaskKeyTestSupport
import Testing

/// Issue 11, case 8: a fatal signal sent to a running `seal` used to make
/// the Swift backtracer print registers and the memory they point to (the
/// note's plaintext among it), after which the process went on and exited 0.
@Suite("Crash output")
struct CrashOutputTests {
  static let plaintext = Array("NOTE-PLAINTEXT-7f3a9c-never-printed".utf8)

  func runningSeal(_ environment: [String: String] = [:]) throws -> (RunningTaskKey, TemporaryDirectory) {
    let home = try TemporaryDirectory()
    let made = try TaskKeyBinary.run(["keygen", "--out", home.path("k")])
    #expect(made.status == 0)
    let seal = try RunningTaskKey(["seal", "--key-file", home.path("k")], environment: environment)
    try seal.write(Self.plaintext)
    seal.waitUntilBlockedReading()
    return (seal, home)
  }

  @Test(arguments: [SIGSEGV, SIGABRT, SIGQUIT, SIGBUS, SIGILL, SIGFPE, SIGTRAP])
  func fatalSignalEndsTheProcessAndPrintsNothing(signal: Int32) throws {
    for environment in [[:], ["SWIFT_BACKTRACE": "enable=yes,interactive=no,sanitize=no"]] {
      let (seal, _) = try runningSeal(environment)
      seal.send(signal)
      let ending = seal.wait()
      #expect(ending.signalled, "signal \(signal) with \(environment): exit \(ending.status)")
      #expect(ending.status == signal)
      #expect(ending.stderr.isEmpty, "\(String(decoding: ending.stderr, as: UTF8.self).prefix(300))")
      #expect(ending.stdout.isEmpty)
    }
  }

  /// `seal --key-file` never touches the vault, and used to be dumpable with
  /// the system's core limit. Every taskkey process now has a core limit of
  /// zero and is not dumpable, from its first line on.
  @Test func sealWithAKeyFileWritesNoCore() throws {
    let (seal, _) = try runningSeal()
    let limits = try String(contentsOfFile: "/proc/\(seal.pid)/limits", encoding: .utf8)
    let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
    let fields = core.map { $0.split(separator: " ", omittingEmptySubsequences: true) } ?? []
    #expect(fields.count >= 6 && fields[4] == "0" && fields[5] == "0", "\(core ?? "no line")")
    try seal.closeInput()
    let ending = seal.wait()
    #expect(ending.status == 0)
    #expect(!contains(ending.stdout, Self.plaintext))
  }
}
