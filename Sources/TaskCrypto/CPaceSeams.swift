extension CPace {
  /// The package seam for the vector checker: `generator_string`, its
  /// SHA-512 and the encoded generator g. All three are secret (each allows
  /// an offline search for the PRS), so only the checker sees them.
  package static func generatorForCheck(
    prs: SecureBytes, ci: [UInt8], sid: [UInt8]
  ) throws -> (string: [UInt8], hash: [UInt8], g: [UInt8]) {
    let parts = CPaceGroup.generatorStringParts(prsByteCount: prs.count, ci: ci, sid: sid)
    let (hash, g) = try CPaceGroup.generator(prs: prs, ci: ci, sid: sid)
    return (
      parts.head + prs.withUnsafeBytes { Array($0) } + parts.tail, hash.withUnsafeBytes { Array($0) },
      g.withUnsafeBytes { Array($0) }
    )
  }

  /// The package seam for the vector checker: `scalar_mult_vfy(scalar,
  /// peer)` with the receiving side's refusals, giving K (which a party
  /// never exposes).
  package static func sharedPointForCheck(scalar: SecureBytes, peer: [UInt8]) throws -> [UInt8] {
    try CPaceGroup.scalarMultVerify(scalar, peer: peer).withUnsafeBytes { Array($0) }
  }

  /// The package seam for the vector checker: `transcript_ir` and
  /// `transcript_oc` of two messages and their associated data.
  package static func transcriptsForCheck(
    _ ya: [UInt8], _ ada: [UInt8], _ yb: [UInt8], _ adb: [UInt8]
  ) -> (ir: [UInt8], oc: [UInt8]) {
    (CPaceGroup.transcriptIR(ya, ada, yb, adb), CPaceGroup.transcriptOC(ya, ada, yb, adb))
  }

  /// The package seam for the vector checker: mac_key and the two
  /// confirmation tags (§10.4) for a given ISK, as `SessionKeys` makes them.
  package static func confirmationTagsForCheck(
    sid: [UInt8], isk: SecureBytes, initiator: [UInt8], initiatorAD: [UInt8], responder: [UInt8],
    responderAD: [UInt8]
  ) throws -> (macKey: [UInt8], initiator: [UInt8], responder: [UInt8]) {
    let macKey = try SessionKeys.macKey(sid: sid, isk: isk)
    return macKey.withUnsafeBytes {
      (
        Array($0), tag(key: $0, CPaceGroup.lengthValue(initiator, initiatorAD)),
        tag(key: $0, CPaceGroup.lengthValue(responder, responderAD))
      )
    }
  }
}
