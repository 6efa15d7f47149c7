import Foundation
import TaskCrypto
import TaskVault
import TaskerCore

/// A test set-up step failed.
public struct SetupFailure: Error, CustomStringConvertible {
  /// What failed.
  public let description: String

  /// A failure saying `description`.
  public init(_ description: String) {
    self.description = description
  }
}

/// A fresh directory under the system temporary directory, mode 0700,
/// removed with everything in it when released.
public final class TemporaryDirectory: @unchecked Sendable {
  /// The directory.
  public let path: String

  /// Creates the directory.
  public init() throws {
    var template = Array((NSTemporaryDirectory() + "/tasker-test-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw SetupFailure("mkdtemp failed")
    }
    path = String(cString: made)
  }

  /// The path of `name` inside the directory.
  public func path(_ name: String) -> String { path + "/" + name }

  deinit {
    try? FileManager.default.removeItem(atPath: path)
  }
}

/// One device for a test: a Tasker home and a real TaskKey vault made with
/// the fast test KDF through TaskKey's library, unlocked unless asked
/// otherwise, locked again on release.
public final class TestDevice: @unchecked Sendable {
  /// Holds the home, the vault and the passphrase file.
  public let root: TemporaryDirectory
  /// The vault passphrase, also written to `passphraseFile`.
  public let passphrase: String

  /// Makes the directories and, by default, a vault that is unlocked.
  ///
  /// - Throws: `SetupFailure`, vault errors.
  public init(passphrase: String = "correct horse battery", vault: Bool = true, unlock: Bool = true) throws {
    root = try TemporaryDirectory()
    self.passphrase = passphrase
    guard
      FileManager.default.createFile(
        atPath: root.path("pass"), contents: Data((passphrase + "\n").utf8), attributes: [.posixPermissions: 0o600])
    else { throw SetupFailure("cannot write the passphrase file") }
    if vault {
      let made = try Vault.create(at: vaultDirectory, passphrase: try secret(), preset: .fastTestOnly)
      if unlock { try made.unlock(passphrase: try secret()) }
    }
  }

  deinit {
    // Leave no unlock session behind.
    try? Vault(at: vaultDirectory).lock()
  }

  /// The passphrase in locked memory.
  public func secret() throws -> SecureBytes {
    try Array(passphrase.utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
  }

  /// A 0600 file holding the passphrase and a newline.
  public var passphraseFile: String { root.path("pass") }
  /// `TASKKEY_HOME`.
  public var vaultDirectory: String { root.path("keys") }
  /// `TASKER_HOME`.
  public var home: TaskerHome { TaskerHome(directory: root.path("tasker")) }
  /// The environment the binaries run with.
  public var environment: [String: String] {
    ["TASKER_HOME": home.directory, "TASKKEY_HOME": vaultDirectory]
  }

  /// The vault, opened through the library.
  public func vault() throws -> Vault { try Vault(at: vaultDirectory) }

  /// A store on this device's home, keyed by its vault.
  public func store(create: Bool = true) throws -> TaskStore {
    try TaskStore(home: home, keys: VaultKeySource(directory: vaultDirectory), create: create)
  }

  /// Runs the built `tasker` with this device's environment.
  public func tasker(_ arguments: [String], input: String = "") throws -> ProcessResult {
    try Binary.tasker.run(arguments, stdin: Array(input.utf8), environment: environment)
  }

  /// Runs the built `taskkey` with this device's environment.
  public func taskkey(_ arguments: [String], input: String = "") throws -> ProcessResult {
    try Binary.taskkey.run(arguments, stdin: Array(input.utf8), environment: environment)
  }

  /// Runs `sqlite3 -batch DATABASE SQL`, the real command-line shell.
  public func sqlite(_ sql: String) throws -> ProcessResult {
    try Binary(path: Binary.which("sqlite3")).run(["-batch", home.databasePath, sql])
  }
}

extension TestDevice {
  /// Creates the database with encryption off (through `tasker`) and
  /// inserts `count` tasks with distinct plain notes of about `noteBytes`
  /// bytes, in one statement through the `sqlite3` shell, as an older
  /// Tasker would have left them.
  public func fillPlain(count: Int, noteBytes: Int = 48) throws {
    let made = try tasker(["settings", "set", "encryption", "off"])
    guard made.status == 0 else { throw SetupFailure("tasker settings: \(made.stderr)") }
    let padding = max(0, noteBytes - 40) / 2
    let filled = try sqlite(
      """
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
      INSERT INTO tasks (title, notes, created_at)
      SELECT 'task ' || i, 'note ' || i || ' ' || hex(randomblob(16)) || hex(zeroblob(\(padding))), 0 FROM n;
      """)
    guard filled.status == 0 else { throw SetupFailure("sqlite3: \(filled.stderr)") }
  }

  /// Writes `notes` back into the tasks they belong to, in one transaction
  /// through the `sqlite3` shell (a test's way to start a run again).
  public func restoreNotes(_ notes: [Int64: String]) throws {
    var script = "BEGIN;\n"
    for (id, text) in notes {
      script += "UPDATE tasks SET notes = '\(text.replacingOccurrences(of: "'", with: "''"))' WHERE id = \(id);\n"
    }
    script += "COMMIT;\n"
    let result = try Binary(path: Binary.which("sqlite3")).run(
      ["-batch", home.databasePath], stdin: Array(script.utf8))
    guard result.status == 0 else { throw SetupFailure("sqlite3: \(result.stderr)") }
  }

  /// Every task's stored notes by id, read with the `sqlite3` shell.
  public func storedNotes() throws -> [Int64: String] {
    let result = try Binary(path: Binary.which("sqlite3")).run(
      ["-json", home.databasePath, "SELECT id, notes FROM tasks ORDER BY id"])
    guard result.status == 0 else { throw SetupFailure("sqlite3: \(result.stderr)") }
    guard !result.stdout.isEmpty else { return [:] }
    let rows = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]] ?? []
    var notes = [Int64: String]()
    for row in rows {
      guard let id = row["id"] as? Int, let text = row["notes"] as? String else { throw SetupFailure("bad row \(row)") }
      notes[Int64(id)] = text
    }
    return notes
  }
}
