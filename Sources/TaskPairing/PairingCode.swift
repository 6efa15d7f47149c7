import TaskCrypto

/// The code a person reads aloud from the offering device to the joining
/// one: four words of `PairingWords` (1,295 words, about 41.3 bits), drawn
/// uniformly from the kernel's random source (docs/formats/pairing.md,
/// "The code").
///
/// CPace's password (PRS) is the four word numbers, never the spelling:
/// `ACID drum-fuzzy  quake` and `acid drum fuzzy quake` are the same code.
/// `description` never shows the words; `spoken` does, for the screen of
/// the device that offers.
public struct PairingCode: Sendable, Equatable, CustomStringConvertible {
  /// Words in a code: 4.
  public static let wordCount = 4
  /// Words in the list: 1,295.
  public static var vocabularySize: Int { PairingWords.all.count }

  /// The word numbers, each below `vocabularySize`.
  let indices: [UInt16]

  /// A code from word numbers (tests and vectors).
  init(indices: [UInt16]) {
    precondition(indices.count == Self.wordCount && indices.allSatisfy { Int($0) < PairingWords.all.count })
    self.indices = indices
  }

  /// A fresh code: each word number drawn by rejection sampling from
  /// 16-bit values of the kernel's random source, so every word is equally
  /// likely.
  ///
  public static func generate() -> PairingCode {
    let limit = UInt16(65536 / PairingWords.all.count * PairingWords.all.count)
    var indices: [UInt16] = []
    while indices.count < wordCount {
      let bytes = SecureRandom.bytes(count: 2 * wordCount)
      for offset in stride(from: 0, to: bytes.count, by: 2) where indices.count < wordCount {
        let value = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
        if value < limit { indices.append(value % UInt16(PairingWords.all.count)) }
      }
    }
    return PairingCode(indices: indices)
  }

  /// Reads a code as a person typed it: words separated by spaces, tabs or
  /// hyphens, letters in any case, nothing else.
  ///
  /// Nothing is sent before a code reads, so a typing mistake never spends
  /// the offer's one guess.
  ///
  /// - Throws: `PairingError.codeNotRead` saying which word is not in the
  ///   list (with the nearest word when one is close) or how many words
  ///   were given.
  public init(reading text: String) throws(PairingError) {
    let words = text.lowercased().split { $0 == " " || $0 == "\t" || $0 == "-" || $0 == "\n" || $0 == "\r" }
    guard words.count == Self.wordCount else {
      throw .codeNotRead("a code has \(Self.wordCount) words; \(words.count) were given")
    }
    var indices: [UInt16] = []
    for word in words {
      guard let index = PairingWords.index[String(word)] else {
        let shown = String(word.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F })
        let hint = PairingWords.nearest(to: String(word)).map { " (did you mean '\($0)'?)" } ?? ""
        throw .codeNotRead("'\(shown)' is not a word of pairing codes\(hint)")
      }
      indices.append(index)
    }
    self.init(indices: indices)
  }

  /// The words, separated by single spaces, to show and read aloud.
  public var spoken: String { indices.map { PairingWords.all[Int($0)] }.joined(separator: " ") }

  /// CPace's PRS: the word numbers as 16-bit big-endian values, 8 bytes,
  /// in locked memory.
  ///
  /// - Throws: `PairingError.crypto` when locked memory cannot be had.
  func passwordBytes() throws -> SecureBytes {
    let bytes = indices.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    return try PairingError.wrapping { try bytes.withUnsafeBytes { try SecureBytes(copying: $0) } }
  }

  /// `PairingCode(redacted)`: the words are shown only by `spoken`.
  public var description: String { "PairingCode(redacted)" }
}

extension PairingWords {
  /// Each word's number.
  static let index: [String: UInt16] = Dictionary(
    uniqueKeysWithValues: all.enumerated().map { ($0.element, UInt16($0.offset)) })

  /// The one word within edit distance 1 of `word`, if exactly one is.
  static func nearest(to word: String) -> String? {
    let near = all.filter { distanceIsAtMostOne(Array($0.utf8), Array(word.utf8)) }
    return near.count == 1 ? near[0] : nil
  }

  private static func distanceIsAtMostOne(_ first: [UInt8], _ second: [UInt8]) -> Bool {
    let (short, long) = first.count <= second.count ? (first, second) : (second, first)
    guard long.count - short.count <= 1 else { return false }
    var index = 0
    while index < short.count, short[index] == long[index] { index += 1 }
    if index == short.count { return true }
    if short.count == long.count { return Array(short[(index + 1)...]) == Array(long[(index + 1)...]) }
    return Array(short[index...]) == Array(long[(index + 1)...])
  }
}
