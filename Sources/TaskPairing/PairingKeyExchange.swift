import TaskCrypto
import TaskSystem

/// CPace (TaskCrypto's `CPace`, suite CPACE-RISTR255-SHA512, the
/// initiator-responder setting, with the draft's explicit key
/// confirmation) with pairing's inputs: the joiner is the initiator A, the
/// offerer the responder B (docs/formats/pairing.md, "CPace inputs").
enum PairingKeyExchange {
  /// ADa: the joiner's associated data, known to both sides, never sent.
  static let joinerAD = Array("TKPAIR1 joiner".utf8)
  /// ADb: the offerer's.
  static let offererAD = Array("TKPAIR1 offerer".utf8)
  /// The label CI starts with.
  static let channelLabel = Array("TKPAIR1 channel".utf8)

  /// CI: the label and both endpoints as text, each length-prefixed.
  static func channelIdentifier(offerer: SocketAddress, joiner: SocketAddress) -> [UInt8] {
    CPace.lengthValueConcatenation([
      channelLabel, Array(offerer.textWithoutZone.utf8), Array(joiner.textWithoutZone.utf8),
    ])
  }

  /// What the offerer computes from `start`.
  struct Response {
    /// Yb, to send.
    var yb: [UInt8]
    /// Tb, to send.
    var tb: [UInt8]
    /// The session keys: the ISK and the check of the joiner's Ta.
    var keys: CPace.SessionKeys
    /// The intermediate session key.
    var isk: SecureBytes { keys.isk }
  }

  /// The offerer's half: Yb, the ISK and Tb from the joiner's Ya.
  ///
  /// - Throws: `PairingError.confirmationFailed(.offerer)` when Ya is not a
  ///   valid element, is the identity or this side's own message (the same
  ///   answer as a wrong code); `.crypto` otherwise.
  static func respond(prs: SecureBytes, ci: [UInt8], sid: [UInt8], ya: [UInt8]) throws(PairingError) -> Response {
    try mapped(.offerer) {
      let responder = try CPace.Party(role: .responder, prs: prs, ci: ci, sid: sid, ad: offererAD)
      let keys = try responder.finish(peerMessage: ya, peerAD: joinerAD)
      return Response(yb: responder.message, tb: keys.confirmationTag, keys: keys)
    }
  }

  /// The joiner's first half: Ya for `start`.
  struct Started {
    fileprivate let initiator: CPace.Party
    /// Ya, to send.
    var ya: [UInt8] { initiator.message }

    /// The second half, from the offerer's Yb and Tb: the ISK once Tb
    /// verified, and Ta to send.
    ///
    /// - Throws: `.confirmationFailed(.joiner)` for an invalid Yb or a
    ///   wrong Tb.
    func finish(yb: [UInt8], tb: [UInt8]) throws(PairingError) -> Finished {
      try PairingKeyExchange.mapped(.joiner) {
        let keys = try initiator.finish(peerMessage: yb, peerAD: PairingKeyExchange.offererAD)
        try keys.verifyPeerConfirmation(tb)
        return Finished(ta: keys.confirmationTag, isk: keys.isk)
      }
    }
  }

  /// What the joiner computes from `response`.
  struct Finished {
    /// Ta, to send.
    var ta: [UInt8]
    /// The intermediate session key.
    var isk: SecureBytes
  }

  /// The joiner's start: Ya from a fresh scalar.
  ///
  /// - Throws: `PairingError.crypto`.
  static func start(prs: SecureBytes, ci: [UInt8], sid: [UInt8]) throws(PairingError) -> Started {
    try mapped(.joiner) {
      Started(initiator: try CPace.Party(role: .initiator, prs: prs, ci: ci, sid: sid, ad: joinerAD))
    }
  }

  /// Runs `body`; a peer message CPace refuses, or a tag that does not
  /// verify, is `confirmationFailed(role)`: to the user a wrong code and a
  /// forged message look the same, and both end the offer.
  static func mapped<Result>(_ role: PairingRole, _ body: () throws -> Result) throws(PairingError) -> Result {
    do {
      return try body()
    } catch let error as TaskCryptoError {
      switch error {
      case .cpaceMessageLength, .cpaceInvalidPoint, .cpaceIdentityPoint, .cpaceReflectedMessage,
        .cpaceConfirmationFailed:
        throw .confirmationFailed(role: role)
      default:
        throw .crypto(error)
      }
    } catch {
      throw .protocolViolation("unexpected failure: \(type(of: error))")
    }
  }
}
