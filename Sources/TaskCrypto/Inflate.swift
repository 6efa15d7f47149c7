/// A small zlib (RFC 1950) and DEFLATE (RFC 1951) decoder, after Mark
/// Adler's `puff`, for reading the published chunked-encryption test
/// vectors, whose ciphertexts are zlib-compressed. It is not used on any
/// attachment or key path. Output is capped so a hostile file cannot
/// exhaust memory.
struct Inflate {
  /// Why a stream could not be decoded.
  struct Failure: Error, Equatable {
    /// What was wrong.
    let reason: String
  }

  private let input: [UInt8]
  private var position = 0
  private var bitBuffer: UInt32 = 0
  private var bitCount = 0
  private var output: [UInt8] = []
  private let limit: Int

  private init(_ input: [UInt8], limit: Int) {
    self.input = input
    self.limit = limit
  }

  /// Decodes a zlib stream (header, DEFLATE blocks, Adler-32 checked).
  ///
  /// - Throws: `Failure` for a malformed stream, a wrong checksum, or
  ///   output above `limit` bytes.
  static func zlib(_ bytes: [UInt8], limit: Int = 64 << 20) throws -> [UInt8] {
    guard bytes.count >= 6, bytes[0] & 0x0f == 8, (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0,
      bytes[1] & 0x20 == 0
    else { throw Failure(reason: "not a zlib stream") }
    var decoder = Inflate(Array(bytes[2...]), limit: limit)
    try decoder.blocks()
    let end = 2 + decoder.position
    guard bytes.count >= end + 4 else { throw Failure(reason: "missing Adler-32") }
    let stored = bytes[end..<(end + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard stored == adler32(decoder.output) else { throw Failure(reason: "Adler-32 mismatch") }
    return decoder.output
  }

  static func adler32(_ bytes: [UInt8]) -> UInt32 {
    var a: UInt32 = 1
    var b: UInt32 = 0
    var index = 0
    while index < bytes.count {
      let end = Swift.min(index + 5552, bytes.count)
      while index < end {
        a &+= UInt32(bytes[index])
        b &+= a
        index += 1
      }
      a %= 65521
      b %= 65521
    }
    return b << 16 | a
  }

  private mutating func bits(_ need: Int) throws -> Int {
    while bitCount < need {
      guard position < input.count else { throw Failure(reason: "unexpected end of data") }
      bitBuffer |= UInt32(input[position]) << UInt32(bitCount)
      position += 1
      bitCount += 8
    }
    let value = Int(bitBuffer & ((1 << UInt32(need)) - 1))
    bitBuffer >>= UInt32(need)
    bitCount -= need
    return value
  }

  /// A canonical Huffman code: symbol counts per length and symbols in order.
  private struct Huffman {
    var counts = [Int](repeating: 0, count: 16)
    var symbols: [Int]

    init(lengths: [Int]) throws {
      symbols = [Int](repeating: 0, count: lengths.count)
      for length in lengths { counts[length] += 1 }
      var left = 1
      for length in 1..<16 {
        left = left * 2 - counts[length]
        guard left >= 0 else { throw Failure(reason: "over-subscribed Huffman code") }
      }
      var offsets = [Int](repeating: 0, count: 16)
      for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
      for (symbol, length) in lengths.enumerated() where length != 0 {
        symbols[offsets[length]] = symbol
        offsets[length] += 1
      }
    }
  }

  private mutating func decode(_ code: Huffman) throws -> Int {
    var value = 0
    var first = 0
    var index = 0
    for length in 1..<16 {
      value |= try bits(1)
      let count = code.counts[length]
      if value - count < first { return code.symbols[index + (value - first)] }
      index += count
      first = (first + count) << 1
      value <<= 1
    }
    throw Failure(reason: "invalid Huffman code")
  }

  private static let lengthBase = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
  ]
  private static let lengthExtra = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
  ]
  private static let distanceBase = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
    6145, 8193, 12_289, 16_385, 24_577,
  ]
  private static let distanceExtra = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
  ]

  private mutating func blocks() throws {
    var last = false
    while !last {
      last = try bits(1) == 1
      switch try bits(2) {
      case 0: try stored()
      case 1:
        let lengths =
          [Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112)
          + [Int](repeating: 7, count: 24) + [Int](repeating: 8, count: 8)
        try codes(
          literals: try Huffman(lengths: lengths), distances: try Huffman(lengths: [Int](repeating: 5, count: 30)))
      case 2: try dynamic()
      default: throw Failure(reason: "invalid block type")
      }
    }
    // Drop the partial byte; the Adler-32 starts on a byte boundary.
    bitBuffer = 0
    bitCount = 0
  }

  private mutating func stored() throws {
    bitBuffer = 0
    bitCount = 0
    guard position + 4 <= input.count else { throw Failure(reason: "unexpected end of data") }
    let length = Int(input[position]) | Int(input[position + 1]) << 8
    let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
    guard length == ~complement & 0xffff else { throw Failure(reason: "stored block length mismatch") }
    position += 4
    guard position + length <= input.count else { throw Failure(reason: "unexpected end of data") }
    guard output.count + length <= limit else { throw Failure(reason: "output above \(limit) bytes") }
    output += input[position..<(position + length)]
    position += length
  }

  private mutating func dynamic() throws {
    let literalCount = try bits(5) + 257
    let distanceCount = try bits(5) + 1
    let codeCount = try bits(4) + 4
    guard literalCount <= 286, distanceCount <= 30 else { throw Failure(reason: "bad code counts") }
    let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
    var codeLengths = [Int](repeating: 0, count: 19)
    for index in 0..<codeCount { codeLengths[order[index]] = try bits(3) }
    let lengthCode = try Huffman(lengths: codeLengths)
    var lengths = [Int]()
    while lengths.count < literalCount + distanceCount {
      let symbol = try decode(lengthCode)
      switch symbol {
      case 0..<16: lengths.append(symbol)
      case 16:
        guard let previous = lengths.last else { throw Failure(reason: "repeat with no previous length") }
        lengths += [Int](repeating: previous, count: 3 + (try bits(2)))
      case 17: lengths += [Int](repeating: 0, count: 3 + (try bits(3)))
      default: lengths += [Int](repeating: 0, count: 11 + (try bits(7)))
      }
    }
    guard lengths.count == literalCount + distanceCount else { throw Failure(reason: "too many lengths") }
    try codes(
      literals: try Huffman(lengths: Array(lengths[..<literalCount])),
      distances: try Huffman(lengths: Array(lengths[literalCount...])))
  }

  private mutating func codes(literals: Huffman, distances: Huffman) throws {
    while true {
      let symbol = try decode(literals)
      if symbol < 256 {
        guard output.count < limit else { throw Failure(reason: "output above \(limit) bytes") }
        output.append(UInt8(symbol))
        continue
      }
      if symbol == 256 { return }
      let lengthIndex = symbol - 257
      guard lengthIndex < 29 else { throw Failure(reason: "invalid length symbol") }
      let length = Self.lengthBase[lengthIndex] + (try bits(Self.lengthExtra[lengthIndex]))
      let distanceIndex = try decode(distances)
      guard distanceIndex < 30 else { throw Failure(reason: "invalid distance symbol") }
      let distance = Self.distanceBase[distanceIndex] + (try bits(Self.distanceExtra[distanceIndex]))
      guard distance <= output.count else { throw Failure(reason: "distance too far back") }
      guard output.count + length <= limit else { throw Failure(reason: "output above \(limit) bytes") }
      let start = output.count - distance
      for offset in 0..<length { output.append(output[start + offset]) }
    }
  }
}
