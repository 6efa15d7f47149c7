import Glibc
import Synchronization
import Testing

@testable import TaskerSync

/// `SyncBlobPipe`: what the download pushes comes out whole and in order,
/// its end is told as it happened, and a cancelled download stops.
@Suite struct SyncBlobPipeTests {
  /// Bytes pushed in pieces of `sizes` (cycled) up to `count`.
  static func download(count: Int, sizes: [Int]) -> @Sendable ((UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
    { push in
      var offset = 0
      var index = 0
      while offset < count {
        let end = min(count, offset + sizes[index % sizes.count])
        let piece = (offset..<end).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        try piece.withUnsafeBytes { try push($0) }
        (offset, index) = (end, index + 1)
      }
      return true
    }
  }

  @Test(arguments: [0, 1, (1 << 20) - 1, 1 << 20, 5 * (1 << 20) + 3])
  func everyByteComesOutInOrder(count: Int) throws {
    let pipe = SyncBlobPipe(capacity: 2, download: Self.download(count: count, sizes: [1, 16_384, 300_001]))
    defer { pipe.finish() }
    var got: [UInt8] = []
    while let piece = try pipe.next() {
      #expect(!piece.isEmpty && piece.count <= SyncBlobPipe.pieceByteCount)
      got += piece
      // Given back, its buffer is filled again with later bytes: what came out must not change.
      pipe.recycle(piece)
    }
    #expect(got.count == count)
    let same = got == (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
    #expect(same, "the bytes differ")
    // The end stays told.
    #expect(try pipe.next() == nil)
  }

  @Test func aMissingBlobAndAFailedDownloadAreToldAtTheEnd() throws {
    let missing = SyncBlobPipe { _ in false }
    #expect(throws: SyncOutcome.blobMissing) { try missing.next() }
    #expect(throws: SyncOutcome.blobMissing) { try missing.next() }
    missing.finish()
    struct Broken: Error, Equatable {}
    let failed = SyncBlobPipe { push in
      try [1, 2, 3].withUnsafeBytes { try push($0) }
      throw Broken()
    }
    // Bytes gathered before the failure are not handed out as a piece: the error is.
    #expect(throws: Broken()) { try failed.next() }
    failed.finish()
  }

  @Test func cancellingStopsADownloadThatWouldNeverEnd() throws {
    let stoppedBy = Mutex<String?>(nil)
    let pipe = SyncBlobPipe(capacity: 1) { push in
      let piece = [UInt8](repeating: 7, count: 1 << 16)
      do {
        while true { try piece.withUnsafeBytes { try push($0) } }
      } catch {
        stoppedBy.withLock { $0 = "\(type(of: error))" }
        throw error
      }
    }
    #expect(try pipe.next()?.count == SyncBlobPipe.pieceByteCount)
    pipe.cancel()
    pipe.finish()
    #expect(stoppedBy.withLock { $0 } == "Cancelled")
    // What was queued before comes out, then the download's end: its cancellation.
    #expect(throws: SyncBlobPipe.Cancelled.self) {
      while try pipe.next() != nil {}
    }
  }

  /// A reader that refuses a blob early stops with pieces still queued:
  /// cancelled, finished and let go, the pipe must not take the process
  /// down (libdispatch traps on a semaphore released below its start).
  @Test(arguments: [1, 2, 4])
  func aPipeLetGoWithPiecesQueuedEndsCleanly(capacity: Int) throws {
    for taken in 0...1 {
      var pipe: SyncBlobPipe? = SyncBlobPipe(
        capacity: capacity, download: Self.download(count: 64 << 20, sizes: [1 << 20]))
      for _ in 0..<taken { _ = try pipe?.next() }
      // Let the worker fill the queue and block on it.
      while pipe?.queuedCount ?? 0 < capacity { usleep(1_000) }
      pipe?.cancel()
      pipe?.finish()
      #expect(pipe?.queuedCount == 0, "finish gives back what was queued")
      pipe = nil
    }
  }
}
