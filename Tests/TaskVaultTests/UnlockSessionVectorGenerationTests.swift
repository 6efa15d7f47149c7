import Foundation
import TaskKeyTestSupport
import Testing

@testable import TaskCrypto
@testable import TaskKeyVectors
@testable import TaskVault

/// The generator of `Vectors/unlock-session-v2.json`. The files are built
/// byte by byte from docs/formats/unlock-session.md (not with the code under
/// test), with fixed keys and nonces; each case's outcome is written by
/// hand from the spec's reading steps.
@Suite("Unlock session vectors")
struct UnlockSessionVectorGenerationTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let url = root.appendingPathComponent("Vectors/unlock-session-v2.json")

  static func bytes(_ byte: UInt8, _ count: Int) -> [UInt8] { [UInt8](repeating: byte, count: count) }
  static func u64(_ value: Int64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (56 - 8 * $0)) }
  }
  static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

  static let (boot, otherBoot) = (bytes(0xb0, 16), bytes(0xb1, 16))
  static let (unlockedAt, now): (Int64, Int64) = (1_800_000_000, 1_800_000_100)
  static let master = bytes(0x4d, 32)
  static let (sessionKey, otherSessionKey) = (bytes(0x5e, 32), bytes(0x5f, 32))

  /// The vault file's bytes 0..<121 (`Vectors/vault-v1/vault.tkv`).
  static func header() throws -> [UInt8] {
    Array(try Data(contentsOf: root.appendingPathComponent("Vectors/vault-v1/vault.tkv")).prefix(121))
  }

  /// DWK = HMAC-SHA256(MK_1, "TaskKey device-only wrap key v1" || vault id).
  static func wrapKey(_ vaultID: [UInt8]) throws -> [UInt8] {
    HMACSHA256.authenticationCode(
      for: Array("TaskKey device-only wrap key v1".utf8) + vaultID,
      using: try master.withUnsafeBytes { try SymmetricKey(copying: $0) })
  }

  /// A session file: magic, version, the fields, then MK_1 || DWK sealed
  /// under `key` with the 90 bytes before it as AAD, nonce 0x0c…
  static func session(
    version: UInt8 = 2, vaultID: [UInt8], bootID: [UInt8] = boot, notAfter: Int64 = 0, digest: [UInt8],
    wrap: [UInt8], key: [UInt8] = sessionKey, magic: String = "TKUNLOCK"
  ) throws -> [UInt8] {
    let aad =
      Array(magic.utf8) + [0, version] + vaultID + bootID + u64(unlockedAt) + u64(notAfter) + digest
    let box = try AES.GCM.seal(
      master + wrap, using: try key.withUnsafeBytes { try SymmetricKey(copying: $0) }, nonce: bytes(0x0c, 12),
      authenticating: aad)
    return aad + box.combined
  }

  /// A session key file: "TKSESKEY" || boot id || SK.
  static func keyFile(bootID: [UInt8] = boot, key: [UInt8] = sessionKey, magic: String = "TKSESKEY") -> [UInt8] {
    Array(magic.utf8) + bootID + key
  }

  static func makeFile() throws -> UnlockSessionVectors.File {
    let header = try header()
    let vaultID = Array(header[10..<26])
    let digest = SHA256.hash(data: header).bytes
    let wrap = try wrapKey(vaultID)
    let good = try session(vaultID: vaultID, digest: digest, wrap: wrap)
    var tests = [UnlockSessionVectors.Case]()
    func add(
      _ comment: String, session: [UInt8]? = good, keyFile: [UInt8]? = keyFile(), next: [UInt8]? = nil,
      now: Int64 = now, locked reason: String? = nil, tampered: Bool = false, notAfter: Int64 = 0
    ) {
      let valid = reason == nil && !tampered
      tests.append(
        .init(
          id: tests.count + 1, comment: comment, bootID: hex(boot), now: now, session: session.map(hex),
          keyFile: keyFile.map(hex), keyFileNext: next.map(hex), result: valid ? "valid" : "invalid",
          error: valid ? nil : (tampered ? "tampered" : "locked"), reason: reason,
          masterKey: valid ? hex(master) : nil, deviceWrapKey: valid ? hex(wrap) : nil,
          notAfter: valid ? notAfter : nil))
    }
    add("an unlock until reboot or lock opens to MK_1 and DWK")
    let timed = try session(vaultID: vaultID, notAfter: now + 1, digest: digest, wrap: wrap)
    add("a timed unlock one second before its end opens", session: timed, notAfter: now + 1)
    add("only the .next key file (an unlock between its two renames) opens", keyFile: nil, next: keyFile())
    add(
      "the key file of an older unlock does not open; .next does", keyFile: keyFile(key: otherSessionKey),
      next: keyFile())
    add("step 1: no session file", session: nil, locked: "not_unlocked")
    add("step 2: a session file of 181 bytes", session: Array(good.dropLast()), locked: "not_unlocked")
    add("step 2: a session file of 183 bytes", session: good + [0], locked: "not_unlocked")
    add(
      "step 2: another magic, sealed consistently",
      session: try session(vaultID: vaultID, digest: digest, wrap: wrap, magic: "TKUNLOCX"), locked: "not_unlocked")
    add(
      "step 2: version 1, sealed consistently (version 1 is no longer read)",
      session: try session(version: 1, vaultID: vaultID, digest: digest, wrap: wrap), locked: "not_unlocked")
    add(
      "step 2: version 3, sealed consistently",
      session: try session(version: 3, vaultID: vaultID, digest: digest, wrap: wrap), locked: "not_unlocked")
    let otherVault = vaultID.map { $0 ^ 0xff }
    add(
      "step 2: the session of another vault, sealed consistently",
      session: try session(vaultID: otherVault, digest: digest, wrap: try wrapKey(otherVault)), locked: "not_unlocked")
    add(
      "step 3: another boot id (the machine restarted), key file of this boot",
      session: try session(vaultID: vaultID, bootID: otherBoot, digest: digest, wrap: wrap),
      locked: "machine_restarted")
    var tagged = good
    tagged[181] ^= 0x01
    var restartedAndBroken = try session(vaultID: vaultID, bootID: otherBoot, digest: digest, wrap: wrap)
    restartedAndBroken[181] ^= 0x01
    add(
      "step 3 before step 6: another boot id and a broken tag", session: restartedAndBroken,
      locked: "machine_restarted")
    add("step 4: 'not after' equal to now", session: timed, now: now + 1, locked: "expired")
    add("step 4 before step 5: expired and no key file", session: timed, keyFile: nil, now: now + 2, locked: "expired")
    add("step 5: no key file and no .next", keyFile: nil, locked: "session_key_gone")
    add("step 5: a key file of another boot", keyFile: keyFile(bootID: otherBoot), locked: "session_key_gone")
    add("step 5: a key file of 55 bytes", keyFile: Array(keyFile().dropLast()), locked: "session_key_gone")
    add("step 5: a key file of 57 bytes", keyFile: keyFile() + [0], locked: "session_key_gone")
    add("step 5: a key file with another magic", keyFile: keyFile(magic: "TKSESKEX"), locked: "session_key_gone")
    add(
      "step 6: a key file with another session key", keyFile: keyFile(key: otherSessionKey),
      locked: "session_key_mismatch")
    add("step 6: the last tag byte changed", session: tagged, locked: "session_key_mismatch")
    var later = good
    later[49] ^= 0x01
    add(
      "step 6: 'unlocked at' changed (it is in the AAD)", session: later, locked: "session_key_mismatch")
    var undated = good
    undated.replaceSubrange(50..<58, with: u64(now + 1000))
    add(
      "step 6: 'not after' changed from 0 to later (it is in the AAD; step 4 passes)", session: undated,
      locked: "session_key_mismatch")
    add(
      "step 7: made for another header (the vault header was edited since unlock)",
      session: try session(vaultID: vaultID, digest: SHA256.hash(data: header + [0]).bytes, wrap: wrap),
      tampered: true)
    add(
      "step 8: a DWK that MK_1 does not derive, sealed consistently",
      session: try session(vaultID: vaultID, digest: digest, wrap: bytes(0xd0, 32)), locked: "session_inconsistent")
    // The .next key file passes the same checks as the key file (step 5).
    add(
      "step 5: no key file and a .next of another boot", keyFile: nil, next: keyFile(bootID: otherBoot),
      locked: "session_key_gone")
    add("step 5: no key file and a .next of 57 bytes", keyFile: nil, next: keyFile() + [0], locked: "session_key_gone")
    add(
      "step 5: no key file and a .next with another magic", keyFile: nil, next: keyFile(magic: "TKSESKEX"),
      locked: "session_key_gone")
    add(
      "step 6: an older key file and a .next of another boot holding the right key: only the key file is usable",
      keyFile: keyFile(key: otherSessionKey), next: keyFile(bootID: otherBoot), locked: "session_key_mismatch")
    add(
      "step 2: a session file of 4096 bytes beginning with a good session", session: good + bytes(0, 4096 - 182),
      locked: "not_unlocked")
    return .init(
      format: UnlockSessionVectors.format, version: UnlockSessionVectors.version,
      description:
        "The unlock session (docs/formats/unlock-session.md, 'Reading'). For each case, the vault file's first "
        + "121 bytes are 'vault_header', the current boot id is 'boot_id', the clock says 'now'; the session file, "
        + "the session key file and its '.next' are the given bytes (absent when missing). Valid cases open to "
        + "'master_key' and 'device_wrap_key' with 'not_after'; invalid ones give 'error' ('locked' with 'reason', "
        + "or 'tampered').",
      vaultHeader: hex(header), tests: tests)
  }

  @Test func unlockSessionVectorsMatchTheCommittedFile() throws {
    #expect(
      try CommittedVectors.drifted(json: Self.makeFile(), name: "unlock-session-v2.json").isEmpty,
      "Vectors/unlock-session-v2.json drifted; run 'make vectors'")
  }

  @Test func everyCaseGivesItsOutcomeAndAWrongExpectationFails() throws {
    let result = try #require(try UnlockSessionVectors.check(JSONEncoder().encode(Self.makeFile())))
    #expect(result.failures.isEmpty, "\(result.failures)")
    #expect(result.cases == 31)
    var broken = try Self.makeFile()
    broken.tests[0].notAfter = 1
    broken.tests[4].reason = "expired"
    broken.tests[24].error = "locked"
    let brokenResult = try #require(try UnlockSessionVectors.check(JSONEncoder().encode(broken)))
    #expect(brokenResult.failures.count == 3, "\(brokenResult.failures)")
  }
}
