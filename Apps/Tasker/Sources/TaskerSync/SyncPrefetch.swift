import Dispatch
import Synchronization
import TaskerCore

/// Objects opened and read on a second thread while the calling thread
/// applies the ones before them: a new device's pull spends about a third
/// of its time decrypting and reading payloads, work that needs neither
/// the database nor the storage, and the machine has a second core.
///
/// The worker runs at most one object ahead of the one being applied (two
/// payloads in memory, never the whole batch), in order, with the keyring
/// given at the start: the keyring in force for every object of one
/// applying transaction (one carrying an epoch change ends it, and the
/// objects after it are opened again, by a new prefetch, with what it
/// brought). Nothing it produces is trusted more than before: an object
/// that does not open is a `SyncOutcome` for the caller to refuse, as
/// when it was opened in place.
final class SyncPrefetch: @unchecked Sendable {
  /// An object opened: its payload read, with the epoch it was sealed at,
  /// and each record's bytes in the record form (`storedBytes`, what a
  /// record new here is kept as), encoded on the worker too.
  struct Opened: Sendable {
    let payload: SyncPayload
    let epoch: UInt32
    let storedBytes: [[UInt8]]
  }

  // Each slot is written once by the worker before its `ready` signal and read
  // by the caller after waiting for it: the semaphores order every access.
  private let slots: UnsafeMutableBufferPointer<Result<Opened, SyncOutcome>?>
  private let ready: [DispatchSemaphore]
  /// Signalled when the caller takes an object: the worker may open one more.
  private let room = DispatchSemaphore(value: 1)
  /// Set by `finish`: the worker opens nothing more.
  private let finished = Atomic<Bool>(false)

  /// Starts opening `objects` of `device`, in order, under `targetID` and `keyring`.
  init(_ objects: [SyncEngine.ReadObject], device: [UInt8], targetID: [UInt8], keyring: SyncKeyring) {
    slots = .allocate(capacity: objects.count)
    slots.initialize(repeating: nil)
    ready = objects.map { _ in DispatchSemaphore(value: 0) }
    guard !objects.isEmpty else { return }
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      for (index, object) in objects.enumerated() {
        room.wait()
        guard !finished.load(ordering: .sequentiallyConsistent) else { return }
        slots[index] = Self.open(object, device: device, targetID: targetID, keyring: keyring)
        ready[index].signal()
      }
    }
  }

  deinit {
    slots.deinitialize()
    slots.deallocate()
  }

  /// The object at `index` of those given, opened or refused; waits for
  /// the worker. Each index is taken once, in order.
  func take(_ index: Int) -> Result<Opened, SyncOutcome> {
    ready[index].wait()
    let opened = slots[index]!
    slots[index] = nil
    room.signal()
    return opened
  }

  /// Stops the worker once it is done with the object it is opening (the
  /// caller applied what it could; the rest waits for another batch).
  /// Call it once, after the last `take`.
  func finish() {
    finished.store(true, ordering: .sequentiallyConsistent)
    room.signal()
  }

  /// Opens one object as `SyncEngine.apply` did in place: the object
  /// format's rules, then the payload's.
  static func open(
    _ object: SyncEngine.ReadObject, device: [UInt8], targetID: [UInt8], keyring: SyncKeyring
  ) -> Result<Opened, SyncOutcome> {
    let position = SyncObjectFormat.Position(device: device, seq: object.seq)
    do throws(SyncOutcome) {
      let opened = try SyncObjectFormat.open(object.bytes, at: position, targetID: targetID, keyring: keyring)
      let payload = try SyncPayload(reading: opened.payload, at: position, epoch: opened.epoch)
      return .success(Opened(payload: payload, epoch: opened.epoch, storedBytes: payload.records.map(\.storedBytes)))
    } catch {
      return .failure(error)
    }
  }
}
