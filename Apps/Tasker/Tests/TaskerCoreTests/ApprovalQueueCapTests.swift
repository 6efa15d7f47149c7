import AssistantKeys
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// The per-key caps on waiting approvals are the ledger's own: the store
/// refuses to queue past either, whoever calls it, and writes nothing then.
@Suite("The approval queue's caps, enforced by enqueueApproval itself")
struct ApprovalQueueCapTests {
  let directory: TemporaryDirectory
  let store: TaskStore

  init() throws {
    directory = try TemporaryDirectory()
    (_, store) = try directory.newStore()
  }

  func enqueue(_ key: String, _ arguments: String) throws {
    _ = try store.enqueueApproval(
      keyID: try #require(AssistantKeyID(key)), assistant: "bot", tool: .addTask, arguments: arguments,
      reason: .risky, summary: "add task")
  }

  func count() throws -> Int64 {
    try store.connection.prepare("SELECT count(*) FROM gate_approvals").first { $0.integer(0) } ?? -1
  }

  @Test func theCountCapRefusesTheNextCallAndWritesNothing() throws {
    for index in 0..<TaskStore.pendingApprovalCap { try enqueue("tkid_00000000000000aa", "{\"n\":\(index)}") }
    let full = TaskerError.approvalQueueFull(cap: "pending-approvals", limit: TaskStore.pendingApprovalCap)
    #expect(throws: full) { try enqueue("tkid_00000000000000aa", "{}") }
    #expect(try count() == Int64(TaskStore.pendingApprovalCap))
    try enqueue("tkid_00000000000000bb", "{}")  // another key has a queue of its own
    _ = try store.resolveApproval(id: 1, approved: false)
    try enqueue("tkid_00000000000000aa", "{}")  // a decided call frees its place
  }

  @Test func theByteCapCountsArgumentsAsStoredAndWritesNothingPastIt() throws {
    let big = "{\"notes\":\"" + String(repeating: "n", count: 400 * 1024) + "\"}"
    let full = TaskerError.approvalQueueFull(cap: "pending-argument-bytes", limit: TaskStore.pendingArgumentBytesCap)
    // Four fit in 2 MiB as plain text, three as stored (sealed, base64).
    for _ in 0..<3 { try enqueue("tkid_00000000000000aa", big) }
    #expect(throws: full) { try enqueue("tkid_00000000000000aa", big) }
    #expect(try count() == 3, "the refused row was taken back")
    let key = try #require(AssistantKeyID("tkid_00000000000000aa"))
    #expect(try store.pendingApprovalLoad(keyID: key).bytes <= TaskStore.pendingArgumentBytesCap)
    try enqueue("tkid_00000000000000aa", "{}")  // a small one still fits
  }
}
