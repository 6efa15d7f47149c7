import CSodium

/// The byte encodings and the ristretto255 group of CPACE-RISTR255-SHA512
/// (draft-irtf-cfrg-cpace-21, §6.3, §7.2 and §8.3), through libsodium: LEB128
/// `prepend_len` and `lv_cat` (Appendix A.1), `generator_string` (§8.1, Appendix A.2),
/// `calculate_generator`, `sample_scalar` and `scalar_mult_vfy` (§8.3), and
/// the two transcripts (§6.3, Appendix A.3). docs/formats/cpace.md gives
/// every step to the byte.
enum CPaceGroup {
  /// G.DSI for ristretto255: `CPaceRistretto255`.
  static let dsi = Array("CPaceRistretto255".utf8)
  /// H.s_in_bytes of SHA-512: its 128-byte input block.
  static let hashBlockByteCount = 128
  /// Size of an encoded ristretto255 element and of a scalar: 32.
  static let elementByteCount = 32

  /// `prepend_len(data)`: the LEB128 encoding of `count` (7 bits a byte,
  /// least significant first, bit 7 set while more follow).
  static func lengthPrefix(_ count: Int) -> [UInt8] {
    var length = count
    var encoded = [UInt8]()
    repeat {
      encoded.append(length < 128 ? UInt8(length) : UInt8(length & 0x7f) | 0x80)
      length >>= 7
    } while length != 0
    return encoded
  }

  /// `lv_cat(parts...)`: each part with its LEB128 length in front.
  static func lengthValue(_ parts: [UInt8]...) -> [UInt8] {
    parts.flatMap { lengthPrefix($0.count) + $0 }
  }

  /// `generator_string(DSI, PRS, CI, sid, 128)` without the PRS bytes:
  /// the string is `head || PRS || tail`, so the secret PRS never joins an
  /// ordinary array. `head` is `prepend_len(DSI) || LEB128(len(PRS))`,
  /// `tail` is `prepend_len(zero_bytes(len_zpad)) || prepend_len(CI) ||
  /// prepend_len(sid)` with len_zpad = max(0, 128 - 1 - len(prepend_len(PRS))
  /// - len(prepend_len(DSI))).
  static func generatorStringParts(prsByteCount: Int, ci: [UInt8], sid: [UInt8]) -> (head: [UInt8], tail: [UInt8]) {
    let prsPrefix = lengthPrefix(prsByteCount)
    let padding = max(0, hashBlockByteCount - 1 - (prsPrefix.count + prsByteCount) - (1 + dsi.count))
    let head = lengthValue(dsi) + prsPrefix
    let tail = lengthValue([UInt8](repeating: 0, count: padding), ci, sid)
    return (head, tail)
  }

  /// `calculate_generator`: SHA-512 of the generator string (64 bytes),
  /// mapped by `crypto_core_ristretto255_from_hash` (RFC 9496 §4.3.4, the
  /// element derivation). Both the hash and the generator are secret (either
  /// allows an offline search for the PRS) and stay in locked memory.
  ///
  /// - Returns: the 64-byte hash and the 32-byte encoded generator.
  static func generator(prs: SecureBytes, ci: [UInt8], sid: [UInt8]) throws -> (hash: SecureBytes, g: SecureBytes) {
    let parts = generatorStringParts(prsByteCount: prs.count, ci: ci, sid: sid)
    let hash = try hash(parts.head, secret: prs, then: parts.tail)
    let g = try SecureBytes(zeroedCount: elementByteCount)
    try g.withUnsafeMutableBytes { out in
      try hash.withUnsafeBytes { input in
        guard
          crypto_core_ristretto255_from_hash(
            out.bindMemory(to: UInt8.self).baseAddress!, input.bindMemory(to: UInt8.self).baseAddress!) == 0
        else { throw TaskCryptoError.backendFailure(function: "crypto_core_ristretto255_from_hash") }
      }
    }
    return (hash, g)
  }

  /// `sample_scalar` as §8.3 recommends: 32 random bytes with the bits above
  /// bit 251 cleared (little-endian), in locked memory.
  static func sampleScalar() throws -> SecureBytes {
    let scalar = try SecureBytes.random(count: elementByteCount)
    scalar.withUnsafeMutableBytes { $0[31] &= 0x0f }
    return scalar
  }

  /// `scalar_mult(y, g)`: the encoding of y * g for the (valid) generator.
  static func scalarMult(_ scalar: SecureBytes, _ g: SecureBytes) throws -> [UInt8] {
    let product = try g.withUnsafeBytes { try multiply(scalar, point: $0) }
    guard let product else { throw TaskCryptoError.backendFailure(function: "crypto_scalarmult_ristretto255") }
    return product.withUnsafeBytes { Array($0) }
  }

  /// `scalar_mult_vfy(y, X)` for a received message X, with the refusals
  /// told apart: a length other than 32 bytes, an encoding that does not
  /// decode (non-canonical, negative, or not on the group: RFC 9496 §4.3.1),
  /// the identity (32 zero bytes), and a product that is the identity.
  ///
  /// - Returns: the encoding of y * decode(X): the secret point K.
  /// - Throws: `cpaceMessageLength`, `cpaceInvalidPoint` or
  ///   `cpaceIdentityPoint`.
  static func scalarMultVerify(_ scalar: SecureBytes, peer: [UInt8]) throws -> SecureBytes {
    ensureSodium()
    guard peer.count == elementByteCount else { throw TaskCryptoError.cpaceMessageLength(byteCount: peer.count) }
    // RFC 9496 §4.3.1 refuses s >= p, so any encoding with bit 255 set;
    // libsodium 1.0.18 masks that bit off and would accept the string as
    // another spelling of an element (a malleable message), so it is
    // refused here first.
    guard peer[31] & 0x80 == 0, crypto_core_ristretto255_is_valid_point(peer) == 1 else {
      throw TaskCryptoError.cpaceInvalidPoint
    }
    guard peer.contains(where: { $0 != 0 }) else { throw TaskCryptoError.cpaceIdentityPoint }
    guard let product = try peer.withUnsafeBytes({ try multiply(scalar, point: $0) }) else {
      throw TaskCryptoError.cpaceIdentityPoint
    }
    return product
  }

  /// y * P into locked memory, or nil when P does not decode or the product
  /// is the identity (libsodium returns -1 for both).
  private static func multiply(_ scalar: SecureBytes, point: UnsafeRawBufferPointer) throws -> SecureBytes? {
    let product = try SecureBytes(zeroedCount: elementByteCount)
    let status = product.withUnsafeMutableBytes { out in
      scalar.withUnsafeBytes { y in
        crypto_scalarmult_ristretto255(
          out.bindMemory(to: UInt8.self).baseAddress!, y.bindMemory(to: UInt8.self).baseAddress!,
          point.bindMemory(to: UInt8.self).baseAddress!)
      }
    }
    return status == 0 ? product : nil
  }

  /// `transcript_ir(Ya, ADa, Yb, ADb)` = lv_cat(Ya, ADa) || lv_cat(Yb, ADb).
  static func transcriptIR(_ ya: [UInt8], _ ada: [UInt8], _ yb: [UInt8], _ adb: [UInt8]) -> [UInt8] {
    lengthValue(ya, ada) + lengthValue(yb, adb)
  }

  /// `transcript_oc(Ya, ADa, Yb, ADb)` = o_cat(lv_cat(Ya, ADa),
  /// lv_cat(Yb, ADb)): `oc`, then the lexicographically larger string first
  /// (a proper prefix is the smaller; equal strings in either order).
  static func transcriptOC(_ ya: [UInt8], _ ada: [UInt8], _ yb: [UInt8], _ adb: [UInt8]) -> [UInt8] {
    let first = lengthValue(ya, ada)
    let second = lengthValue(yb, adb)
    let larger = first.lexicographicallyPrecedes(second) ? second : first
    let smaller = first.lexicographicallyPrecedes(second) ? first : second
    return Array("oc".utf8) + larger + smaller
  }

  /// ISK = SHA-512(lv_cat(DSI || "_ISK", sid, K) || transcript), into
  /// locked memory (K is secret, so the prefix is hashed in pieces).
  static func intermediateSessionKey(sid: [UInt8], k: SecureBytes, transcript: [UInt8]) throws -> SecureBytes {
    let label = dsi + Array("_ISK".utf8)
    return try hash(
      lengthValue(label, sid) + lengthPrefix(k.count), secret: k, then: transcript)
  }

  /// SHA-512(`prefix` || `secret` || `suffix`) into locked memory.
  static func hash(_ prefix: [UInt8], secret: SecureBytes, then suffix: [UInt8]) throws -> SecureBytes {
    ensureSodium()
    let digest = try SecureBytes(zeroedCount: 64)
    var state = crypto_hash_sha512_state()
    defer { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) } }
    _ = crypto_hash_sha512_init(&state)
    update(&state, prefix)
    secret.withUnsafeBytes { update(&state, $0) }
    update(&state, suffix)
    digest.withUnsafeMutableBytes { _ = crypto_hash_sha512_final(&state, $0.bindMemory(to: UInt8.self).baseAddress!) }
    return digest
  }

  private static func update(_ state: inout crypto_hash_sha512_state, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update(&state, $0) }
  }

  private static func update(_ state: inout crypto_hash_sha512_state, _ bytes: UnsafeRawBufferPointer) {
    guard bytes.count > 0 else { return }
    _ = crypto_hash_sha512_update(&state, bytes.bindMemory(to: UInt8.self).baseAddress, UInt64(bytes.count))
  }
}
