import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Schema version 11 (TaskStore+SyncStateOrder.swift): a version 10
/// database keeps every kept sync state, and the rules of the table
/// (one state per kind and uid, one per local row, the kinds and the uid
/// form of the format) hold as before.
@Suite struct SyncStateOrderSchemaTests {
  let first = "00112233445566778899aabbccddeeff"
  let second = "ffeeddccbbaa99887766554433221100"

  func versionTen(_ path: String) throws {
    let connection = try Connection(path: path, create: true)
    for step in Schema.migrations.prefix(10) { try connection.execute(step) }
    try connection.execute(
      """
      PRAGMA user_version = 10;
      INSERT INTO sync_records (kind, uid, local_id, state) VALUES ('task', '\(first)', 1, '{"a":1}');
      INSERT INTO sync_records (kind, uid, local_id, state) VALUES ('page', '\(second)', NULL, '{"b":2}');
      """)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
  }

  @Test func versionTenMigratesKeepingEveryState() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    try versionTen(path)
    let store = try TaskStore(databasePath: path, keys: try Keyring.generate())
    let connection = store.connection
    #expect(try connection.prepare("PRAGMA user_version").first { $0.integer(0) } == Int64(Schema.current))
    let states = try store.withSyncTransaction { try $0.everyState() }
    #expect(states.map(\.kind) == ["page", "task"])
    #expect(states.map(\.uid) == [second, first])
    #expect(states.map(\.localID) == [nil, 1])
    #expect(states.map { String(decoding: $0.state, as: UTF8.self) } == [#"{"b":2}"#, #"{"a":1}"#])
    // The table is a rowid table now: new states are appended.
    #expect(
      try connection.prepare("SELECT sql FROM sqlite_schema WHERE name = 'sync_records'").first { $0.text(0) }?
        .contains("WITHOUT ROWID") == false)
  }

  @Test func theTableKeepsItsRules() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    try versionTen(path)
    let store = try TaskStore(databasePath: path, keys: try Keyring.generate())
    // An upsert on (kind, uid) replaces the state in place.
    try store.withSyncTransaction { try $0.putState(kind: "task", uid: first, localID: 1, state: Array("{}".utf8)) }
    #expect(try store.withSyncTransaction { try $0.state(kind: "task", uid: first)?.state } == Array("{}".utf8))
    #expect(try store.withSyncTransaction { try $0.everyState().count } == 2)
    let refused = [
      // A second state for one kind and uid.
      "INSERT INTO sync_records (kind, uid, local_id, state) VALUES ('task', '\(first)', 2, '{}')",
      // A second state for one local row.
      "INSERT INTO sync_records (kind, uid, local_id, state) VALUES ('task', '\(second)', 1, '{}')",
      // A kind the format does not have, a uid of another form.
      "INSERT INTO sync_records (kind, uid, local_id, state) VALUES ('note', '\(second)', NULL, '{}')",
      "INSERT INTO sync_records (kind, uid, local_id, state) VALUES ('task', '\(second.uppercased())', NULL, '{}')",
    ]
    for statement in refused {
      #expect(throws: TaskerError.self, "\(statement)") { try store.connection.execute(statement) }
    }
  }
}
