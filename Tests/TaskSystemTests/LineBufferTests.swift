import Foundation
import TaskKeyTestSupport
import Testing

@testable import TaskSystem

/// `LineBuffer` splits any input into the same lines whatever its reads
/// return, searches each byte once (issue 24: a long line from a pipe was
/// rescanned after every 64 KiB read), and holds at most one read past
/// its limit.
@Suite("TaskSystem line buffer")
struct LineBufferTests {
  /// Writes `bytes` to a new file and returns an open descriptor on it.
  private func input(_ bytes: [UInt8], in base: TemporaryDirectory) throws -> OpenFile {
    let path = base.path("input-\(bytes.count)-\(UInt32.random(in: 0...UInt32.max))")
    #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    return try OpenFile.reading(path)
  }

  private func lines(of file: OpenFile, limit: Int, readSize: Int) throws -> (lines: [[UInt8]], buffer: LineBuffer) {
    let buffer = LineBuffer(limit: limit, readSize: readSize)
    var lines = [[UInt8]]()
    while case .line(let line) = try buffer.nextLine(from: file.descriptor) { lines.append(Array(line)) }
    return (lines, buffer)
  }

  @Test(arguments: [1, 3, 7, 64, 4096])
  func linesAreTheSameWhateverTheReadSize(readSize: Int) throws {
    let base = try TemporaryDirectory()
    var generator = SystemRandomNumberGenerator()
    var bytes = [UInt8]()
    var expected = [[UInt8]]()
    for _ in 0..<300 {
      let line = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0x20...0x7e) }
      expected.append(line)
      bytes += line + [0x0a]
    }
    bytes += [0x41, 0x42]  // a last line without its newline
    expected.append([0x41, 0x42])
    let (lines, buffer) = try lines(of: try input(bytes, in: base), limit: 300, readSize: readSize)
    #expect(lines == expected)
    #expect(buffer.bytesRead == bytes.count)
    #expect(buffer.searchedByteCount <= bytes.count)
  }

  @Test func aLongLineInSmallReadsIsSearchedOnceAndHeldInBoundedStorage() throws {
    let base = try TemporaryDirectory()
    let long = [UInt8](repeating: 0x61, count: 200_000)
    let bytes = [0x62, 0x0a] + long + [0x0a, 0x63, 0x0a]
    let (lines, buffer) = try lines(of: try input(bytes, in: base), limit: 200_000, readSize: 64)
    #expect(lines == [[0x62], long, [0x63]])
    // Quadratic rescanning searched about 200,000^2 / 128 bytes here.
    #expect(buffer.searchedByteCount <= bytes.count)
    #expect(buffer.storageByteCount <= 200_000 + 1 + 64)
  }

  @Test func aLineAtTheLimitIsALineAndOneByteMoreIsRefused() throws {
    let base = try TemporaryDirectory()
    let atLimit = [UInt8](repeating: 0x61, count: 100)
    #expect(try lines(of: try input(atLimit + [0x0a], in: base), limit: 100, readSize: 16).lines == [atLimit])
    #expect(try lines(of: try input(atLimit, in: base), limit: 100, readSize: 16).lines == [atLimit])
    for tail: [UInt8] in [[0x61], [0x61, 0x0a], [0x61] + [UInt8](repeating: 0x62, count: 1000)] {
      let buffer = LineBuffer(limit: 100, readSize: 16)
      let file = try input([0x0a] + atLimit + tail, in: base)
      guard case .line(let first) = try buffer.nextLine(from: file.descriptor) else {
        Issue.record("the first, empty line was not read")
        continue
      }
      #expect(first.isEmpty)
      guard case .tooLong = try buffer.nextLine(from: file.descriptor) else {
        Issue.record("a line of 101 bytes was not refused")
        continue
      }
      // Refused before the rest of a long line was read.
      #expect(buffer.bytesRead <= 1 + 101 + 16)
    }
  }

  @Test(arguments: [16, 4096])
  func skipLineDropsAnOverlongLineInBoundedStorageAndReadsTheNextOne(readSize: Int) throws {
    let base = try TemporaryDirectory()
    let long = [UInt8](repeating: 0x61, count: 100_000)
    let exact = [UInt8](repeating: 0x62, count: 101)
    let bytes = long + [0x0a] + exact + [0x0a, 0x63, 0x0a] + long
    let file = try input(bytes, in: base)
    let buffer = LineBuffer(limit: 100, readSize: readSize)
    var seen = [String]()
    while true {
      switch try buffer.nextLine(from: file.descriptor) {
      case .line(let line): seen.append(String(decoding: line, as: UTF8.self))
      case .tooLong:
        seen.append("too long")
        try buffer.skipLine(from: file.descriptor)
      case .end:
        #expect(seen == ["too long", "too long", "c", "too long"])
        #expect(buffer.storageByteCount <= 100 + 1 + readSize, "the long lines were never held")
        #expect(buffer.bytesRead == bytes.count)
        return
      }
    }
  }

  @Test func anEmptyInputHasNoLines() throws {
    let base = try TemporaryDirectory()
    #expect(try lines(of: try input([], in: base), limit: 10, readSize: 4).lines.isEmpty)
    #expect(try lines(of: try input([0x0a], in: base), limit: 10, readSize: 4).lines == [[]])
  }
}
