import Dispatch
import Synchronization

/// A blob downloaded on a second thread while the calling thread checks
/// and keeps what arrived before: the storage pushes bytes as they come
/// (a curl callback, a file read), the blob reader pulls them, and the
/// machine's second core decrypts and writes while the first receives.
///
/// At most `capacity` pieces of about 1 MiB wait between the two (flat
/// memory whatever the blob's size). The download ends with the blob
/// whole, missing, or an error; `cancel` stops it early (the reader
/// refused the blob, or keeping it failed), and `finish` waits for the
/// worker, so no thread outlives a fetch or uses the target after it.
final class SyncBlobPipe: @unchecked Sendable {
  /// How the download ended.
  enum End {
    case whole
    case missing
    case failed(any Error)
  }

  /// Takes the blob's next bytes (valid only during the call).
  typealias Push = (UnsafeRawBufferPointer) throws -> Void

  /// The error a push throws once the reader stopped the download.
  struct Cancelled: Error {}

  private struct State {
    var pieces: [[UInt8]] = []
    var end: End?
    /// Pieces given back once read: their buffers are filled again, so a
    /// long blob does not fault in fresh memory for every MiB.
    var spare: [[UInt8]] = []
  }

  static let pieceByteCount = 1 << 20
  private let state = Mutex(State())
  private let cancelled = Atomic<Bool>(false)
  /// One signal per piece queued, and one for the end.
  private let filled = DispatchSemaphore(value: 0)
  /// Room for one more piece. Its permits are given in `init`, as
  /// `SyncObjectStream` gives its own: a semaphore made with a value traps
  /// in libdispatch when it is freed below it, as a pipe let go with
  /// pieces queued would leave it.
  private let room = DispatchSemaphore(value: 0)
  private let done = DispatchSemaphore(value: 0)
  /// The piece being gathered: touched by the worker only.
  private var gathering: [UInt8] = []

  /// Starts `download` on a worker thread: it pushes the blob's bytes
  /// through `push` and returns whether the blob was there.
  init(capacity: Int = 4, download: @escaping @Sendable (_ push: Push) throws -> Bool) {
    for _ in 0..<capacity { room.signal() }
    gathering.reserveCapacity(Self.pieceByteCount)
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      var end = End.whole
      do {
        if try download(push) {
          if !gathering.isEmpty { try handOver() }
        } else {
          end = .missing
        }
      } catch {
        end = .failed(error)
      }
      state.withLock { $0.end = end }
      filled.signal()
      done.signal()
    }
  }

  /// The next piece in order, nil once the blob is whole.
  ///
  /// - Throws: `SyncOutcome.blobMissing` when the storage has no such
  ///   blob; the download's error.
  func next() throws -> [UInt8]? {
    filled.wait()
    let taken: (piece: [UInt8]?, end: End?) = state.withLock { state in
      state.pieces.isEmpty ? (nil, state.end) : (state.pieces.removeFirst(), nil)
    }
    if let piece = taken.piece {
      room.signal()
      return piece
    }
    // The end stays for any later call.
    filled.signal()
    switch taken.end! {
    case .whole: return nil
    case .missing: throw SyncOutcome.blobMissing
    case .failed(let error): throw error
    }
  }

  /// Gives back a piece `next` returned, once its bytes are used (pass
  /// the last reference), so that its buffer is filled again.
  func recycle(_ piece: consuming [UInt8]) {
    let kept = consume piece
    state.withLock { state in
      if state.spare.count < 2 { state.spare.append(kept) }
    }
  }

  /// Stops the download at its next push.
  func cancel() {
    cancelled.store(true, ordering: .sequentiallyConsistent)
    room.signal()
  }

  /// Waits until the worker ended (after the blob's end, or `cancel`),
  /// then drops the pieces still queued: their memory goes now, not when
  /// the pipe is let go.
  func finish() {
    done.wait()
    done.signal()
    state.withLock { $0.pieces.removeAll() }
  }

  /// How many pieces wait to be read (for tests).
  var queuedCount: Int { state.withLock { $0.pieces.count } }

  /// Takes bytes from the download (on the worker).
  private func push(_ bytes: UnsafeRawBufferPointer) throws {
    var rest = bytes
    while !rest.isEmpty {
      let count = min(rest.count, Self.pieceByteCount - gathering.count)
      gathering += rest[..<count]
      rest = UnsafeRawBufferPointer(rebasing: rest[count...])
      if gathering.count == Self.pieceByteCount { try handOver() }
    }
  }

  /// Queues the gathered piece once there is room (on the worker).
  private func handOver() throws {
    guard !cancelled.load(ordering: .sequentiallyConsistent) else { throw Cancelled() }
    room.wait()
    guard !cancelled.load(ordering: .sequentiallyConsistent) else { throw Cancelled() }
    let piece = gathering
    gathering = state.withLock { state in
      state.pieces.append(piece)
      return state.spare.popLast() ?? []
    }
    // A spare piece is no longer referenced anywhere else: its buffer is kept.
    gathering.removeAll(keepingCapacity: true)
    gathering.reserveCapacity(Self.pieceByteCount)
    filled.signal()
  }
}
