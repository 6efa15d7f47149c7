import Foundation
import Testing

@testable import TaskKeyVectors

/// The CPace checker over the committed file, and over altered copies: a
/// changed draft value, a changed project tag and a wrong outcome must each
/// fail, naming the case.
@Suite("CPace vectors")
struct CPaceVectorTests {
  static let path = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/cpace-ristretto255-sha512-v1.json").path

  static func file() throws -> CPaceVectorFile {
    try JSONDecoder().decode(CPaceVectorFile.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
  }

  @Test func everyCaseOfTheCommittedFilePasses() throws {
    let file = try Self.file()
    #expect(file.tests.count >= 19)
    #expect(file.tests.filter { $0.source == "draft" }.count == 4)
    for vector in file.tests { #expect(CPaceVectorChecker.check(vector) == nil) }
  }

  @Test func alteredCasesFailAndNameWhatDiffers() throws {
    let file = try Self.file()
    var exchange = try #require(file.tests.first { $0.kind == "exchange" })
    exchange.iskIR = String(repeating: "0", count: 128)
    #expect(CPaceVectorChecker.check(exchange)?.contains("isk_ir") == true)
    var generator = try #require(file.tests.first { $0.kind == "exchange" })
    generator.generatorString = "00"
    #expect(CPaceVectorChecker.check(generator)?.contains("generator_string") == true)
    var confirmation = try #require(file.tests.first { $0.kind == "confirmation" && $0.result == "valid" })
    confirmation.ta = String(repeating: "a", count: 128)
    #expect(CPaceVectorChecker.check(confirmation)?.hasPrefix("case \(confirmation.id)") == true)
    var refusal = try #require(file.tests.first { $0.error == "cpace_identity_point" })
    refusal.error = "cpace_invalid_point"
    #expect(CPaceVectorChecker.check(refusal)?.contains("got cpace_identity_point") == true)
    var unknown = refusal
    unknown.kind = "pake"
    #expect(CPaceVectorChecker.check(unknown)?.contains("unknown kind") == true)
  }
}
