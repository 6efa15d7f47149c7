import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskerGate
import TaskerTestSupport
import XCTest

@testable import TaskerCore

/// An assistant's `delete_task` (always asked about, so run when the user
/// approves it) and the trusted session's allowed one keep the copy the
/// user's own delete keeps (the row with its notes as stored, and its
/// attachments), bound to its receipt, so `tasker undo` puts it back.
final class GateUndoableDeleteTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var store: TaskStore!
  private let content = Array("attached bytes".utf8)

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    try store.addTask(TaskDraft(title: "Call Bob", notes: "canary-notes"))
    try store.addAttachment(to: .task(1), name: "a.txt", mediaType: "text/plain", read: chunkedReader(content))
  }

  private func toolbox(_ trust: TrustLevel) -> GateToolbox { .bot(store, trust) }

  /// Task 1's notes column exactly as stored.
  private func storedNotes() throws -> String? {
    try store.connection.prepare("SELECT notes FROM tasks WHERE id = 1").first { $0.text(0) }
  }

  /// Checks that `receipt` is an undoable delete of task 1, undoes it and
  /// checks the task, its sealed notes and its attachment are back, once.
  private func checkUndo(of receipt: GateReceipt, sealedNotes: String) throws {
    XCTAssertEqual(receipt.target, "task/1")
    XCTAssertEqual(receipt.undo, ReceiptUndo(.restoreTask, 1))
    XCTAssertEqual(receipt.summary, "deleted task 1 'Call Bob'")
    XCTAssertEqual(try store.tasks(.all), [])
    XCTAssertTrue(FileManager.default.fileExists(atPath: store.attachmentsDirectory + "/1"), "kept for the undo")
    let desk = GateDesk(store: store)
    let undone = try desk.undo(receipt.id)
    XCTAssertEqual(undone.summary, "undid r\(receipt.id): restored task 1")
    XCTAssertEqual(try storedNotes(), sealedNotes, "the notes come back byte for byte as stored")
    XCTAssertTrue(SealedValue.isSealed(sealedNotes))
    XCTAssertEqual(try store.task(id: 1).notes, "canary-notes")
    XCTAssertEqual(try store.attachmentContent(1), content)
    XCTAssertThrowsError(try desk.undo(receipt.id)) {
      XCTAssertEqual($0 as? GateError, .alreadyUndone(receipt.id, by: undone.id))
    }
    XCTAssertNil(try store.verifyReceipts().brokenID, "the chain holds the delete and its undo")
  }

  func testAnApprovedDeleteIsUndoneWithItsNotesAndAttachment() throws {
    let sealed = try XCTUnwrap(try storedNotes())
    let queued = try toolbox(.standard).callTool(name: "delete_task", arguments: ["id": 1])
    let approval = try XCTUnwrap(queued.content["approval"]?.integerValue)
    let receipt = try GateDesk(store: store).approve(approval, checkKey: { _ in })
    XCTAssertEqual(receipt.actor, .assistant)
    XCTAssertEqual(receipt.decision, .approved)
    XCTAssertEqual(receipt.approval, approval)
    try checkUndo(of: receipt, sealedNotes: sealed)
  }

  func testATrustedDeleteIsUndoneWithItsNotesAndAttachment() throws {
    let sealed = try XCTUnwrap(try storedNotes())
    let result = try GateToolbox.trusted(store: store, vaultDirectory: nil).callTool(
      name: "delete_task", arguments: ["id": 1])
    XCTAssertNotEqual(result.isError, true)
    XCTAssertEqual(result.content["receipt"], "r1")
    let receipt = try XCTUnwrap(try store.receipt(id: 1))
    XCTAssertEqual(receipt.actor, .trusted)
    XCTAssertEqual(receipt.decision, .allow)
    try checkUndo(of: receipt, sealedNotes: sealed)
  }
}

extension GateToolbox {
  /// The gate of assistant `bot` (key `tkid_00000000000000aa`, grant
  /// `tasks:write`) at `trust`, with no vault to check.
  static func bot(_ store: TaskStore, _ trust: TrustLevel) -> GateToolbox {
    GateToolbox(
      store: store,
      identity: GateIdentity(
        keyID: AssistantKeyID("tkid_00000000000000aa"), name: "bot", trust: trust, grants: [.tasksWrite]),
      vaultDirectory: nil)
  }
}
