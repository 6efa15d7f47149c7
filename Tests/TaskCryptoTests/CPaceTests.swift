import Testing

@testable import TaskCrypto

/// CPACE-RISTR255-SHA512 against the draft's own ristretto255 vectors
/// (draft-irtf-cfrg-cpace-21, Appendix B.3), and the refusals a receiving
/// party must make.
@Suite("CPace (ristretto255, SHA-512)")
struct CPaceTests {
  static func hex(_ text: String) -> [UInt8] { Hex.decode(text)! }
  static func secret(_ bytes: [UInt8]) throws -> SecureBytes {
    try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
  }

  // Appendix B.3.1 to B.3.6.
  static let prs = Array("Password".utf8)
  static let ci = hex("0b415f696e69746961746f720b425f726573706f6e646572")
  static let sid = hex("7e4b4791d6a8ef019b936c79fb7f2c57")
  static let ya = hex("da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08")
  static let yb = hex("d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d")
  static let messageA = hex("d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b9157")
  static let messageB = hex("3ea7e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f7258")
  static let iskIR = hex(
    "b69effbf61b51d56401c0f65601abe428de8206feaaf0e32198896dcae7b35cd"
      + "2b38950a39dfd5d4a79164614c2984f7daa460b588c1e80c3fa2068af7900447")
  static let iskOC = hex(
    "544199d71f62f8d9a1fee55727e24fe4a45844593c2b6013c4fa3969d0e5debb"
      + "2244675c0b43397cbb68d342b01fc0f98fc961469a25134de9f0f813c1a57476")

  func parties(_ roles: (CPace.Role, CPace.Role), prsB: [UInt8] = prs) throws -> (CPace.Party, CPace.Party) {
    let a = try CPace.Party(
      role: roles.0, prs: try Self.secret(Self.prs), ci: Self.ci, sid: Self.sid, ad: Array("ADa".utf8),
      scalar: try Self.secret(Self.ya))
    let b = try CPace.Party(
      role: roles.1, prs: try Self.secret(prsB), ci: Self.ci, sid: Self.sid, ad: Array("ADb".utf8),
      scalar: try Self.secret(Self.yb))
    return (a, b)
  }

  @Test func theGeneratorIsTheDraftsOne() throws {
    let generator = try CPace.generatorForCheck(prs: try Self.secret(Self.prs), ci: Self.ci, sid: Self.sid)
    #expect(generator.string.count == 170)
    #expect(Hex.encode(generator.g) == "222b6b195fe84b1652badb6f6a3ae3d24341e7306967f0b8115b40d5698c7e56")
  }

  @Test func bothOrderingsGiveTheDraftsMessagesAndISK() throws {
    for (roles, isk) in [
      ((CPace.Role.initiator, CPace.Role.responder), Self.iskIR), ((.symmetric, .symmetric), Self.iskOC),
    ] {
      let (a, b) = try parties(roles)
      #expect(a.message == Self.messageA)
      #expect(b.message == Self.messageB)
      let keysA = try a.finish(peerMessage: b.message, peerAD: b.ad)
      let keysB = try b.finish(peerMessage: a.message, peerAD: a.ad)
      #expect(keysA.isk.withUnsafeBytes { Array($0) } == isk)
      #expect(keysB.isk == keysA.isk)
      #expect(keysA.sessionIDOutput == keysB.sessionIDOutput)
      try keysA.verifyPeerConfirmation(keysB.confirmationTag)
      try keysB.verifyPeerConfirmation(keysA.confirmationTag)
      #expect(keysA.confirmationTag != keysB.confirmationTag)
    }
  }

  @Test func aWrongPRSGivesAnotherISKAndConfirmationFails() throws {
    let (a, b) = try parties((.initiator, .responder), prsB: Array("Passwore".utf8))
    let keysA = try a.finish(peerMessage: b.message, peerAD: b.ad)
    let keysB = try b.finish(peerMessage: a.message, peerAD: a.ad)
    #expect(keysA.isk != keysB.isk)
    #expect(throws: TaskCryptoError.cpaceConfirmationFailed) { try keysA.verifyPeerConfirmation(keysB.confirmationTag) }
    #expect(throws: TaskCryptoError.cpaceConfirmationFailed) { try keysB.verifyPeerConfirmation(keysA.confirmationTag) }
  }

  @Test func alteredAssociatedDataBreaksConfirmation() throws {
    let (a, b) = try parties((.initiator, .responder))
    let keysA = try a.finish(peerMessage: b.message, peerAD: Array("ADc".utf8))
    let keysB = try b.finish(peerMessage: a.message, peerAD: a.ad)
    #expect(keysA.isk != keysB.isk)
    #expect(throws: TaskCryptoError.cpaceConfirmationFailed) { try keysB.verifyPeerConfirmation(keysA.confirmationTag) }
    #expect(throws: TaskCryptoError.cpaceConfirmationFailed) { try keysB.verifyPeerConfirmation([]) }
  }

  @Test func messagesOfTheWrongLengthAreRefused() throws {
    for count in [0, 1, 31, 33, 64] {
      let (a, _) = try parties((.initiator, .responder))
      #expect(throws: TaskCryptoError.cpaceMessageLength(byteCount: count)) {
        _ = try a.finish(
          peerMessage: [UInt8](Self.messageB.prefix(count)) + [UInt8](repeating: 1, count: max(0, count - 32)),
          peerAD: [])
      }
    }
  }

  @Test func theIdentityAndBadEncodingsAreRefused() throws {
    let cases: [([UInt8], TaskCryptoError)] = [
      ([UInt8](repeating: 0, count: 32), .cpaceIdentityPoint),
      // Appendix B.3.11, Y_i1.
      (Self.hex("2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c"), .cpaceInvalidPoint),
      // s = 1: negative.
      ([1] + [UInt8](repeating: 0, count: 31), .cpaceInvalidPoint),
      // s = p = 2^255 - 19: not canonical.
      ([0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f], .cpaceInvalidPoint),
      // A valid message with bit 255 set: libsodium 1.0.18 alone accepts it.
      (Array(Self.messageB.dropLast()) + [Self.messageB[31] | 0x80], .cpaceInvalidPoint),
    ]
    for (message, error) in cases {
      let (a, _) = try parties((.initiator, .responder))
      #expect(throws: error) { _ = try a.finish(peerMessage: message, peerAD: []) }
    }
  }

  @Test func aReflectedMessageAndASecondFinishAreRefused() throws {
    let (a, b) = try parties((.symmetric, .symmetric))
    #expect(throws: TaskCryptoError.cpaceReflectedMessage) { _ = try a.finish(peerMessage: a.message, peerAD: a.ad) }
    #expect(throws: TaskCryptoError.cpaceFinished) { _ = try a.finish(peerMessage: b.message, peerAD: b.ad) }
  }

  @Test func inputsOutOfRangeAreRefusedAndRandomRunsAgree() throws {
    #expect(throws: TaskCryptoError.cpaceInvalidInput("the PRS is empty")) {
      _ = try CPace.Party(role: .initiator, prs: try Self.secret([]), ci: [], sid: [], ad: [])
    }
    #expect(throws: TaskCryptoError.self) {
      _ = try CPace.Party(
        role: .initiator, prs: try Self.secret(Self.prs), ci: [UInt8](repeating: 0, count: 4097), sid: [], ad: [])
    }
    let a = try CPace.Party(role: .initiator, prs: try Self.secret(Self.prs), ci: Self.ci, sid: Self.sid, ad: [])
    let b = try CPace.Party(role: .responder, prs: try Self.secret(Self.prs), ci: Self.ci, sid: Self.sid, ad: [])
    #expect(a.message != b.message)
    let keysA = try a.finish(peerMessage: b.message, peerAD: [])
    let keysB = try b.finish(peerMessage: a.message, peerAD: [])
    #expect(keysA.isk == keysB.isk)
    try keysA.verifyPeerConfirmation(keysB.confirmationTag)
    #expect(!"\(keysA.isk)".contains(Hex.encode(keysA.isk.withUnsafeBytes { Array($0) }).prefix(8)))
  }
}
