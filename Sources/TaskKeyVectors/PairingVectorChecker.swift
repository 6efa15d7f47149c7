import FoundationEssentials
import TaskCrypto
import TaskPairing

/// `Vectors/pairing-v1.json`: `taskkey pair` (docs/formats/pairing.md),
/// written by scripts/pairing-peer.py, an implementation independent of
/// this one. A `code` case reads a typed code; an `exchange` case rebuilds
/// every message, key and record of a whole pairing from its inputs (CPace
/// with the case's scalars); `record`, `confirmation`, `header` and
/// `record_length` cases are what a reader must accept or refuse.
enum PairingVectorChecker: VectorChecker {
  static let formats = ["pairing"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(PairingVectorFile.self, from: data)
    let runs = Dictionary(uniqueKeysWithValues: file.tests.filter { $0.kind == "exchange" }.map { ($0.id, $0) })
    for vector in file.tests {
      let name = "case \(vector.id) (\(vector.comment))"
      do {
        report.record(try check(vector, runs: runs).map { "\(name): \($0)" })
      } catch {
        report.record("\(name): \(error)")
      }
    }
  }

  static func check(_ vector: PairingVector, runs: [Int: PairingVector]) throws -> String? {
    switch vector.kind {
    case "code":
      guard let prs = try? PairingVectorSeams.passwordBytes(of: vector.text ?? "") else {
        return vector.outcome == "code_not_read" ? nil : "the code was refused"
      }
      let expected = try hex(vector.prs)
      return vector.outcome == "valid" && prs == expected ? nil : "read as \(Hex.encode(prs))"
    case "exchange": return try exchange(vector)
    case "record":
      let opened = PairingVectorSeams.openRecord(
        try hex(vector.record), key: try hex(vector.key), sequence: UInt64(vector.sequence ?? 0))
      switch (vector.outcome, opened) {
      case ("valid", let plain?):
        let expected = try hex(vector.plaintext)
        return plain == expected ? nil : "another plaintext"
      case ("channel_tampered", nil): return nil
      default: return "expected \(vector.outcome), got \(opened == nil ? "channel_tampered" : "valid")"
      }
    case "confirmation":
      guard let run = runs[vector.caseID ?? 0] else { return "names no exchange case" }
      let response = try hex(vector.response)
      let verified = try confirms(run, yb: Array(response[8..<40]), tb: Array(response[40...]))
      return verified == (vector.outcome == "valid") ? nil : "expected \(vector.outcome)"
    case "header":
      let step: [String: UInt8] = ["start": 1, "response": 2, "confirm": 3, "store": 0x10, "done": 0x11]
      let got = PairingVectorSeams.headerOutcome(try hex(vector.header), step: step[vector.step ?? ""] ?? 0)
      return got == vector.outcome ? nil : "got \(got)"
    case "record_length":
      let allowed = PairingVectorSeams.recordLengthIsAllowed(vector.length ?? -1)
      return allowed == (vector.outcome == "valid") ? nil : "expected \(vector.outcome)"
    default:
      return "unknown kind '\(vector.kind)'"
    }
  }

  /// The two parties of an exchange case, from its scalars.
  private static func parties(_ vector: PairingVector) throws -> (joiner: CPace.Party, offerer: CPace.Party) {
    let prs = try PairingVectorSeams.passwordBytes(of: vector.code ?? "")
    let ci = try PairingVectorSeams.channelIdentifier(offerer: vector.offerer ?? "", joiner: vector.joiner ?? "")
    let sid = try hex(vector.sid)
    let secret = { (field: String?) throws -> SecureBytes in
      try hex(field).withUnsafeBytes { try SecureBytes(copying: $0) }
    }
    let prsBytes = try prs.withUnsafeBytes { try SecureBytes(copying: $0) }
    let ad = PairingVectorSeams.associatedData
    return (
      try CPace.Party(role: .initiator, prs: prsBytes, ci: ci, sid: sid, ad: ad.joiner, scalar: try secret(vector.ya)),
      try CPace.Party(role: .responder, prs: prsBytes, ci: ci, sid: sid, ad: ad.offerer, scalar: try secret(vector.yb))
    )
  }

  /// Whether the joiner of `run` accepts `yb` and `tb`.
  private static func confirms(_ run: PairingVector, yb: [UInt8], tb: [UInt8]) throws -> Bool {
    let joiner = try parties(run).joiner
    guard let keys = try? joiner.finish(peerMessage: yb, peerAD: PairingVectorSeams.associatedData.offerer) else {
      return false
    }
    return (try? keys.verifyPeerConfirmation(tb)) != nil
  }

  private static func exchange(_ vector: PairingVector) throws -> String? {
    var wrong: [String] = []
    func expect(_ label: String, _ field: String?, _ got: [UInt8]) throws {
      if try hex(field) != got { wrong.append(label) }
    }
    try expect("prs", vector.prs, try PairingVectorSeams.passwordBytes(of: vector.code ?? ""))
    try expect(
      "ci", vector.ci,
      try PairingVectorSeams.channelIdentifier(offerer: vector.offerer ?? "", joiner: vector.joiner ?? ""))
    let (joiner, offerer) = try parties(vector)
    let ad = PairingVectorSeams.associatedData
    let joinerKeys = try joiner.finish(peerMessage: offerer.message, peerAD: ad.offerer)
    let offererKeys = try offerer.finish(peerMessage: joiner.message, peerAD: ad.joiner)
    let sid = try hex(vector.sid)
    try expect("start", vector.start, PairingVectorSeams.header(1) + sid + joiner.message)
    try expect(
      "response", vector.response, PairingVectorSeams.header(2) + offerer.message + offererKeys.confirmationTag)
    try expect("confirm", vector.confirm, PairingVectorSeams.header(3) + joinerKeys.confirmationTag)
    try expect("isk", vector.isk, joinerKeys.isk.withUnsafeBytes { Array($0) })
    let channel = try PairingVectorSeams.channel(isk: joinerKeys.isk)
    try expect("key_offerer_to_joiner", vector.keyOffererToJoiner, channel.offererToJoiner)
    try expect("key_joiner_to_offerer", vector.keyJoinerToOfferer, channel.joinerToOfferer)
    if channel.verification != vector.verification { wrong.append("verification") }
    let store = PairingVectorSeams.openRecord(try hex(vector.storeRecord), key: channel.offererToJoiner, sequence: 0)
    let expectedStore = try hex(vector.store)
    if store != expectedStore { wrong.append("store_record") }
    let done = PairingVectorSeams.openRecord(try hex(vector.doneRecord), key: channel.joinerToOfferer, sequence: 0)
    if done != [] { wrong.append("done_record") }
    return wrong.isEmpty ? nil : "differs in \(wrong.joined(separator: ", "))"
  }

  private static func hex(_ field: String?) throws -> [UInt8] {
    guard let field, let value = VectorVerdict.hex(field) else { throw PairingVectorField() }
    return value
  }
}

/// A field a case needs is missing or not hex.
struct PairingVectorField: Error, CustomStringConvertible {
  var description: String { "a field is missing or not hex" }
}

/// `Vectors/pairing-v1.json`.
struct PairingVectorFile: Codable {
  var format: String
  var version: Int
  var tests: [PairingVector]
}

/// One pairing case; byte strings in lowercase hex.
struct PairingVector: Codable {
  var id: Int
  var comment: String
  var kind: String
  var outcome: String
  var text, prs, code, offerer, joiner, sid, ya, yb, ci, start, response, confirm, isk: String?
  var keyOffererToJoiner, keyJoinerToOfferer, verification, store, storeRecord, doneRecord: String?
  var key, record, plaintext, step, header: String?
  var sequence, length, caseID: Int?

  enum CodingKeys: String, CodingKey {
    case id, comment, kind, outcome, text, prs, code, offerer, joiner, sid, ya, yb, ci, start, response, confirm, isk
    case verification, store, key, record, plaintext, step, header, sequence, length
    case keyOffererToJoiner = "key_offerer_to_joiner"
    case keyJoinerToOfferer = "key_joiner_to_offerer"
    case storeRecord = "store_record"
    case doneRecord = "done_record"
    case caseID = "case"
  }
}
