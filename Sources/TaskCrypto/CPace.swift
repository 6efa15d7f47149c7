import CSodium

/// CPace, the balanced password-authenticated key exchange of
/// draft-irtf-cfrg-cpace-21, in its suite CPACE-RISTR255-SHA512
/// (ristretto255 and SHA-512, §5 and §8.3), with the explicit key
/// confirmation of its §10.4. docs/formats/cpace.md gives every byte.
///
/// Both parties hold the same password-related string (PRS), channel
/// identifier (CI) and session identifier (sid). Each makes a `Party`,
/// sends its `message` and `ad`, and finishes with the other's:
///
///     let a = try CPace.Party(role: .initiator, prs: prs, ci: ci, sid: sid, ad: adA)
///     // send a.message and adA; receive yb and adB
///     let keys = try a.finish(peerMessage: yb, peerAD: adB)
///     // send keys.confirmationTag; receive tb
///     try keys.verifyPeerConfirmation(tb)
///     // only now use keys.isk (through a KDF)
///
/// The two sides get the same ISK only when PRS, CI, sid and both messages
/// and associated data match. The ISK is implicitly authenticated; the
/// confirmation tags make it explicit (and give perfect forward security,
/// §10.4). A received element is refused when it is not 32 bytes, does not
/// decode, is the identity, or is the party's own message sent back.
/// Scalars, the generator, K and the ISK live in `SecureBytes`; none is
/// ever described.
public enum CPace {
  /// Size of a CPace message (an encoded ristretto255 element): 32 bytes.
  public static let messageByteCount = 32
  /// Size of the intermediate session key (SHA-512): 64 bytes.
  public static let iskByteCount = 64
  /// Size of a confirmation tag (HMAC-SHA-512): 64 bytes.
  public static let tagByteCount = 64
  /// The most bytes taken for the PRS, CI, sid or either AD (each): 4096.
  public static let maximumInputByteCount = 4096

  /// Which side a party plays, and so which transcript the ISK hashes.
  public enum Role: Sendable, Equatable {
    /// Party A of the initiator-responder setting: its message comes first
    /// in the transcript (`transcript_ir`).
    case initiator
    /// Party B of the initiator-responder setting: the peer's message comes
    /// first (`transcript_ir`).
    case responder
    /// The symmetric setting, either side may speak first: the two messages
    /// are put in lexicographic order (`transcript_oc`). The application
    /// must make ADa and ADb unique (§10.1).
    case symmetric
  }

  /// One side of one CPace run. Its scalar is used once: `finish` wipes it,
  /// and a second `finish` is refused.
  public final class Party {
    /// This party's role.
    public let role: Role
    /// The message to send: Y = y * g, 32 bytes (public).
    public let message: [UInt8]
    /// This party's associated data, sent in clear beside `message`.
    public let ad: [UInt8]
    private let sid: [UInt8]
    private var scalar: SecureBytes?

    /// Starts a run: derives the generator from PRS, CI and sid, samples a
    /// fresh scalar and computes the message.
    ///
    /// - Parameters:
    ///   - role: initiator, responder or symmetric; both sides must agree.
    ///   - prs: the password-related string (1 to 4096 bytes).
    ///   - ci: the channel identifier, kept confidential (both addresses
    ///     and the protocol label, for example); at most 4096 bytes.
    ///   - sid: the session identifier, public, unique per run where the
    ///     application has one; at most 4096 bytes.
    ///   - ad: this party's associated data (ADa or ADb); at most 4096 bytes.
    /// - Throws: `TaskCryptoError.cpaceInvalidInput` for an empty PRS or an
    ///   input over the limit; `resourceUnavailable` without locked memory.
    public convenience init(role: Role, prs: SecureBytes, ci: [UInt8], sid: [UInt8], ad: [UInt8]) throws {
      try self.init(role: role, prs: prs, ci: ci, sid: sid, ad: ad, scalar: try CPaceGroup.sampleScalar())
    }

    /// The deterministic seam for the vectors: the scalar is given (32
    /// bytes, little-endian) instead of sampled. A scalar must never be
    /// used twice; only vectors and benchmarks call this.
    package init(role: Role, prs: SecureBytes, ci: [UInt8], sid: [UInt8], ad: [UInt8], scalar: SecureBytes) throws {
      try CPace.checkInputs(prs: prs, ci: ci, sid: sid, ad: ad)
      guard scalar.count == CPaceGroup.elementByteCount else {
        throw TaskCryptoError.cpaceInvalidInput("the scalar must be 32 bytes")
      }
      let (_, g) = try CPaceGroup.generator(prs: prs, ci: ci, sid: sid)
      self.message = try CPaceGroup.scalarMult(scalar, g)
      self.role = role
      self.ad = ad
      self.sid = sid
      self.scalar = scalar
    }

    /// Finishes the run with the peer's message and associated data:
    /// K = scalar_mult_vfy(y, peer), then the ISK over the role's transcript,
    /// and the confirmation tags. Wipes the scalar, whatever the outcome.
    ///
    /// - Parameters:
    ///   - peerMessage: the 32 bytes the peer sent.
    ///   - peerAD: the associated data the peer sent (at most 4096 bytes).
    /// - Returns: the session keys: the ISK, this side's tag, the check of
    ///   the peer's tag.
    /// - Throws: `TaskCryptoError.cpaceMessageLength`, `.cpaceInvalidPoint`,
    ///   `.cpaceIdentityPoint`, `.cpaceReflectedMessage` (the peer sent this
    ///   party's own message back), `.cpaceInvalidInput` (peer AD too long),
    ///   `.cpaceFinished` (the party was already finished).
    public func finish(peerMessage: [UInt8], peerAD: [UInt8]) throws -> SessionKeys {
      guard let scalar else { throw TaskCryptoError.cpaceFinished }
      self.scalar = nil
      let k = try CPaceGroup.scalarMultVerify(scalar, peer: peerMessage)
      guard peerMessage != message else { throw TaskCryptoError.cpaceReflectedMessage }
      try CPace.checkLength(peerAD, "the peer's associated data")
      let transcript: [UInt8]
      switch role {
      case .initiator: transcript = CPaceGroup.transcriptIR(message, ad, peerMessage, peerAD)
      case .responder: transcript = CPaceGroup.transcriptIR(peerMessage, peerAD, message, ad)
      case .symmetric: transcript = CPaceGroup.transcriptOC(message, ad, peerMessage, peerAD)
      }
      let isk = try CPaceGroup.intermediateSessionKey(sid: sid, k: k, transcript: transcript)
      return try SessionKeys(
        isk: isk, sid: sid, own: CPaceGroup.lengthValue(message, ad), peer: CPaceGroup.lengthValue(peerMessage, peerAD),
        transcript: transcript)
    }
  }

  /// `lv_cat(parts...)` of the draft: each part with its LEB128 length in
  /// front, for an application's channel identifier (pairing's CI).
  public static func lengthValueConcatenation(_ parts: [[UInt8]]) -> [UInt8] {
    parts.flatMap { CPaceGroup.lengthPrefix($0.count) + $0 }
  }

  static func checkInputs(prs: SecureBytes, ci: [UInt8], sid: [UInt8], ad: [UInt8]) throws {
    guard prs.count > 0 else { throw TaskCryptoError.cpaceInvalidInput("the PRS is empty") }
    guard prs.count <= maximumInputByteCount else {
      throw TaskCryptoError.cpaceInvalidInput("the PRS is over \(maximumInputByteCount) bytes")
    }
    try checkLength(ci, "the channel identifier")
    try checkLength(sid, "the session identifier")
    try checkLength(ad, "the associated data")
  }

  static func checkLength(_ bytes: [UInt8], _ what: String) throws {
    guard bytes.count <= maximumInputByteCount else {
      throw TaskCryptoError.cpaceInvalidInput("\(what) is \(bytes.count) bytes, over \(maximumInputByteCount)")
    }
  }
}
