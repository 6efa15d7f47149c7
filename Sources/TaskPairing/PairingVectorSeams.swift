import TaskCrypto
import TaskSystem

/// The package seam `taskkey vectors check` uses for Vectors/pairing-v1.json
/// (docs/formats/pairing.md): each step of the exchange as a function of
/// its inputs, with no socket. Not public API.
package enum PairingVectorSeams {
  /// PRS of a typed code (`PairingCode(reading:)`, then the word numbers).
  package static func passwordBytes(of text: String) throws -> [UInt8] {
    try PairingCode(reading: text).passwordBytes().withUnsafeBytes { Array($0) }
  }

  /// CI of two endpoints written as pairing.md writes them.
  package static func channelIdentifier(offerer: String, joiner: String) throws -> [UInt8] {
    PairingKeyExchange.channelIdentifier(
      offerer: try SocketAddress(parsing: offerer), joiner: try SocketAddress(parsing: joiner))
  }

  /// The joiner's and offerer's associated data.
  package static var associatedData: (joiner: [UInt8], offerer: [UInt8]) {
    (PairingKeyExchange.joinerAD, PairingKeyExchange.offererAD)
  }

  /// A message's header for `type`.
  package static func header(_ type: UInt8) -> [UInt8] { PairingWire.magic + [PairingWire.version, type] }

  /// The channel keys and the verification string of an ISK.
  package static func channel(isk: SecureBytes) throws -> (
    offererToJoiner: [UInt8], joinerToOfferer: [UInt8], verification: String
  ) {
    func key(_ info: [UInt8]) throws -> [UInt8] {
      try isk.withUnsafeBytes {
        try HKDFSHA512.deriveBytes(inputKeyMaterial: $0, salt: [UInt8](), info: info, outputByteCount: 32)
          .withUnsafeBytes { Array($0) }
      }
    }
    return (
      try key(PairingChannel.offererToJoinerInfo), try key(PairingChannel.joinerToOffererInfo),
      try PairingChannel.verificationString(isk: isk)
    )
  }

  /// Opens one whole record (header, length, sealed) under `key` as record
  /// `sequence` of its direction; nil when it does not open.
  package static func openRecord(_ record: [UInt8], key: [UInt8], sequence: UInt64) -> [UInt8]? {
    guard record.count >= 12 + PairingWire.minimumRecordByteCount,
      let symmetric = try? key.withUnsafeBytes({ try SymmetricKey(copying: $0) }),
      let box = try? AES.GCM.SealedBox(combined: Array(record[12...]))
    else { return nil }
    let aad = PairingChannel.aad(prefix: Array(record.prefix(12)), sequence: sequence)
    return try? AES.GCM.openSecret(box, using: symmetric, authenticating: aad).withUnsafeBytes { Array($0) }
  }

  /// The outcome of reading `header` at `step`: `valid`,
  /// `protocol_violation`, `unsupported_version` or `peer_aborted`.
  package static func headerOutcome(_ header: [UInt8], step: UInt8) -> String {
    guard let expected = PairingMessageType(rawValue: step) else { return "protocol_violation" }
    do {
      return try PairingWire.parseHeader(header, allowed: [expected]) == .abort ? "peer_aborted" : "valid"
    } catch .unsupportedVersion {
      return "unsupported_version"
    } catch {
      return "protocol_violation"
    }
  }

  /// Whether a record length is within the bounds a reader accepts.
  package static func recordLengthIsAllowed(_ length: Int) -> Bool {
    (PairingWire.minimumRecordByteCount...PairingWire.maximumRecordByteCount).contains(length)
  }
}
