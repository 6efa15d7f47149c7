import Foundation
import TaskerTestSupport
import Testing

/// Issue 22, break 4: with TASKER_HOME 0755 and tasker.db 0644, or both
/// owned by another user, `show`, `edit` and `done` ran (only `add` and
/// `settings` refused). Every command that reads or writes now checks the
/// home, the database, its -wal/-shm and the attachments folder by the
/// toolkit's owner-only rules first, refuses with 77 and a hint naming the
/// path and the fix, and changes nothing. (The tests run as root: a file
/// of another user's is made with chown to uid 65534.)
@Suite("Permissions: every command refuses files not private to the user")
struct PermissionTests {
  static let reading: [[String]] = [
    ["list"], ["show", "1"], ["page", "list"], ["page", "show", "1"], ["plan-context"], ["attach", "list"],
    ["keys"], ["receipts"], ["approvals", "list"],
  ]
  static let writing: [[String]] = [
    ["add", "another"], ["edit", "1", "--title", "renamed"], ["done", "1"], ["undo", "1"], ["delete", "1"],
    ["settings"], ["page", "new", "p"], ["page", "edit", "1", "--title", "q"], ["encrypt"], ["gate", "show"],
  ]

  /// A device with one task (with a note), one page and one attachment.
  static func device() throws -> TestDevice {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "Call the bank", "--notes", "-"], input: "account 1234").status == 0)
    #expect(try device.tasker(["page", "new", "Journal", "--body", "-"], input: "a day").status == 0)
    let file = device.root.path("a.txt")
    try Data("attached".utf8).write(to: URL(fileURLWithPath: file))
    #expect(try device.tasker(["attach", "add", "--task", "1", file]).status == 0)
    return device
  }

  /// Makes `change`, then runs every command: each must exit 77, print
  /// nothing on standard output, name `path` and say `fix`, and leave the
  /// database as it was.
  static func expectRefused(
    _ device: TestDevice, path: String, fix: String, after change: () throws -> Void
  ) throws {
    let before = try device.sqlite(".dump").stdoutText
    try change()
    for arguments in reading + writing {
      let refused = try device.tasker(arguments)
      #expect(refused.status == 77, "\(arguments): \(refused.status) \(refused.stderr)")
      #expect(refused.stdout.isEmpty, "\(arguments)")
      #expect(refused.stderr.contains("'\(path)'"), "\(arguments): \(refused.stderr)")
      #expect(refused.stderr.contains("hint: ") && refused.stderr.contains(fix), "\(arguments): \(refused.stderr)")
    }
    #expect(try device.sqlite(".dump").stdoutText == before)
  }

  static func chmod(_ path: String, _ mode: Int) throws {
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
  }

  static func chown(_ path: String, to uid: Int) throws {
    try FileManager.default.setAttributes([.ownerAccountID: uid], ofItemAtPath: path)
  }

  @Test func aHomeReadableByOthersIsRefused() throws {
    let device = try Self.device()
    try Self.expectRefused(device, path: device.home.directory, fix: "chmod 700 '\(device.home.directory)'") {
      try Self.chmod(device.home.directory, 0o755)
    }
  }

  @Test func aDatabaseReadableByOthersIsRefused() throws {
    let device = try Self.device()
    try Self.expectRefused(device, path: device.home.databasePath, fix: "chmod 600 '\(device.home.databasePath)'") {
      try Self.chmod(device.home.databasePath, 0o644)
    }
  }

  @Test(arguments: ["-wal", "-shm"])
  func aLooseWriteAheadFileIsRefused(suffix: String) throws {
    let device = try Self.device()
    let path = device.home.databasePath + suffix
    try Self.expectRefused(device, path: path, fix: "chmod 600 '\(path)'") {
      #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
      try Self.chmod(path, 0o644)
    }
  }

  @Test func anAttachmentsFolderReadableByOthersIsRefused() throws {
    let device = try Self.device()
    let folder = device.home.directory + "/attachments"
    try Self.expectRefused(device, path: folder, fix: "chmod 700 '\(folder)'") { try Self.chmod(folder, 0o755) }
  }

  @Test func aDatabaseOwnedByAnotherUserIsRefused() throws {
    let device = try Self.device()
    try Self.expectRefused(device, path: device.home.databasePath, fix: "chown") {
      try Self.chown(device.home.databasePath, to: 65534)
    }
  }

  @Test func aHomeOwnedByAnotherUserIsRefused() throws {
    let device = try Self.device()
    try Self.expectRefused(device, path: device.home.directory, fix: "chown") {
      try Self.chown(device.home.databasePath, to: 65534)
      try Self.chown(device.home.directory, to: 65534)
    }
  }

  /// A home that is a symlink to another user's directory is refused, not followed.
  @Test func aHomeThroughAnotherUsersSymlinkIsRefused() throws {
    let device = try Self.device()
    let link = device.root.path("link")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: device.home.directory)
    #expect(lchown(link, 65534, 65534) == 0)
    var environment = device.environment
    environment["TASKER_HOME"] = link
    let refused = try Binary.tasker.run(["show", "1"], environment: environment)
    #expect(refused.status == 77, "\(refused.stderr)")
    #expect(refused.stderr.contains("/link' is a symbolic link owned by another user"), "\(refused.stderr)")
  }
}
