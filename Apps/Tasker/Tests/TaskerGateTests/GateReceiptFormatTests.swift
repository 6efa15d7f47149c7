import AssistantKeys
import CommandKit
import Foundation
import TaskerCore
import TaskerGate
import XCTest

final class GateReceiptFormatTests: XCTestCase {
  private static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/receipt-v1.json")

  func testTheVectors() throws {
    let file = try XCTUnwrap(JSONValue.parse(Array(try Data(contentsOf: Self.vectors))))
    guard case .array(let tests)? = file["tests"] else { return XCTFail("no tests") }
    XCTAssertEqual(tests.count, 100)
    XCTAssertEqual(tests.compactMap { $0["id"]?.integerValue }, Array(1...100))
    var outcomes: Set<String> = []
    for test in tests {
      let expected = test["result"]?.stringValue ?? ""
      outcomes.insert(expected)
      let outcome: String
      do {
        if let text = test["text"]?.stringValue {
          XCTAssertNil(test["receipt"], "a case reads an object or a text")
          let receipt = try GateReceiptFormat.parse(text: Array(text.utf8))
          XCTAssertEqual(GateReceiptFormat.json(receipt).text, text, "a valid text re-encodes to itself")
        } else {
          let receipt = try GateReceiptFormat.parse(test["receipt"] ?? .null)
          XCTAssertEqual(GateReceiptFormat.json(receipt), test["receipt"], "a valid receipt re-encodes to itself")
        }
        outcome = "success"
      } catch GateError.receiptUnsupportedVersion {
        outcome = "unsupported_version"
      } catch GateError.receiptMalformed {
        outcome = "receipt_malformed"
      }
      XCTAssertEqual(outcome, expected, test["comment"]?.stringValue ?? "")
    }
    XCTAssertEqual(outcomes, ["success", "receipt_malformed", "unsupported_version"])
  }

  func testWhatTheGateWritesReadsBack() throws {
    var receipt = GateReceipt(
      actor: .assistant, keyID: AssistantKeyID("tkid_00000000000000aa"), assistant: "bot", tool: .completeTask,
      decision: .allow, target: "task/2", summary: "completed task 2 'x'", undo: ReceiptUndo(.reopenTask, 2))
    receipt.id = 5
    receipt.at = 1_800_000_000
    XCTAssertEqual(try GateReceiptFormat.parse(GateReceiptFormat.json(receipt)), receipt)
  }
}
