import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerSync

/// `SyncObjectStream`: a device's objects come out opened, in order, in
/// batches of about the given size; a read that fails withholds its
/// batch whole; stopping early leaves no thread using the target.
@Suite struct SyncObjectStreamTests {
  let folder: TemporaryDirectory
  let target: FolderTarget
  let keyring: SyncKeyring
  let targetID = SecureRandom.bytes(count: 16)
  let device = String(repeating: "ab", count: 16)

  init() throws {
    folder = try TemporaryDirectory()
    target = FolderTarget(root: folder.path + "/tasker-sync")
    try target.prepare()
    keyring = try SyncKeyring.generate().keyring
  }

  /// Writes objects `seqs` of `device`, each a payload made at its seq.
  func write(_ seqs: ClosedRange<UInt64>) throws {
    for seq in seqs {
      let payload = SyncPayload.encoded(
        made: Int64(seq), deviceName: "d", deviceBox: nil, epochChange: nil, seen: nil, floor: 0, records: [])
      let object = try SyncObjectFormat.seal(
        payload, at: .init(device: Hex.decode(device)!, seq: seq), targetID: targetID, key: keyring.newest)
      #expect(try target.create(device: device, seq: seq, bytes: object) == .created)
    }
  }

  func stream(_ seqs: ClosedRange<UInt64>, batchBytes: Int) -> SyncObjectStream {
    SyncObjectStream(
      target: target, device: device, seqs: Array(seqs), targetID: targetID, keyring: keyring, batchBytes: batchBytes)
  }

  @Test(arguments: [1, 700, 1 << 20])
  func everyObjectComesOutOpenedInOrderInBatches(batchBytes: Int) throws {
    try write(1...9)
    let objectBytes = try #require(try target.read(device: device, seq: 1, limit: 1 << 22)).count
    let stream = stream(1...9, batchBytes: batchBytes)
    defer { stream.finish() }
    var seqs: [UInt64] = []
    var batches: [Int] = []
    while let count = try stream.nextBatch() {
      batches.append(count)
      for _ in 0..<count {
        let (seq, opened) = stream.take()
        seqs.append(seq)
        #expect(try opened.get().payload.made == Int64(seq))
      }
    }
    #expect(seqs == Array(1...9))
    // A batch holds objects until it reaches the size: at least one.
    let perBatch = max(1, (batchBytes + objectBytes - 1) / objectBytes)
    #expect(batches == stride(from: 9, to: 0, by: -perBatch).map { min(perBatch, $0) })
    // The end stays told.
    #expect(try stream.nextBatch() == nil)
  }

  @Test func anObjectThatDoesNotOpenIsItsOutcomeAndTheOthersStillOpen() throws {
    try write(1...3)
    let path = folder.path + "/tasker-sync/d/\(device)/\(syncSeqName(2))"
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[bytes.count - 1] ^= 1
    try FileManager.default.removeItem(atPath: path)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let stream = stream(1...3, batchBytes: 1 << 20)
    defer { stream.finish() }
    #expect(try stream.nextBatch() == 3)
    #expect(throws: Never.self) { try stream.take().opened.get() }
    #expect(stream.take().opened.failure != nil)
    #expect(throws: Never.self) { try stream.take().opened.get() }
  }

  @Test func aReadThatFailsWithholdsItsWholeBatchAndTheEarlierOnesComeOut() throws {
    try write(1...6)
    // Object 5 cannot be read: a folder where its file should be.
    let path = folder.path + "/tasker-sync/d/\(device)/\(syncSeqName(5))"
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    let objectBytes = try #require(try target.read(device: device, seq: 1, limit: 1 << 22)).count
    // Batches of two objects: 1-2, 3-4, then 5-6 fails whole.
    let stream = stream(1...6, batchBytes: 2 * objectBytes)
    defer { stream.finish() }
    for _ in 0..<2 {
      let count = try #require(try stream.nextBatch())
      #expect(count == 2)
      for _ in 0..<count { _ = try stream.take().opened.get() }
    }
    #expect(throws: SyncError.self) { try stream.nextBatch() }
    #expect(throws: SyncError.self) { try stream.nextBatch() }
  }

  @Test func finishingEarlyStopsBothThreads() throws {
    try write(1...8)
    // Before the first batch, after a batch but no object, after one object of it.
    for objects in [nil, 0, 1] {
      let stream = stream(1...8, batchBytes: 1)
      if let objects {
        #expect(try stream.nextBatch() == 1)
        for _ in 0..<objects { _ = stream.take() }
      }
      // Returns once neither thread is running.
      stream.finish()
    }
    let last = stream(1...8, batchBytes: 1 << 20)
    defer { last.finish() }
    #expect(try last.nextBatch() == 8)
  }
}

extension Result {
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
