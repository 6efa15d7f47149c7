import Testing

@testable import TaskCrypto

@Suite("Keyring and key files")
struct KeyringTests {
  @Test func rotatedKeyringSealsWithTheNewKeyAndOpensOldValues() throws {
    var keyring = try Keyring.generate()
    let first = keyring.primary.id
    let old = try SealedValue.seal("old note", using: keyring, context: "c")
    let newKey = try keyring.rotate()
    #expect(keyring.primaryID == newKey.id)
    #expect(newKey.id != first)
    let new = try SealedValue.seal("new note", using: keyring, context: "c")
    #expect(new.hasPrefix("tc1.\(newKey.id.hex):"))
    #expect(try SealedValue.open(old, using: keyring, context: "c") == "old note")
    #expect(try SealedValue.open(new, using: keyring, context: "c") == "new note")
  }

  @Test func retiringTheOldKeyMakesItsValuesUnknownNotPlain() throws {
    var keyring = try Keyring.generate()
    let first = keyring.primaryID
    let old = try SealedValue.seal("old note", using: keyring)
    try keyring.rotate()
    try keyring.retire(first)
    #expect(keyring.key(for: first) == nil)
    #expect(throws: TaskCryptoError.unknownKeyID(first)) { try SealedValue.open(old, using: keyring) }
  }

  @Test func thePrimaryCannotBeRetired() throws {
    var keyring = try Keyring.generate()
    #expect(throws: TaskCryptoError.cannotRetirePrimary(keyring.primaryID)) { try keyring.retire(keyring.primaryID) }
  }

  @Test func unknownIDsAreRefusedByPromoteAndRetire() throws {
    var keyring = try Keyring.generate()
    let absent = KeyID(rawValue: keyring.primaryID.rawValue &+ 1)
    #expect(throws: TaskCryptoError.unknownKeyID(absent)) { try keyring.promote(absent) }
    #expect(throws: TaskCryptoError.unknownKeyID(absent)) { try keyring.retire(absent) }
  }

  @Test func duplicateIDsAreRefused() throws {
    var keyring = try Keyring.generate()
    let twin = NoteKey(id: keyring.primaryID, key: try SymmetricKey.generate())
    #expect(throws: TaskCryptoError.duplicateKeyID(twin.id)) { try keyring.add(twin) }
    #expect(throws: TaskCryptoError.duplicateKeyID(twin.id)) {
      try Keyring(keys: [keyring.primary, twin], primaryID: twin.id)
    }
  }

  @Test func promoteSwitchesTheSealingKey() throws {
    var keyring = try Keyring.generate()
    let first = keyring.primaryID
    try keyring.rotate()
    try keyring.promote(first)
    #expect(try SealedValue.seal("x", using: keyring).hasPrefix("tc1.\(first.hex):"))
  }

  @Test func keyIDsParseOnlyEightLowercaseHexDigits() throws {
    #expect(try KeyID(hex: "0a0b0c0d").rawValue == 0x0a0b_0c0d)
    #expect(KeyID(rawValue: 0xdead_beef).hex == "deadbeef")
    for bad in ["0A0B0C0D", "0a0b0c0", "0a0b0c0d0", "0a0b0c0g", "", " 0a0b0c0d"] {
      #expect(throws: TaskCryptoError.invalidKeyID(bad)) { try KeyID(hex: bad) }
    }
  }

  @Test func keyFileLinesRoundTrip() throws {
    let key = try NoteKey.generate()
    let line = try key.keyFileBytes()
    let parsed = try line.withUnsafeBytes { try NoteKey.parseKeyFile($0) }
    #expect(parsed == key)
    let withoutNewline = try line.withUnsafeBytes {
      try NoteKey.parseKeyFile(UnsafeRawBufferPointer(rebasing: $0.dropLast()))
    }
    #expect(withoutNewline == key)
  }

  @Test(arguments: [
    ("", "expected 73 characters"),
    ("0a0b0c0d:" + String(repeating: "00", count: 32) + "\n\n", "expected 73 characters"),
    ("0a0b0c0d:" + String(repeating: "00", count: 32) + "\r\n", "expected 73 characters"),
    ("0a0b0c0d;" + String(repeating: "00", count: 32), "must be ':'"),
    ("0A0B0C0D:" + String(repeating: "00", count: 32), "key id is not 8 lowercase hex"),
    ("0a0b0c0d:" + String(repeating: "AB", count: 32), "key is not 64 lowercase hex"),
    ("0a0b0c0d:" + String(repeating: "0", count: 63) + " ", "key is not 64 lowercase hex"),
  ])
  func malformedKeyFilesNameTheirDefect(contents: String, reason: String) {
    let bytes = Array(contents.utf8)
    do {
      _ = try bytes.withUnsafeBytes { try NoteKey.parseKeyFile($0) }
      Issue.record("accepted a malformed key file")
    } catch let TaskCryptoError.malformedKeyFile(message) {
      #expect(message.contains(reason))
      #expect(!message.contains("ABAB"))
    } catch {
      Issue.record("unexpected error \(error)")
    }
  }
}

@Suite("Re-sealing for rotation")
struct ResealTests {
  @Test func resealMovesOldValuesToThePrimaryAndKeepsCurrentOnes() throws {
    var keyring = try Keyring.generate()
    let old = try SealedValue.seal("old", using: keyring, context: "c")
    try keyring.rotate()
    let moved = try SealedValue.reseal(old, using: keyring, context: "c")
    #expect(moved.changed)
    #expect(try SealedValue.keyID(of: moved.value) == keyring.primaryID)
    #expect(try SealedValue.open(moved.value, using: keyring, context: "c") == "old")
    let again = try SealedValue.reseal(moved.value, using: keyring, context: "c")
    #expect(!again.changed)
    #expect(again.value == moved.value)
  }

  @Test func plainValuesStayPlainUnlessAsked() throws {
    let keyring = try Keyring.generate()
    #expect(try SealedValue.reseal("plain", using: keyring) == ("plain", false))
    let sealed = try SealedValue.reseal("plain", using: keyring, context: "c", sealingPlain: true)
    #expect(sealed.changed)
    #expect(try SealedValue.open(sealed.value, using: keyring, context: "c") == "plain")
  }

  @Test func aValueThatDoesNotOpenIsAnErrorNotPassedThrough() throws {
    let keyring = try Keyring.generate()
    let sealed = try SealedValue.seal("x", using: keyring, context: "a")
    #expect(throws: TaskCryptoError.authenticationFailed) {
      try SealedValue.reseal(sealed, using: keyring, context: "b")
    }
    #expect(throws: TaskCryptoError.unsupportedVersion("2")) { try SealedValue.keyID(of: "tc2.00000000:AAAA") }
    #expect(try SealedValue.keyID(of: "plain") == nil)
  }
}
