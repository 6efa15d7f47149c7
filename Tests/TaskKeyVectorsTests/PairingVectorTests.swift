import Foundation
import Testing

@testable import TaskKeyVectors

/// The pairing checker over the committed file (written by the independent
/// Python peer), and over altered copies: a changed message, key or record
/// and a flipped outcome must each fail.
@Suite("Pairing vectors")
struct PairingVectorTests {
  static let path = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/pairing-v1.json").path

  static func file() throws -> PairingVectorFile {
    try JSONDecoder().decode(PairingVectorFile.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
  }

  static func runs(_ file: PairingVectorFile) -> [Int: PairingVector] {
    Dictionary(uniqueKeysWithValues: file.tests.filter { $0.kind == "exchange" }.map { ($0.id, $0) })
  }

  @Test func everyCaseOfTheCommittedFilePasses() throws {
    let file = try Self.file()
    #expect(file.tests.count >= 30)
    #expect(Set(file.tests.map(\.kind)) == ["code", "exchange", "record", "confirmation", "header", "record_length"])
    for vector in file.tests { #expect(try PairingVectorChecker.check(vector, runs: Self.runs(file)) == nil) }
  }

  @Test func alteredCasesFail() throws {
    let file = try Self.file()
    let runs = Self.runs(file)
    for field in [\PairingVector.isk, \.start, \.keyOffererToJoiner, \.storeRecord] {
      var exchange = try #require(file.tests.first { $0.kind == "exchange" })
      let value = try #require(exchange[keyPath: field])
      exchange[keyPath: field] = String(value.dropLast()) + (value.last == "0" ? "1" : "0")
      #expect(try PairingVectorChecker.check(exchange, runs: runs) != nil, "\(field)")
    }
    for kind in ["code", "record", "confirmation", "header", "record_length"] {
      var flipped = try #require(file.tests.first { $0.kind == kind && $0.outcome == "valid" })
      flipped.outcome = kind == "code" ? "code_not_read" : kind == "record" ? "channel_tampered" : "protocol_violation"
      #expect(try PairingVectorChecker.check(flipped, runs: runs) != nil, "\(kind)")
    }
  }
}
