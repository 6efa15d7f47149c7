import CSodium

extension CPace {
  /// What a finished CPace run gives one side: the intermediate session
  /// key and the explicit key confirmation of draft-irtf-cfrg-cpace-21 §10.4.
  ///
  /// mac_key = SHA-512("CPaceMac" || sid || ISK); each side's tag is
  /// HMAC-SHA-512(mac_key, lv_cat(Y, AD)) over the message it sent. Send
  /// `confirmationTag`, check the peer's with `verifyPeerConfirmation`, and
  /// use `isk` only after that check passed.
  public final class SessionKeys {
    /// The intermediate session key, 64 bytes in locked memory. The draft
    /// recommends a KDF (HKDF) before use as a key.
    public let isk: SecureBytes
    /// This side's confirmation tag (64 bytes, public): send it to the peer.
    public let confirmationTag: [UInt8]
    /// `sid_output` = SHA-512("CPaceSidOutput" || transcript) (§10.6): a
    /// public session identifier both sides share, for runs without a sid.
    public let sessionIDOutput: [UInt8]
    private let expectedPeerTag: [UInt8]

    init(isk: SecureBytes, sid: [UInt8], own: [UInt8], peer: [UInt8], transcript: [UInt8]) throws {
      let macKey = try Self.macKey(sid: sid, isk: isk)
      self.isk = isk
      self.confirmationTag = macKey.withUnsafeBytes { CPace.tag(key: $0, own) }
      self.expectedPeerTag = macKey.withUnsafeBytes { CPace.tag(key: $0, peer) }
      self.sessionIDOutput = SHA512.hash(Array("CPaceSidOutput".utf8) + transcript)
    }

    /// mac_key = SHA-512("CPaceMac" || sid || ISK), no length prefixes
    /// (§10.4), in locked memory.
    static func macKey(sid: [UInt8], isk: SecureBytes) throws -> SecureBytes {
      try CPaceGroup.hash(Array("CPaceMac".utf8) + sid, secret: isk, then: [])
    }

    /// Checks the peer's confirmation tag in constant time.
    ///
    /// - Parameter tag: the 64 bytes the peer sent.
    /// - Throws: `TaskCryptoError.cpaceConfirmationFailed` when the tag is
    ///   not the peer's expected one (a wrong PRS, CI or sid, an altered
    ///   message or associated data, or a tag of any other length).
    public func verifyPeerConfirmation(_ tag: [UInt8]) throws {
      guard ConstantTime.equals(tag, expectedPeerTag) else { throw TaskCryptoError.cpaceConfirmationFailed }
    }
  }

  /// HMAC-SHA-512 of `message` under the 64-byte `key`.
  static func tag(key: UnsafeRawBufferPointer, _ message: [UInt8]) -> [UInt8] {
    ensureSodium()
    var state = crypto_auth_hmacsha512_state()
    var out = [UInt8](repeating: 0, count: tagByteCount)
    _ = crypto_auth_hmacsha512_init(&state, key.bindMemory(to: UInt8.self).baseAddress!, key.count)
    _ = crypto_auth_hmacsha512_update(&state, message, UInt64(message.count))
    _ = crypto_auth_hmacsha512_final(&state, &out)
    withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
    return out
  }
}
