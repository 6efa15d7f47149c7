import Foundation
import TaskKeyTestSupport
import Testing

/// The passphrase prompt, driven through a real pseudo-terminal by
/// scripts/pty-drive.py: echo off, asked twice on init, a mismatch and
/// Ctrl-D refused with nothing written, prompts on the terminal only.
@Suite("Passphrase prompt on a terminal")
struct PassphrasePromptTests {
  typealias Outcome = TerminalDriver.Outcome

  func drive(_ arguments: [String], home: TemporaryDirectory, steps: [(expect: String, send: String)]) throws
    -> Outcome
  {
    try TerminalDriver.drive(arguments, home: home, steps: steps)
  }

  func initialise(_ home: TemporaryDirectory, _ first: String, _ second: String) throws -> Outcome {
    try drive(
      ["init", "--kdf", "fast-test-only"], home: home,
      steps: [("New vault passphrase: ", first), ("Repeat the passphrase: ", second)])
  }

  @Test func initAsksTwiceWithEchoOffAndUnlockAsksOnce() throws {
    let home = try TemporaryDirectory()
    let made = try initialise(home, "purple tiger lamp\n", "purple tiger lamp\n")
    #expect(made.status == 0, "\(made.stderr)")
    #expect(made.terminal.contains("New vault passphrase: "))
    #expect(made.terminal.contains("Repeat the passphrase: "))
    #expect(!made.terminal.contains("purple"), "the passphrase was echoed")
    #expect(!made.stdout.contains("passphrase:"), "a prompt went to standard output")
    #expect(made.stdout.contains("Created the vault"))
    let unlocked = try drive(["unlock"], home: home, steps: [("Vault passphrase: ", "purple tiger lamp\n")])
    #expect(unlocked.status == 0, "\(unlocked.stderr)")
    #expect(!unlocked.terminal.contains("purple"))
    #expect(
      unlocked.stderr.contains("Deriving the vault key with Argon2id") == false, "stderr is a file, not a terminal")
    _ = try TaskKeyBinary.run(["lock"], environment: ["TASKKEY_HOME": home.path("keys")])
  }

  @Test func aMismatchedConfirmationWritesNothing() throws {
    let home = try TemporaryDirectory()
    let outcome = try initialise(home, "purple tiger lamp\n", "purple tiger lump\n")
    #expect(outcome.status == 41)
    #expect(outcome.stderr.contains("the two passphrases differ"))
    #expect(!FileManager.default.fileExists(atPath: home.path("keys/vault.tkv")))
  }

  @Test func ctrlDAtThePromptIsRefusedAndWritesNothing() throws {
    let home = try TemporaryDirectory()
    let outcome = try drive(
      ["init", "--kdf", "fast-test-only"], home: home, steps: [("New vault passphrase: ", "\u{04}")])
    #expect(outcome.status == 41)
    #expect(outcome.stderr.hasPrefix("taskkey: error: "))
    #expect(!FileManager.default.fileExists(atPath: home.path("keys/vault.tkv")))
  }

  @Test func aWrongPassphraseAtThePromptExits13() throws {
    let home = try TemporaryDirectory()
    #expect(try initialise(home, "purple tiger lamp\n", "purple tiger lamp\n").status == 0)
    let outcome = try drive(["unlock"], home: home, steps: [("Vault passphrase: ", "orange tiger lamp\n")])
    #expect(outcome.status == 13)
    #expect(!outcome.terminal.contains("orange"))
  }

  @Test func withoutATerminalThePromptExits40NamingTheAlternatives() throws {
    let home = try TemporaryDirectory()
    // setsid: no controlling terminal even when the tests run in one.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
    process.arguments = ["--wait", TaskKeyBinary.url.path, "init"]
    process.environment = ["TASKKEY_HOME": home.path("keys"), "PATH": "/usr/bin:/bin"]
    let error = Pipe()
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 40)
    #expect(message.contains("there is no terminal to ask for it"))
    #expect(message.contains("--passphrase-file"))
  }
}
