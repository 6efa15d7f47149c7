import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerGate
import XCTest

/// Vectors/receipt-chain-v1.json (docs/formats/receipt.md, *The chain* and
/// *The head*): generated here, checked in, and read back through the
/// verifier; a case that drifts from the generator fails.
final class ReceiptChainVectorTests: XCTestCase {
  private static let file = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/receipt-chain-v1.json")

  /// The head key of every case: bytes 0x00…0x1f.
  static let keyBytes = (0..<32).map { UInt8($0) }
  static func key(_ bytes: [UInt8] = keyBytes) throws -> SymmetricKey {
    try bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
  }

  static func receipt(_ id: Int64, summary: String = "deleted task", target: Int64? = nil) -> GateReceipt {
    let task = target ?? id
    var receipt = GateReceipt(
      actor: .user, keyID: nil, assistant: nil, tool: .deleteTask, decision: .changed, target: "task/\(task)",
      summary: summary, undo: ReceiptUndo(.restoreTask, task))
    receipt.id = id
    receipt.at = 1_796_000_000 + id
    return receipt
  }

  /// Receipts with their honest chains.
  static func chained(_ receipts: [GateReceipt]) -> [(GateReceipt, [UInt8]?)] {
    var previous = ReceiptChain.genesis
    return receipts.map { receipt in
      previous = ReceiptChain.link(previous: previous, receipt)
      return (receipt, previous)
    }
  }

  static func head(_ rows: [(GateReceipt, [UInt8]?)], at id: Int64, key: SymmetricKey) -> String {
    let chain = rows.first { $0.0.id == id }?.1 ?? ReceiptChain.genesis
    return String(decoding: ReceiptHead(id: id, chain: chain, key: key).encoded, as: UTF8.self)
  }

  /// Every case, from the generator.
  static func generated() throws -> JSONValue {
    let key = try key()
    let other = try Self.key((0..<32).map { UInt8(255 - $0) })
    let three = chained([receipt(1), receipt(2, summary: "quote \" tab \t bell \u{7} é /"), receipt(3)])
    var cases: [JSONValue] = []
    func add(
      _ comment: String, _ rows: [(GateReceipt, [UInt8]?)], head: String?, _ result: ReceiptChainOutcome,
      broken: Int64? = nil, unanchored: Int = 0, raw: [JSONValue]? = nil
    ) {
      let receipts =
        raw
        ?? rows.map { row in
          JSONValue.object([
            "receipt": GateReceiptFormat.json(row.0), "chain": row.1.map { .string($0.lowercaseHex) } ?? .null,
          ])
        }
      cases.append([
        "id": .int(cases.count + 1), "comment": .string(comment), "receipts": .array(receipts),
        "head": head.map { .string($0) } ?? .null, "result": .string(result.rawValue),
        "broken": broken.map { .string("r\($0)") } ?? .null, "unanchored": .int(unanchored),
      ])
    }
    add("no receipts, no head", [], head: nil, .intact)
    add("one receipt, the head at it", Array(three.prefix(1)), head: head(three, at: 1, key: key), .intact)
    add(
      "three receipts (the second's summary escaped), the head at r2: one not yet anchored", three,
      head: head(three, at: 2, key: key), .intact, unanchored: 1)
    add("three receipts, no head: all three unanchored", three, head: nil, .intact, unanchored: 3)
    var edited = three
    edited[1].0.summary = "nothing happened"
    add("r2 edited, its chain kept", edited, head: head(three, at: 3, key: key), .chainMismatch, broken: 2)
    add(
      "r2 deleted from the middle", [three[0], three[2]], head: head(three, at: 3, key: key), .chainMismatch,
      broken: 3)
    var swapped = [three[0], three[2], three[1]]
    swapped[1].0.id = 2
    swapped[2].0.id = 3
    add("r2 and r3 swapped, chains moved with them", swapped, head: nil, .chainMismatch, broken: 2)
    let inserted = [three[0], (receipt(2, summary: "forged", target: 9), three[1].1), three[2]]
    add("a forged receipt put in r2's place, with r2's chain", inserted, head: nil, .chainMismatch, broken: 2)
    add("r2 without a chain", [three[0], (three[1].0, nil), three[2]], head: nil, .missingChain, broken: 2)
    var invalid = GateReceiptFormat.json(three[1].0)
    if case .object(var members) = invalid {
      members["decision"] = "maybe"
      invalid = .object(members)
    }
    add(
      "r2 breaks rule 5 of receipt.md", [], head: nil, .receiptInvalid, broken: 2,
      raw: [
        ["receipt": GateReceiptFormat.json(three[0].0), "chain": .string(three[0].1!.lowercaseHex)],
        ["receipt": invalid, "chain": .string(three[1].1!.lowercaseHex)],
      ])
    add(
      "the tail cut back to r2 past the head at r3", Array(three.prefix(2)), head: head(three, at: 3, key: key),
      .headNotOnChain, broken: 3, unanchored: 2)
    add(
      "r2 edited and every chain recomputed: the chain holds, the head does not", chained(edited.map(\.0)),
      head: head(three, at: 3, key: key), .headNotOnChain, broken: 3, unanchored: 3)
    add(
      "the head under another key", three, head: head(three, at: 3, key: other), .headForged, broken: 3, unanchored: 3)
    add(
      "the head's id changed, its code kept", three,
      head: head(three, at: 3, key: key).replacingOccurrences(of: "head 1 3 ", with: "head 1 2 "), .headForged,
      broken: 2, unanchored: 3)
    add(
      "the head in upper-case hex", three, head: head(three, at: 3, key: key).uppercased(), .headMalformed,
      unanchored: 3)
    add(
      "the head without its newline", three, head: String(head(three, at: 3, key: key).dropLast()),
      .headMalformed, unanchored: 3)
    add(
      "the head with id 03", three,
      head: head(three, at: 3, key: key).replacingOccurrences(of: "head 1 3 ", with: "head 1 03 "), .headMalformed,
      unanchored: 3)
    return [
      "format": "receipt-chain", "version": 1,
      "description": .string(
        "Receipt chains and heads (docs/formats/receipt.md): each case's receipts (in id order, each with its stored "
          + "chain in hex or null) and head text (or null), verified with head_key, give result, broken and unanchored."
      ),
      "head_key": .string(keyBytes.lowercaseHex), "tests": .array(cases),
    ]
  }

  func testTheFileIsWhatTheGeneratorMakes() throws {
    let generated = try Self.generated()
    if ProcessInfo.processInfo.environment["TASKER_WRITE_VECTORS"] == "1" {
      try Data(generated.encoded).write(to: Self.file)
    }
    let file = try XCTUnwrap(JSONValue.parse(Array(try Data(contentsOf: Self.file))))
    XCTAssertEqual(file, generated, "run with TASKER_WRITE_VECTORS=1 to write the file again")
  }

  func testTheVectors() throws {
    let file = try XCTUnwrap(JSONValue.parse(Array(try Data(contentsOf: Self.file))))
    let key = try Self.key(try XCTUnwrap(SHA256Digest(hex: file["head_key"]?.stringValue ?? "")).bytes)
    guard case .array(let tests)? = file["tests"] else { return XCTFail("no tests") }
    XCTAssertEqual(tests.count, 17)
    var outcomes = Set<String>()
    for test in tests {
      guard case .array(let receipts)? = test["receipts"] else { return XCTFail("no receipts") }
      let rows = receipts.map { entry -> ReceiptChainRow in
        let chain = entry["chain"]?.stringValue.flatMap { SHA256Digest(hex: $0)?.bytes }
        let id = entry["receipt"]?["id"]?.integerValue ?? 0
        do {
          let receipt = try GateReceiptFormat.parse(entry["receipt"] ?? .null)
          XCTAssertEqual(receipt.canonicalBytes, GateReceiptFormat.json(receipt).encoded, "canonical bytes")
          return ReceiptChainRow(id: id, receipt: .success(receipt), chain: chain)
        } catch {
          return ReceiptChainRow(id: id, receipt: .failure(.receiptInvalid(id: id, reason: "\(error)")), chain: chain)
        }
      }
      let head = test["head"]?.stringValue.map { Array($0.utf8) }
      let report = ReceiptChainReport.verify(rows: rows, head: head) { key }
      let comment = test["comment"]?.stringValue ?? ""
      outcomes.insert(report.outcome.rawValue)
      XCTAssertEqual(report.outcome.rawValue, test["result"]?.stringValue, comment)
      XCTAssertEqual(report.brokenID.map { "r\($0)" }, test["broken"]?.stringValue, comment)
      XCTAssertEqual(Int64(report.unanchored), test["unanchored"]?.integerValue, comment)
    }
    XCTAssertEqual(
      outcomes, Set(ReceiptChainOutcome.allCases.map(\.rawValue)).subtracting(["head_unchecked"]),
      "every outcome but the locked vault's has a case")
  }
}
