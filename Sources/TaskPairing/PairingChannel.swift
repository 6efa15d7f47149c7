import FoundationEssentials
import TaskCrypto

/// The channel after key confirmation (docs/formats/pairing.md, "The
/// channel"): one AES-256-GCM key each way, derived from CPace's ISK by
/// HKDF-SHA-512, a fresh random nonce in every record, and the record's
/// header, length and sequence number authenticated, so a record that is
/// changed, replayed, dropped or moved fails to open.
struct PairingChannel {
  private let sendKey: SymmetricKey
  private let receiveKey: SymmetricKey
  private var sent: UInt64 = 0
  private var received: UInt64 = 0

  /// HKDF info of the offerer-to-joiner key.
  static let offererToJoinerInfo = Array("TKPAIR1 offerer to joiner".utf8)
  /// HKDF info of the joiner-to-offerer key.
  static let joinerToOffererInfo = Array("TKPAIR1 joiner to offerer".utf8)
  /// HKDF info of the verification string.
  static let verificationInfo = Array("TKPAIR1 verification".utf8)

  /// The channel of `role` under `isk`.
  ///
  /// - Throws: `PairingError.crypto` (locked memory).
  init(isk: SecureBytes, role: PairingRole) throws(PairingError) {
    let offererToJoiner = try Self.key(isk, Self.offererToJoinerInfo)
    let joinerToOfferer = try Self.key(isk, Self.joinerToOffererInfo)
    (sendKey, receiveKey) =
      role == .offerer ? (offererToJoiner, joinerToOfferer) : (joinerToOfferer, offererToJoiner)
  }

  private static func key(_ isk: SecureBytes, _ info: [UInt8]) throws(PairingError) -> SymmetricKey {
    try PairingError.wrapping {
      try isk.withUnsafeBytes { raw in
        try SymmetricKey(
          bytes: HKDFSHA512.deriveBytes(inputKeyMaterial: raw, salt: [UInt8](), info: info, outputByteCount: 32))
      }
    }
  }

  /// The short string both screens show after confirmation: six decimal
  /// digits, `123 456`, from the first four bytes of
  /// HKDF(ISK, "TKPAIR1 verification") as a big-endian number modulo 10^6.
  static func verificationString(isk: SecureBytes) throws(PairingError) -> String {
    let bytes = try PairingError.wrapping {
      try isk.withUnsafeBytes { raw in
        try HKDFSHA512.deriveBytes(inputKeyMaterial: raw, salt: [UInt8](), info: verificationInfo, outputByteCount: 4)
      }
    }
    let value = bytes.withUnsafeBytes { $0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } } % 1_000_000
    let digits = String(value)
    let padded = String(repeating: "0", count: 6 - digits.count) + digits
    return "\(padded.prefix(3)) \(padded.suffix(3))"
  }

  /// The associated data of a record: its 12-byte prefix (header and
  /// length) and its sequence number in its direction, big-endian.
  static func aad(prefix: [UInt8], sequence: UInt64) -> [UInt8] {
    prefix + (0..<8).map { UInt8(truncatingIfNeeded: sequence >> (56 - 8 * $0)) }
  }

  /// The whole message of a sealed record of `type` holding `plaintext`.
  ///
  /// - Throws: `PairingError.crypto`.
  mutating func seal(_ type: PairingMessageType, _ plaintext: SecureBytes) throws(PairingError) -> [UInt8] {
    let length = 12 + plaintext.count + 16
    let prefix = PairingWire.header(type) + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
    let sequence = sent
    let box = try PairingError.wrapping {
      try plaintext.withUnsafeBytes { raw in
        try AES.GCM.seal(raw, using: sendKey, authenticating: Self.aad(prefix: prefix, sequence: sequence))
      }
    }
    sent += 1
    return prefix + box.combined
  }

  /// Opens a record read by `PairingWire.read`, the next one expected.
  ///
  /// - Throws: `PairingError.channelTampered` naming the record's number.
  mutating func open(prefix: [UInt8], body: [UInt8]) throws(PairingError) -> SecureBytes {
    let sequence = received
    do {
      let box = try AES.GCM.SealedBox(combined: body)
      let plaintext = try AES.GCM.openSecret(
        box, using: receiveKey, authenticating: Self.aad(prefix: prefix, sequence: sequence))
      received += 1
      return plaintext
    } catch {
      throw .channelTampered(record: sequence)
    }
  }
}
