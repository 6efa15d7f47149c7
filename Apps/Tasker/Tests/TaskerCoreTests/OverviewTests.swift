import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// `readingIfPresent(home:keys:)` (an empty list on a new home) and
/// `pendingApprovalCount()` (the notice of `list`).
@Suite struct OverviewTests {
  @Test func aNewHomeHasNoStoreAndNothingIsMade() throws {
    let directory = try TemporaryDirectory()
    let keyring = try Keyring.generate()
    let missing = TaskerHome(directory: directory.path("none"))
    #expect(try TaskStore.readingIfPresent(home: missing, keys: keyring) == nil)
    #expect(!FileManager.default.fileExists(atPath: missing.directory), "no directory is made")
    let empty = TaskerHome(directory: directory.path)
    #expect(try TaskStore.readingIfPresent(home: empty, keys: keyring) == nil)
    #expect(!FileManager.default.fileExists(atPath: empty.databasePath), "no database is made")
  }

  @Test func anExistingDatabaseOpensReadOnly() throws {
    let directory = try TemporaryDirectory()
    let keyring = try Keyring.generate()
    let home = TaskerHome(directory: directory.path)
    try TaskStore(home: home, keys: keyring).addTask(TaskDraft(title: "t"))
    let store = try #require(try TaskStore.readingIfPresent(home: home, keys: keyring))
    #expect(try store.tasks().map(\.title) == ["t"])
    #expect(throws: TaskerError.self) { try store.addTask(TaskDraft(title: "read-only")) }
  }

  @Test func unsafeFilesAreStillRefusedNotTakenForMissing() throws {
    let directory = try TemporaryDirectory()
    let keyring = try Keyring.generate()
    let home = TaskerHome(directory: directory.path("home"))
    try FileManager.default.createDirectory(atPath: home.directory, withIntermediateDirectories: false)
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.directory)
    // A dangling symlink where the database would be.
    try FileManager.default.createSymbolicLink(atPath: home.databasePath, withDestinationPath: directory.path("x"))
    let symlink = #expect(throws: TaskerError.self) { try TaskStore.readingIfPresent(home: home, keys: keyring) }
    guard case .system(.wrongFileType(let path, _)) = symlink else {
      Issue.record("\(String(describing: symlink))")
      return
    }
    #expect(path == home.databasePath)
    try FileManager.default.removeItem(atPath: home.databasePath)
    #expect(try TaskStore.readingIfPresent(home: home, keys: keyring) == nil)
    // A home others can read, even without a database in it.
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: home.directory)
    let loose = #expect(throws: TaskerError.self) { try TaskStore.readingIfPresent(home: home, keys: keyring) }
    guard case .system(.loosePermissions) = loose else {
      Issue.record("\(String(describing: loose))")
      return
    }
  }

  @Test func pendingApprovalsAreCountedAndResolvedOnesAreNot() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    #expect(try store.pendingApprovalCount() == 0)
    var ids = [Int64]()
    for index in 0..<3 {
      ids.append(
        try store.enqueueApproval(
          keyID: GateLedgerTests.key(1), assistant: "bot", tool: .addTask, arguments: "{}", reason: .risky,
          summary: "add \(index)"
        ).id)
    }
    #expect(try store.pendingApprovalCount() == 3)
    #expect(try store.resolveApproval(id: ids[0], approved: true))
    #expect(try store.resolveApproval(id: ids[1], approved: false))
    #expect(try store.pendingApprovalCount() == 1)
  }
}
