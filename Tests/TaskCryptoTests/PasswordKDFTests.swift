import Testing

@testable import TaskCrypto

@Suite("PasswordKDF: Argon2id through libsodium")
struct PasswordKDFTests {
  func secret(_ bytes: [UInt8]) throws -> SecureBytes {
    try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
  }

  /// libsodium's own known answer (test/default/pwhash_argon2id.c, tv case 6:
  /// t = 1, memlimit 1631659 bytes = 1593 KiB, 231-byte output), which pins
  /// the passes, the KiB unit and the algorithm id.
  @Test func matchesLibsodiumsKnownAnswer() throws {
    let passphrase = try secret(Hex.decode("b540beb016a5366524d4605156493f9874514a5aa58818cd0c6dfffaa9e90205f17b")!)
    let salt = Hex.decode("44071f6d181561670bda728d43fb79b4")!
    let output = try PasswordKDF.deriveBytes(
      from: passphrase, salt: salt, parameters: .init(opsLimit: 1, memoryKiB: 1593), byteCount: 231)
    let expected =
      "7fb72409b0987f8190c3729710e98c3f80c5a8727d425fdcde7f3644d467fe973f5b5fee683bd3fce812cb9ae5e9921a2d06c2f19"
      + "05e4e839692f2b934b682f11a2fe2b90482ea5dd234863516dba6f52dc0702d324ec77d860c2e181f84472bd7104fedce071ffa"
      + "93c5309494ad51623d214447a7b2b1462dc7d5d55a1f6fd5b54ce024118d86f0c6489d16545aaa87b6689dad9f2fb47fda9894f"
      + "8e12b87d978b483ccd4cc5fd9595cdc7a818452f915ce2f7df95ec12b1c72e3788d473441d884f9748eb14703c21b45d82fd667"
      + "b85f5b2d98c13303b3fe76285531a826b6fc0fe8e3dddecf"
    #expect(output.withUnsafeBytes { Hex.encode($0) } == expected)
  }

  @Test func sameInputsGiveTheSameKeyAndAnotherSaltOrCostAnother() throws {
    let passphrase = try secret(Array("correct horse".utf8))
    let salt = [UInt8](repeating: 7, count: 16)
    let fast = PasswordKDF.Parameters(opsLimit: 1, memoryKiB: 8192)
    let one = try PasswordKDF.deriveKey(from: passphrase, salt: salt, parameters: fast)
    #expect(one == (try PasswordKDF.deriveKey(from: passphrase, salt: salt, parameters: fast)))
    let twoPasses = PasswordKDF.Parameters(opsLimit: 2, memoryKiB: 8192)
    #expect(one != (try PasswordKDF.deriveKey(from: passphrase, salt: salt, parameters: twoPasses)))
    #expect(one != (try PasswordKDF.deriveKey(from: passphrase, salt: [8] + salt.dropFirst(), parameters: fast)))
  }

  @Test func costsSaltPassphraseAndOutputOutsideTheLimitsAreRefusedBeforeAnyWork() throws {
    let passphrase = try secret(Array("p".utf8))
    let salt = [UInt8](repeating: 0, count: 16)
    let cases: [(PasswordKDF.Parameters, [UInt8], Int)] = [
      (.init(opsLimit: 0, memoryKiB: 8192), salt, 32),
      (.init(opsLimit: 65, memoryKiB: 8192), salt, 32),
      (.init(opsLimit: 1, memoryKiB: 7), salt, 32),
      (.init(opsLimit: 1, memoryKiB: UInt32.max), salt, 32),
      (.init(opsLimit: 1, memoryKiB: 8192), [UInt8](repeating: 0, count: 15), 32),
      (.init(opsLimit: 1, memoryKiB: 8192), salt, 15),
      (.init(opsLimit: 1, memoryKiB: 8192), salt, 257),
    ]
    for (parameters, salt, count) in cases {
      #expect(throws: TaskCryptoError.self) {
        _ = try PasswordKDF.deriveBytes(from: passphrase, salt: salt, parameters: parameters, byteCount: count)
      }
    }
    let empty = try SecureBytes(zeroedCount: 0)
    let long = try SecureBytes(zeroedCount: 1025)
    for bad in [empty, long] {
      #expect(throws: TaskCryptoError.self) {
        _ = try PasswordKDF.deriveKey(from: bad, salt: salt, parameters: .init(opsLimit: 1, memoryKiB: 8192))
      }
    }
  }
}
