import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import TaskVault

/// docs/formats/vault-file.md, "Passphrase bytes": UTF-8 with a non-ASCII
/// byte is put in NFC before the KDF; ASCII and non-UTF-8 bytes are kept.
@Suite("Passphrase bytes")
struct PassphraseBytesTests {
  let machine: TestMachine

  init() throws {
    machine = try TestMachine()
  }

  func kdfInput(_ bytes: [UInt8]) throws -> [UInt8] {
    try PassphraseBytes.kdfInput(try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }).withUnsafeBytes {
      Array($0)
    }
  }

  @Test func composedAndDecomposedSpellingsGiveTheSameBytes() throws {
    let composed = Array("caf\u{E9} cr\u{E8}me".utf8)
    let decomposed = Array("cafe\u{301} cre\u{300}me".utf8)
    #expect(composed != decomposed)
    #expect(try kdfInput(decomposed) == composed)
    #expect(try kdfInput(composed) == composed)
    // Hangul: conjoining jamo compose to one syllable.
    #expect(try kdfInput(Array("\u{1100}\u{1161}".utf8)) == Array("\u{AC00}".utf8))
  }

  /// The standard library's NFC (what `kdfInput` uses, so the binary does
  /// not link Foundation's string code) gives Foundation's bytes for
  /// composing Latin, Greek, Vietnamese, Hangul, canonical reordering of
  /// combining marks, singletons (Ohm, Angstrom) and composition exclusions.
  @Test func normalisationMatchesFoundationsNFC() throws {
    let samples = [
      "cafe\u{301}", "A\u{30A}ngstro\u{308}m", "\u{212B}\u{2126}", "\u{1100}\u{1161}\u{11A8}",
      "a\u{323}\u{302}", "a\u{302}\u{323}", "\u{3B1}\u{313}\u{301}\u{345}", "Vie\u{323}\u{302}t Nam",
      "\u{958}\u{915}\u{93C}", "q\u{307}\u{323}", "\u{1E9B}\u{323}", "\u{F900}\u{2ADC}", "e\u{301}\u{1F600}",
      "\u{FB01}fi \u{2460} ligatures stay", "\u{D55C}\u{AE00}", "\u{1F3}\u{30C}",
    ]
    for sample in samples {
      let expected = Array(sample.precomposedStringWithCanonicalMapping.utf8)
      #expect(try kdfInput(Array(sample.utf8)) == expected, "\(sample.unicodeScalars.map { $0.value })")
    }
  }

  @Test func asciiAndNonUTF8BytesAreKeptAsTheyAre() throws {
    let ascii = Array("  correct horse\r ".utf8)
    #expect(try kdfInput(ascii) == ascii)
    let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xe9]  // "café" in ISO 8859-1: not UTF-8
    #expect(try kdfInput(latin1) == latin1)
  }

  @Test func aVaultMadeWithOneSpellingUnlocksWithTheOther() throws {
    let vault = try machine.create("cafe\u{301}")
    try vault.unlock(passphrase: secret("caf\u{E9}"))
    #expect(try vault.noteKeyring().keys.count == 1)
    try vault.lock()
    #expect(throws: TaskVaultError.wrongPassphrase) { try vault.unlock(passphrase: secret("cafe")) }
  }
}
