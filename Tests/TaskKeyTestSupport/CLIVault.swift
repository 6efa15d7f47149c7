import Foundation

/// A `taskkey` run that had to succeed for a test's set-up did not.
public struct SetupFailure: Error, CustomStringConvertible {
  /// What was run and what it said.
  public let description: String
}

/// One throwaway vault driven through the real `taskkey` binary: a fresh
/// `TASKKEY_HOME`, initialised with the fast test KDF and unlocked unless
/// asked otherwise, locked again on release. Shared by the vault and the
/// assistant-key command tests.
public final class CLIVault: @unchecked Sendable {
  /// The temporary directory holding the vault and the passphrase file.
  public let home: TemporaryDirectory
  /// A 0600 file holding the passphrase and a newline.
  public let passphraseFile: String

  /// Makes the home, and by default initialises and unlocks the vault.
  ///
  /// - Throws: `SetupFailure` when `init` or `unlock` fails.
  public init(passphrase: String = "correct horse battery", initialise: Bool = true, unlock: Bool = true) throws {
    home = try TemporaryDirectory()
    passphraseFile = home.path("pass")
    try writePrivate(passphraseFile, passphrase + "\n")
    if initialise {
      // init leaves the vault unlocked unless told --locked.
      let locked = unlock ? [] : ["--locked"]
      let made = try run(
        ["init", "--kdf", "fast-test-only", "--passphrase-file", passphraseFile, "--accept-weak-passphrase"] + locked)
      guard made.status == 0 else { throw SetupFailure(description: "taskkey init: \(made.stderr)") }
    } else if unlock {
      let opened = try run(["unlock", "--passphrase-file", passphraseFile])
      guard opened.status == 0 else { throw SetupFailure(description: "taskkey unlock: \(opened.stderr)") }
    }
  }

  deinit {
    // Leave nothing in /dev/shm behind.
    _ = try? run(["lock"])
  }

  /// The vault directory, `TASKKEY_HOME` for every run.
  public var directory: String { home.path("keys") }

  /// Runs `taskkey arguments…` against this vault with `input` on standard input.
  public func run(_ arguments: [String], input: [UInt8] = []) throws -> ProcessResult {
    try TaskKeyBinary.run(arguments, stdin: input, environment: ["TASKKEY_HOME": directory])
  }

  /// Runs with UTF-8 text on standard input.
  public func run(_ arguments: [String], text: String) throws -> ProcessResult {
    try run(arguments, input: Array(text.utf8))
  }
}

/// Creates a file with mode 0600 holding `text`.
///
/// - Throws: `SetupFailure` when the file cannot be created.
public func writePrivate(_ path: String, _ text: String) throws {
  guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
  else { throw SetupFailure(description: "cannot create \(path)") }
}

/// A fresh temporary directory with a note key file in it, made by the real
/// `taskkey keygen`: the set-up of the tests that seal and open with
/// `--key-file`.
///
/// - Returns: the directory and the key file's path (`note.key` in it).
/// - Throws: `SetupFailure` when `keygen` fails.
public func keyFileHome() throws -> (home: TemporaryDirectory, keyPath: String) {
  let home = try TemporaryDirectory()
  let keyPath = home.path("note.key")
  let made = try TaskKeyBinary.run(["keygen", "--out", keyPath])
  guard made.status == 0 else { throw SetupFailure(description: "taskkey keygen: \(made.stderr)") }
  return (home, keyPath)
}
