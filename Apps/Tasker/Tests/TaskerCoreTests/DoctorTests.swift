import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// `TaskStore.diagnose(home:keys:)`: findings with stable codes, and
/// nothing changed.
@Suite struct DoctorTests {
  /// A home with a sealed note, a plain page body, a plain and a sealed
  /// attachment, and one approval waiting.
  func home(_ directory: TemporaryDirectory) throws -> (TaskerHome, Keyring) {
    let home = TaskerHome(directory: directory.path("home"))
    let keyring = try Keyring.generate()
    let store = try TaskStore(home: home, keys: keyring)
    try store.addTask(TaskDraft(title: "t", notes: "sealed words"))
    try store.setBodyEncryption(false)
    try store.addPage(title: "p", body: "plain body")
    try store.setBodyEncryption(true)
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(Array("aa".utf8)))
    try store.setAttachmentEncryption(true)
    try store.addAttachment(to: .page(1), name: "b", mediaType: "text/plain", read: chunkedReader(Array("bb".utf8)))
    _ = try store.enqueueApproval(
      keyID: GateLedgerTests.key(1), assistant: "bot", tool: .addTask, arguments: "{}", reason: .risky,
      summary: "add")
    return (home, keyring)
  }

  /// Every file under `directory` with its bytes and mode.
  func snapshot(_ directory: String) throws -> [String: [UInt8]] {
    var files = [String: [UInt8]]()
    for name in FileManager.default.subpaths(atPath: directory) ?? [] {
      let path = directory + "/" + name
      let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1
      let content = (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) } ?? []
      files[name] = content + Array(String(mode).utf8)
    }
    return files
  }

  @Test func aHealthyHomeReportsItsStateAndNothingChanges() throws {
    let directory = try TemporaryDirectory()
    let (home, keyring) = try home(directory)
    let before = try snapshot(home.directory)
    // A fresh key source: the protection settings of a keyring live with its store, so the defaults show.
    let report = TaskStore.diagnose(home: home, keys: keyring)
    let after = try snapshot(home.directory)
    // Every file that was there is unchanged, its mode too; a read-only SQLite
    // connection may add an empty log and its index (0600), as any reader does.
    let changed = before.keys.filter { after[$0] != before[$0] }.sorted()
    #expect(changed.isEmpty, "doctor changes nothing: \(changed)")
    let added = Set(after.keys).subtracting(before.keys)
    #expect(added.isSubset(of: ["tasker.db-wal", "tasker.db-shm"]), "\(added)")
    if added.contains("tasker.db-wal") { #expect(after["tasker.db-wal"] == Array("384".utf8), "empty, 0600") }
    if let shm = after["tasker.db-shm"], added.contains("tasker.db-shm") { #expect(shm.suffix(3) == Array("384".utf8)) }
    #expect(report.severity == .warning, "\(report.findings)")
    #expect(report.findings.filter { $0.severity == .error }.isEmpty, "\(report.findings)")
    for code: DiagnosisCode in [
      .filesPrivate, .integrityOK, .foreignKeysOK, .bodyEncryptionOn, .attachmentEncryptionOff, .plainBodiesStored,
      .keysInUse, .approvalsPending, .attachmentsConsistent, .plainAttachmentsStored,
    ] {
      #expect(report.findings(code).count == 1, "\(code)")
    }
    #expect(report.findings(.plainBodiesStored).first?.severity == .warning, "encryption on, a plain body stored")
    #expect(report.pendingApprovals == 1)
    var census = EncryptionCensus()
    census.bodyEncryption = true
    census.attachmentEncryption = false
    census.sealedNotes = 1
    census.plainPageBodies = 1
    census.sealedAttachments = 1
    census.plainAttachments = 1
    #expect(report.encryption == census)
    #expect(report.keys == [KeyUsage(keyID: keyring.primaryID.hex, taskNotes: 1, attachments: 1, approvalArguments: 1)])
    #expect(report.findings(.keysInUse).first?.message.contains(keyring.primaryID.hex) == true)
  }

  @Test func codesAreStableSnakeCase() {
    for code in DiagnosisCode.allCases {
      #expect(code.rawValue.allSatisfy { $0 == "_" || ("a"..."z").contains($0) }, "\(code.rawValue)")
    }
    #expect(Set(DiagnosisCode.allCases.map(\.rawValue)).count == DiagnosisCode.allCases.count)
    #expect(DiagnosisCode.integrityFailed.rawValue == "integrity_failed")
    #expect(DiagnosisCode.attachmentFileOrphan.rawValue == "attachment_file_orphan")
    #expect(DiagnosisSeverity.ok < .info && DiagnosisSeverity.info < .warning && DiagnosisSeverity.warning < .error)
  }

  @Test func aNewHomeIsInfoOnly() throws {
    let directory = try TemporaryDirectory()
    let missing = TaskStore.diagnose(home: TaskerHome(directory: directory.path("none")), keys: try Keyring.generate())
    #expect(missing.findings.map(\.code) == [.homeMissing])
    #expect(missing.severity == .info)
    #expect(!FileManager.default.fileExists(atPath: directory.path("none")))
    let empty = TaskStore.diagnose(home: TaskerHome(directory: directory.path), keys: try Keyring.generate())
    #expect(empty.findings.map(\.code) == [.filesPrivate, .databaseMissing])
    #expect(!FileManager.default.fileExists(atPath: directory.path("tasker.db")))
  }

  @Test func looseFilesAreErrorsAndTheDatabaseIsNotOpened() throws {
    let directory = try TemporaryDirectory()
    let (home, keyring) = try home(directory)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: home.databasePath)
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o604], ofItemAtPath: home.attachmentsDirectory + "/1")
    try FileManager.default.createSymbolicLink(
      atPath: home.attachmentsDirectory + "/9", withDestinationPath: directory.path("elsewhere"))
    let report = TaskStore.diagnose(home: home, keys: keyring)
    #expect(report.severity == .error)
    #expect(report.findings(.databaseFileNotPrivate).map(\.subject) == [home.databasePath])
    #expect(report.findings(.databaseFileNotPrivate).first?.hint?.contains("chmod 600") == true)
    #expect(
      Set(report.findings(.attachmentFileNotPrivate).compactMap(\.subject))
        == [home.attachmentsDirectory + "/1", home.attachmentsDirectory + "/9"])
    #expect(report.findings(.databaseChecksSkipped).count == 1)
    #expect(report.findings(.integrityOK).isEmpty && report.encryption == nil && report.pendingApprovals == nil)
    let mode = try FileManager.default.attributesOfItem(atPath: home.databasePath)[.posixPermissions] as? Int
    #expect(mode == 0o644, "doctor repairs nothing")

    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: home.directory)
    #expect(TaskStore.diagnose(home: home, keys: keyring).findings(.homeNotPrivate).count == 1)
  }

  @Test func orphanFilesMissingFilesAndRefusedRowsAreFound() throws {
    let directory = try TemporaryDirectory()
    let (home, keyring) = try home(directory)
    let store = try TaskStore(home: home, keys: keyring)
    try store.addAttachment(to: .task(1), name: "c", mediaType: "text/plain", read: chunkedReader(Array("cc".utf8)))
    try store.connection.execute("UPDATE attachments SET file = '../tasker.db' WHERE id = 2")
    try FileManager.default.removeItem(atPath: home.attachmentsDirectory + "/3")
    _ = FileManager.default.createFile(
      atPath: home.attachmentsDirectory + "/77", contents: Data("stray".utf8), attributes: [.posixPermissions: 0o600])
    let report = TaskStore.diagnose(home: home, keys: keyring)
    #expect(report.findings(.attachmentRowRefused).map(\.subject) == ["attachment/2"])
    #expect(report.findings(.attachmentFileMissing).map(\.subject) == ["attachment/3"])
    // File 2 has lost its row's name; 77 never had one.
    #expect(
      report.findings(.attachmentFileOrphan).compactMap(\.subject)
        == [home.attachmentsDirectory + "/2", home.attachmentsDirectory + "/77"])
    #expect(report.findings(.attachmentsConsistent).isEmpty)
    #expect(FileManager.default.fileExists(atPath: home.attachmentsDirectory + "/77"), "doctor removes nothing")
  }

  @Test func aCorruptedCopyFailsTheIntegrityCheck() throws {
    let directory = try TemporaryDirectory()
    let home = TaskerHome(directory: directory.path("home"))
    let keyring = try Keyring.generate()
    do {
      let store = try TaskStore(home: home, keys: keyring)
      try store.addTasks((0..<400).map { TaskDraft(title: "task \($0)", notes: String(repeating: "n", count: 900)) })
      try store.connection.truncateLog()
    }
    let copy = TaskerHome(directory: directory.path("copy"))
    try FileManager.default.createDirectory(
      atPath: copy.directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: home.databasePath)))
    let pageSize = 16_384
    #expect(bytes.count > 8 * pageSize)
    // Page 4's b-tree header and cell pointers: garbage.
    for index in (3 * pageSize)..<(3 * pageSize + 64) { bytes[index] = 0xA5 }
    _ = FileManager.default.createFile(
      atPath: copy.databasePath, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    let report = TaskStore.diagnose(home: copy, keys: keyring)
    #expect(report.findings(.integrityFailed).count >= 1, "\(report.findings)")
    #expect(report.findings(.integrityOK).isEmpty)
    #expect(report.severity == .error)
    #expect(TaskStore.diagnose(home: home, keys: keyring).findings(.integrityOK).count == 1, "the original is fine")
  }

  @Test func aNewerSchemaIsReportedNotTouched() throws {
    let directory = try TemporaryDirectory()
    let (home, keyring) = try home(directory)
    try Connection(path: home.databasePath, create: false).execute("PRAGMA user_version = \(Schema.current + 1)")
    let before = try Data(contentsOf: URL(fileURLWithPath: home.databasePath))
    let report = TaskStore.diagnose(home: home, keys: keyring)
    #expect(report.findings(.schemaTooNew).count == 1)
    #expect(try Data(contentsOf: URL(fileURLWithPath: home.databasePath)) == before)
  }
}
