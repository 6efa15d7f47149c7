import CommandKit
import FoundationEssentials
import TaskCrypto

/// `Vectors/cpace-ristretto255-sha512-v1.json`: CPACE-RISTR255-SHA512
/// (docs/formats/cpace.md). An `exchange` case runs both parties through
/// `CPace.Party` with the case's scalars (the package seam), in the
/// initiator-responder and the symmetric setting, and compares every value
/// the case states; a `scalar_mult_vfy` case runs the receiving side's
/// checks; a `confirmation` case checks both tags.
enum CPaceVectorChecker: VectorChecker {
  static let formats = ["cpace-ristretto255-sha512"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(CPaceVectorFile.self, from: data)
    for vector in file.tests { report.record(check(vector)) }
  }

  static func check(_ vector: CPaceVector) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    do {
      switch vector.kind {
      case "exchange": return try exchange(vector).map { "\(name): \($0)" }
      case "scalar_mult_vfy": return try scalarMult(vector, name: name)
      case "confirmation": return try confirmation(vector, name: name)
      default: return "\(name): unknown kind '\(vector.kind)'"
      }
    } catch let error as CPaceVectorField {
      return "\(name): field '\(error.name)' is missing or not hex"
    } catch {
      return "\(name): \(error)"
    }
  }

  /// Both parties, both settings: nil when every stated value matches.
  static func exchange(_ vector: CPaceVector) throws -> String? {
    let (prs, ci, sid) = (try secret(vector.prs, "prs"), try bytes(vector.ci, "ci"), try bytes(vector.sid, "sid"))
    let (ada, adb) = (try bytes(vector.ada, "ada"), try bytes(vector.adb, "adb"))
    let generator = try CPace.generatorForCheck(prs: prs, ci: ci, sid: sid)
    var wrong = [String]()
    func expect(_ field: String?, _ label: String, _ got: [UInt8]) throws {
      guard let field else { return }
      if try bytes(field, label) != got { wrong.append(label) }
    }
    try expect(vector.generatorString, "generator_string", generator.string)
    try expect(vector.generatorHash, "generator_hash", generator.hash)
    try expect(vector.g, "g", generator.g)
    for (label, roles) in [("ir", (CPace.Role.initiator, CPace.Role.responder)), ("oc", (.symmetric, .symmetric))] {
      let a = try CPace.Party(
        role: roles.0, prs: prs, ci: ci, sid: sid, ad: ada, scalar: try secret(vector.ya, "ya"))
      let b = try CPace.Party(
        role: roles.1, prs: prs, ci: ci, sid: sid, ad: adb, scalar: try secret(vector.yb, "yb"))
      try expect(vector.messageA, "Ya", a.message)
      try expect(vector.messageB, "Yb", b.message)
      let k = try CPace.sharedPointForCheck(scalar: try secret(vector.ya, "ya"), peer: b.message)
      try expect(vector.k, "K", k)
      let transcripts = CPace.transcriptsForCheck(a.message, ada, b.message, adb)
      try expect(
        label == "ir" ? vector.transcriptIR : vector.transcriptOC, "transcript_\(label)",
        label == "ir" ? transcripts.ir : transcripts.oc)
      let keysA = try a.finish(peerMessage: b.message, peerAD: adb)
      let keysB = try b.finish(peerMessage: a.message, peerAD: ada)
      let isk = keysA.isk.withUnsafeBytes { Array($0) }
      if keysA.isk != keysB.isk { wrong.append("isk_\(label) (the sides differ)") }
      try expect(label == "ir" ? vector.iskIR : vector.iskOC, "isk_\(label)", isk)
      try expect(label == "ir" ? vector.sidOutputIR : vector.sidOutputOC, "sid_output_\(label)", keysA.sessionIDOutput)
      if keysA.sessionIDOutput != keysB.sessionIDOutput { wrong.append("sid_output_\(label) (the sides differ)") }
      do {
        try keysA.verifyPeerConfirmation(keysB.confirmationTag)
        try keysB.verifyPeerConfirmation(keysA.confirmationTag)
      } catch {
        wrong.append("confirmation_\(label)")
      }
    }
    guard vector.messageA != nil, vector.messageB != nil, vector.iskIR != nil, vector.iskOC != nil else {
      return "an exchange case must state Ya, Yb, isk_ir and isk_oc"
    }
    return wrong.isEmpty ? nil : "differs in \(wrong.joined(separator: ", "))"
  }

  static func scalarMult(_ vector: CPaceVector, name: String) throws -> String? {
    let scalar = try secret(vector.scalar, "scalar")
    let point = try bytes(vector.point, "point")
    let outcome = Result { try CPace.sharedPointForCheck(scalar: scalar, peer: point) }
    return VectorVerdict.verdict(name, result: vector.result ?? "", expectedError: vector.error, outcome: outcome) {
      got in (try? bytes(vector.product, "product")) == got ? nil : "gave another product"
    }
  }

  static func confirmation(_ vector: CPaceVector, name: String) throws -> String? {
    let tags = try CPace.confirmationTagsForCheck(
      sid: try bytes(vector.sid, "sid"), isk: try secret(vector.isk, "isk"),
      initiator: try bytes(vector.messageA, "Ya"), initiatorAD: try bytes(vector.ada, "ada"),
      responder: try bytes(vector.messageB, "Yb"), responderAD: try bytes(vector.adb, "adb"))
    let expected = (try bytes(vector.ta, "ta"), try bytes(vector.tb, "tb"))
    if vector.result == "valid", let macKey = vector.macKey, try bytes(macKey, "mac_key") != tags.macKey {
      return "\(name): derived another mac_key"
    }
    let outcome = Result { () throws -> Void in
      guard ConstantTime.equals(tags.initiator, expected.0), ConstantTime.equals(tags.responder, expected.1) else {
        throw TaskCryptoError.cpaceConfirmationFailed
      }
    }
    return VectorVerdict.verdict(name, result: vector.result ?? "", expectedError: vector.error, outcome: outcome) {
      nil
    }
  }

  static func bytes(_ field: String?, _ name: String) throws -> [UInt8] {
    guard let field, let value = VectorVerdict.hex(field) else { throw CPaceVectorField(name: name) }
    return value
  }

  static func secret(_ field: String?, _ name: String) throws -> SecureBytes {
    try bytes(field, name).withUnsafeBytes { try SecureBytes(copying: $0) }
  }
}

/// A field a case needs is missing or not hex.
struct CPaceVectorField: Error {
  var name: String
}

/// `Vectors/cpace-ristretto255-sha512-v1.json`.
struct CPaceVectorFile: Codable, Equatable {
  var format = "cpace-ristretto255-sha512"
  var version = 1
  var description: String
  var tests: [CPaceVector]
}

/// One CPace case; byte strings in lowercase hex. Which fields a case has
/// depends on its `kind` (Vectors/README.md).
struct CPaceVector: Codable, Equatable {
  var id: Int
  var comment: String
  /// `draft` (copied from draft-irtf-cfrg-cpace-21) or `project`.
  var source: String
  /// `exchange`, `scalar_mult_vfy` or `confirmation`.
  var kind: String
  var prs, ci, sid, ada, adb, ya, yb: String?
  var generatorString, generatorHash, g, messageA, messageB, k: String?
  var transcriptIR, iskIR, transcriptOC, iskOC, sidOutputIR, sidOutputOC: String?
  var scalar, point, product: String?
  var isk, macKey, ta, tb: String?
  /// For `scalar_mult_vfy` and `confirmation`: `valid` or `invalid`.
  var result: String?
  /// For invalid cases: the error's code.
  var error: String?

  enum CodingKeys: String, CodingKey {
    case id, comment, source, kind, prs, ci, sid, ada, adb, ya, yb, g, scalar, point, product, isk, ta, tb
    case result, error
    case generatorString = "generator_string"
    case generatorHash = "generator_hash"
    case messageA = "Ya"
    case messageB = "Yb"
    case k = "K"
    case transcriptIR = "transcript_ir"
    case iskIR = "isk_ir"
    case transcriptOC = "transcript_oc"
    case iskOC = "isk_oc"
    case sidOutputIR = "sid_output_ir"
    case sidOutputOC = "sid_output_oc"
    case macKey = "mac_key"
  }
}
