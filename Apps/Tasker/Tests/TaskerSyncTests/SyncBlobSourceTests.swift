import Synchronization
import Testing

@testable import TaskerSync

/// `SyncBlobSource`: what the seal pushes comes out whole and in order,
/// and the last piece never before the seal ended whole at its length.
@Suite struct SyncBlobSourceTests {
  static func byte(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 29 &+ index >> 13) }

  /// A seal that pushes `count` bytes in pieces of `size`, then throws `ending` if any.
  static func seal(count: Int, size: Int, ending: (any Error)? = nil) -> (SyncBlobPipe.Push) throws -> Void {
    { push in
      var offset = 0
      while offset < count {
        let end = min(count, offset + size)
        try (offset..<end).map(byte).withUnsafeBytes { try push($0) }
        offset = end
      }
      if let ending { throw ending }
    }
  }

  /// Reads `source` in buffers of `size` until it gives 0 or throws.
  static func drain(_ source: SyncBlobSource, size: Int) -> (bytes: [UInt8], error: (any Error)?) {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: size)
    do {
      while case let count = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), count > 0 {
        bytes += buffer[..<count]
      }
    } catch {
      return (bytes, error)
    }
    return (bytes, nil)
  }

  struct Broken: Error, Equatable {}

  @Test(arguments: [1, (1 << 20) - 1, 1 << 20, 3 * (1 << 20) + 7])
  func everyByteComesOutInOrder(count: Int) throws {
    for (piece, buffer) in [(997, 1 << 20), (70_001, 4_096), (1 << 20, 3 << 20)] {
      let source = SyncBlobSource(byteCount: UInt64(count), attachment: 7, seal: Self.seal(count: count, size: piece))
      defer { source.finish() }
      let read = Self.drain(source, size: buffer)
      #expect(read.error == nil, "\(String(describing: read.error))")
      #expect(read.bytes.count == count)
      #expect(read.bytes == (0..<count).map(Self.byte), "the bytes differ")
      // The end stays told.
      #expect(Self.drain(source, size: 16).bytes.isEmpty)
    }
  }

  @Test(arguments: [100, 1 << 20, 2 * (1 << 20) + 5])
  func aSealThatFailsAfterItsLastByteNeverGivesTheLastPiece(count: Int) {
    let source = SyncBlobSource(
      byteCount: UInt64(count), attachment: 7, seal: Self.seal(count: count, size: 4_096, ending: Broken()))
    defer { source.finish() }
    let read = Self.drain(source, size: 65_536)
    #expect(read.error as? Broken == Broken())
    // At most the pieces before the last went: an upload of it ends short, and the storage keeps nothing.
    let lastPiece = (count - 1) % SyncBlobPipe.pieceByteCount + 1
    #expect(read.bytes.count <= count - lastPiece, "\(read.bytes.count) of \(count) bytes went")
    #expect(source.failure as? Broken == Broken())
    // And the same error again, however often it is asked.
    #expect(Self.drain(source, size: 16).error as? Broken == Broken())
  }

  @Test(arguments: [-1, 1, 1 << 20])
  func aSealOfAnotherLengthIsRefusedBeforeItsLastPiece(difference: Int) {
    let count = 2 * (1 << 20) + 11
    let source = SyncBlobSource(
      byteCount: UInt64(count), attachment: 7, seal: Self.seal(count: count + difference, size: 50_000))
    defer { source.finish() }
    let read = Self.drain(source, size: 65_536)
    guard case .attachmentUnsendable(7, let reason) = read.error as? SyncError else {
      Issue.record("\(String(describing: read.error))")
      return
    }
    #expect(reason.contains("not the length its record gives"))
    // Refused no later than on taking the piece that makes it wrong: the last one never went.
    #expect(read.bytes.count <= 2 << 20, "\(read.bytes.count) bytes went")
  }

  @Test func finishingStopsASealThatWouldNeverEnd() {
    let pushed = Atomic<Int>(0)
    let source = SyncBlobSource(byteCount: 1 << 40, attachment: 7) { push in
      let piece = [UInt8](repeating: 7, count: 1 << 16)
      while true {
        try piece.withUnsafeBytes { try push($0) }
        pushed.add(1, ordering: .relaxed)
      }
    }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    #expect(throws: Never.self) { _ = try buffer.withUnsafeMutableBytes { try source.read(into: $0) } }
    // The upload stopped (the storage failed, say): the seal's thread ends at its next push, and
    // `finish` returns only once it has.
    source.finish()
    #expect(pushed.load(ordering: .relaxed) > 0)
  }
}

/// `SyncTransferMeter`: a transfer of any size is told at most 101 times,
/// each whole percent once, in order, ending with every byte.
@Suite struct SyncTransferMeterTests {
  @Test(arguments: [0, 1, 99, 100, 12_345, 1 << 30])
  func eachPercentIsToldOnceInOrder(total: Int) {
    var told: [SyncProgress] = []
    let meter = SyncTransferMeter("sending attachment 1 of 1", total: UInt64(total)) { told.append($0) }
    var left = total
    var step = 1
    while left > 0 {
      let count = min(left, step)
      meter.advance(by: count)
      (left, step) = (left - count, step * 3 + 1)
    }
    meter.advance(by: 0)
    let bytes = told.compactMap { progress -> UInt64? in
      guard case .transfer("sending attachment 1 of 1", let bytes, UInt64(total)) = progress else { return nil }
      return bytes
    }
    #expect(bytes.count == told.count && told.count <= 101 && !told.isEmpty)
    #expect(bytes.last == UInt64(total), "ends with every byte")
    let percents = bytes.map { total == 0 ? 100 : $0 * 100 / UInt64(total) }
    #expect(percents == percents.sorted() && Set(percents).count == percents.count, "\(percents)")
  }
}
