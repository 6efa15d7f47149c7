import Dispatch
import Synchronization
import TaskCrypto
import TaskerCore

/// One device's run of objects, read from the storage on one thread and
/// opened on another while the calling thread applies the ones before
/// them: a new device's pull would otherwise wait for every GET, and for
/// the first object of every transaction to be decrypted and read, with
/// the database idle.
///
/// The objects come in batches of about `batchBytes` (at least one
/// object): the caller waits for a batch to be read whole before it
/// begins the transaction that applies it, so the database is never
/// locked while the network is waited on, and a read that fails leaves
/// that batch unapplied. While one batch is applied the next is read, and
/// no more: at most two batches' bytes are held. Within a batch the
/// opener runs at most one object ahead of the one being applied (two
/// payloads in memory, never the batch), and drops each object's bytes
/// once opened.
///
/// Every object is opened with the keyring given at the start. One that
/// carries an epoch change ends the caller's use of the stream: the
/// objects after it are read again, by a new stream, and opened with what
/// the change brought. Nothing produced here is trusted more than before:
/// an object that does not open is a `SyncOutcome` for the caller to
/// refuse.
final class SyncObjectStream: @unchecked Sendable {
  /// An object opened: its payload read, with the epoch it was sealed at,
  /// and each record's bytes in the record form (`storedBytes`, what a
  /// record new here is kept as), encoded on the opener too.
  struct Opened: Sendable {
    let payload: SyncPayload
    let epoch: UInt32
    let storedBytes: [[UInt8]]
  }

  private struct State {
    /// Bytes read and not yet opened, by index in `seqs`.
    var read: [Int: [UInt8]] = [:]
    /// Opened objects not yet taken, by index.
    var opened: [Int: Result<Opened, SyncOutcome>] = [:]
    /// The end index (exclusive) of every batch read whole, in order.
    var batchEnds: [Int] = []
    /// The storage's error that stopped reading, if one did.
    var readError: (any Error)?
  }

  let seqs: [UInt64]
  private let state = Mutex(State())
  private let stopped = Atomic<Bool>(false)
  /// One signal per batch read whole, and one when reading ends.
  private let batchRead = DispatchSemaphore(value: 0)
  /// Room for one more batch to be read (two in the stream at most). The
  /// permits of the two room semaphores are given in `init`: one made
  /// with a value traps when it is freed below it.
  private let batchRoom = DispatchSemaphore(value: 0)
  /// One signal per object read, for the opener.
  private let objectRead = DispatchSemaphore(value: 0)
  /// One signal per object opened, for the caller.
  private let objectOpened = DispatchSemaphore(value: 0)
  /// Signalled when the caller takes an object: the opener may open one more.
  private let openRoom = DispatchSemaphore(value: 0)
  private let readerDone = DispatchSemaphore(value: 0)
  private let openerDone = DispatchSemaphore(value: 0)
  /// Batches handed to the caller, and the next object it takes.
  private var batchesTaken = 0
  private var nextTaken = 0

  /// Starts reading `seqs` (consecutive, each present at the storage) of
  /// `device` from `target`, and opening them under `targetID` and
  /// `keyring`. The caller uses `target` for nothing else until `finish`.
  init(
    target: any SyncTarget, device: String, seqs: [UInt64], targetID: [UInt8], keyring: SyncKeyring,
    batchBytes: Int
  ) {
    self.seqs = seqs
    batchRoom.signal()
    batchRoom.signal()
    openRoom.signal()
    let handle = SyncHandedToWorker(target)
    let deviceBytes = Hex.decode(device) ?? []
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      read(handle.value, device: device, batchBytes: batchBytes)
      readerDone.signal()
    }
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      open(device: deviceBytes, targetID: targetID, keyring: keyring)
      openerDone.signal()
    }
  }

  /// Waits until the next batch is read whole.
  ///
  /// - Returns: how many objects it holds (take each with `take`); nil
  ///   when the run is read to its end.
  /// - Throws: the storage's error for an object of this batch (none of
  ///   it is handed over).
  func nextBatch() throws -> Int? {
    batchRead.wait()
    let (end, error): (Int?, (any Error)?) = state.withLock { state in
      state.batchEnds.count > batchesTaken ? (state.batchEnds[batchesTaken], nil) : (nil, state.readError)
    }
    guard let end else {
      // The end stays for any later call.
      batchRead.signal()
      if let error { throw error }
      return nil
    }
    if batchesTaken > 0 { batchRoom.signal() }
    batchesTaken += 1
    let count = end - nextTaken
    return count
  }

  /// The next object of the batch, with its seq: opened, or the outcome
  /// that refuses it. Waits for the opener only.
  func take() -> (seq: UInt64, opened: Result<Opened, SyncOutcome>) {
    objectOpened.wait()
    let index = nextTaken
    let opened = state.withLock { $0.opened.removeValue(forKey: index)! }
    nextTaken += 1
    openRoom.signal()
    return (seqs[index], opened)
  }

  /// Stops both threads once they are done with the object in hand, and
  /// waits for them: the target is the caller's again. Call it once.
  func finish() {
    stopped.store(true, ordering: .sequentiallyConsistent)
    batchRoom.signal()
    objectRead.signal()
    openRoom.signal()
    readerDone.wait()
    openerDone.wait()
  }

  private var isStopped: Bool { stopped.load(ordering: .sequentiallyConsistent) }

  /// The reader: every object in order, a batch at a time, while there is room.
  private func read(_ target: any SyncTarget, device: String, batchBytes: Int) {
    var index = 0
    defer {
      batchRead.signal()
      objectRead.signal()
    }
    while index < seqs.count {
      batchRoom.wait()
      guard !isStopped else { return }
      var bytes = 0
      while index < seqs.count, bytes == 0 || bytes < batchBytes {
        let object: [UInt8]
        do {
          object =
            try target.read(device: device, seq: seqs[index], limit: SyncObjectFormat.maximumObjectByteCount) ?? []
        } catch {
          state.withLock { $0.readError = error }
          return
        }
        guard !isStopped else { return }
        bytes += object.count
        state.withLock { $0.read[index] = object }
        index += 1
        objectRead.signal()
      }
      state.withLock { $0.batchEnds.append(index) }
      batchRead.signal()
    }
  }

  /// The opener: every object read, in order, one ahead of the caller.
  private func open(device: [UInt8], targetID: [UInt8], keyring: SyncKeyring) {
    for index in seqs.indices {
      openRoom.wait()
      objectRead.wait()
      guard !isStopped else { return }
      guard let bytes = state.withLock({ $0.read.removeValue(forKey: index) }) else { return }
      let opened = Self.open(bytes, seq: seqs[index], device: device, targetID: targetID, keyring: keyring)
      state.withLock { $0.opened[index] = opened }
      objectOpened.signal()
    }
  }

  /// Opens one object as `SyncEngine.apply` did in place: the object
  /// format's rules, then the payload's.
  static func open(
    _ bytes: [UInt8], seq: UInt64, device: [UInt8], targetID: [UInt8], keyring: SyncKeyring
  ) -> Result<Opened, SyncOutcome> {
    let position = SyncObjectFormat.Position(device: device, seq: seq)
    do throws(SyncOutcome) {
      let opened = try SyncObjectFormat.open(bytes, at: position, targetID: targetID, keyring: keyring)
      let payload = try SyncPayload(reading: opened.payload, at: position, epoch: opened.epoch)
      return .success(Opened(payload: payload, epoch: opened.epoch, storedBytes: payload.records.map(\.storedBytes)))
    } catch {
      return .failure(error)
    }
  }
}

/// A value handed to a worker thread (a target, a seal): whoever hands it
/// over uses it, and what it touches, for nothing else until the worker
/// is done.
final class SyncHandedToWorker<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}
