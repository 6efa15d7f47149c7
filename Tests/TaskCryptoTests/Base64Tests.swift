import Foundation
import Testing

@testable import TaskCrypto

@Suite("Canonical base64")
struct Base64Tests {
  @Test(arguments: [
    ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
    ("foobar", "Zm9vYmFy"),
  ])
  func rfc4648ExamplesRoundTrip(plain: String, encoded: String) {
    #expect(Base64.encode(Array(plain.utf8)) == encoded)
    #expect(Base64.decode(encoded) == Array(plain.utf8))
  }

  @Test(arguments: [
    "QR==",  // non-zero trailing bits: QQ== is the one spelling of "A"
    "Zm9=",  // non-zero trailing bits
    "Zg",  // missing padding
    "Zg=",  // short padding
    "Zg===",  // extra padding
    "Zm9v\n",  // trailing newline
    " Zm9v",  // leading space
    "Zm 9v",  // inner space
    "Zm-v",  // URL-safe alphabet
    "Zm_v",  // URL-safe alphabet
    "Z===",  // padding where data must be
    "=Zm9",  // padding first
    "Zg==Zg==",  // padding in the middle
    "Zm9vé===",  // non-ASCII
  ])
  func nonCanonicalSpellingsAreRefused(text: String) {
    #expect(Base64.decode(text) == nil)
  }

  @Test func randomBytesRoundTripAtEveryLength() {
    for length in 0..<100 {
      let bytes = SecureRandom.bytes(count: length)
      #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }
  }

  /// The decoder's main loop stores 8 bytes to write 6 and its group loop 4
  /// to write 3 (issue 24): neither may reach past the decoded length.
  @Test func decodingWritesExactlyTheDecodedLengthAndNothingPastIt() {
    for length in 1..<130 {
      let bytes = SecureRandom.bytes(count: length)
      let text = Array(Base64.encode(bytes).utf8)
      var out = [UInt8](repeating: 0xa5, count: length + 16)
      let decoded = text.withUnsafeBytes { text in
        out.withUnsafeMutableBufferPointer { Base64.decode(text, into: $0.baseAddress!) }
      }
      #expect(decoded)
      #expect(Array(out[..<length]) == bytes)
      #expect(out[length...].allSatisfy { $0 == 0xa5 }, "length \(length)")
    }
  }

  /// Every byte outside the alphabet is refused wherever it stands: in
  /// either character of a pair the main loop reads, in the group loop and
  /// in the last group.
  @Test func everyByteOutsideTheAlphabetIsRefusedAtEveryPosition() {
    let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    for length in [45, 46, 47] {
      let text = Array(Base64.encode(SecureRandom.bytes(count: length)).utf8)
      for position in text.indices where text[position] != UInt8(ascii: "=") {
        var bad = text
        // '=' in the last two places can be padding: a canonical text of its own.
        for byte in UInt8.min...UInt8.max
        where !alphabet.contains(byte) && !(byte == UInt8(ascii: "=") && position >= text.count - 2) {
          bad[position] = byte
          let refused = bad.withUnsafeBytes { Base64.decode($0) } == nil
          #expect(refused, "byte \(byte) at \(position) of \(text.count)")
          if !refused { return }
        }
      }
    }
  }

  /// The SSSE3 loops (issue 24) against an independent codec, Foundation's,
  /// at every length to 300 bytes: both directions agree byte for byte,
  /// so the encoder and decoder cannot share a mistake that a round trip
  /// would hide.
  @Test func encoderAndDecoderAgreeWithFoundationAtEveryLength() {
    for length in 0...300 {
      let bytes = SecureRandom.bytes(count: length)
      let reference = Data(bytes).base64EncodedString()
      #expect(Base64.encode(bytes) == reference, "length \(length)")
      #expect(Base64.decode(reference) == bytes, "length \(length)")
    }
  }
}
