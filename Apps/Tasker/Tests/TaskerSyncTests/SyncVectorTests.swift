import CommandKit
import Foundation
import TaskCrypto
import Testing

@testable import TaskerSync

/// Apps/Tasker/Vectors/sync-storage-v1.json through the Swift readers:
/// every marker, object, merge, configuration record and sync key item
/// gives its named outcome. scripts/sync-reader.py checks the same file
/// from docs/formats/sync-storage.md alone.
@Suite("Sync storage vectors: markers, objects, merges, records")
struct SyncVectorTests {
  static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Vectors/sync-storage-v1.json")

  static func document() throws -> [String: JSONValue] {
    let bytes = Array(try Data(contentsOf: file))
    return try #require(try JSONDocument(parsing: bytes).value.objectValue)
  }

  static func cases(_ name: String) throws -> [[String: JSONValue]] {
    guard case .array(let values) = try document()[name] else { throw VectorFailure("no \(name)") }
    return values.compactMap(\.objectValue)
  }

  static func hex(_ value: JSONValue?) throws -> [UInt8] {
    try #require(value?.stringValue.flatMap(Hex.decode))
  }

  /// The keyring of the first `entries` entries of `sync_keys`, oldest first.
  static func keyring(entries: Int = 1) throws -> SyncKeyring {
    guard case .array(let keys) = try document()["sync_keys"], keys.count >= entries else {
      throw VectorFailure("no sync key")
    }
    var item: [UInt8] = []
    for entry in keys.prefix(entries) { item += try hex(entry.objectValue?["item_hex"]) }
    return try SyncKeyring(itemValue: try item.withUnsafeBytes { try SecureBytes(copying: $0) })
  }

  struct VectorFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  @Test func markers() throws {
    let keyring = try Self.keyring()
    let tests = try Self.cases("markers")
    #expect(tests.count >= 7)
    for test in tests {
      let id = test["id"]?.integerValue ?? 0
      let expected = test["result"]?.stringValue
      do {
        let target = try SyncObjectFormat.openMarker(try Self.hex(test["marker_hex"]), keyring: keyring)
        #expect(expected == "success", "marker \(id): opened, expected \(expected ?? "?")")
        #expect(target == (try Self.hex(test["target_id_hex"])), "marker \(id)")
      } catch let error as SyncOutcome {
        #expect(error.rawValue == expected, "marker \(id) (\(test["comment"]?.stringValue ?? "")): \(error)")
      }
    }
  }

  @Test func objects() throws {
    let keyring = try Self.keyring()
    let targetID = try Self.hex(try Self.document()["target_id_hex"])
    let tests = try Self.cases("objects")
    #expect(tests.count >= 100)
    var successes = 0
    for test in tests {
      let id = test["id"]?.integerValue ?? 0
      let expected = test["result"]?.stringValue
      var bytes = try Self.hex(test["object_hex"])
      bytes += [UInt8](repeating: 0, count: Int(test["append_zero_bytes"]?.integerValue ?? 0))
      let position = SyncObjectFormat.Position(
        device: try Self.hex(test["device"]), seq: UInt64(try #require(test["seq"]?.integerValue)))
      do {
        let entries = Int(test["keyring_entries"]?.integerValue ?? 1)
        let opened = try SyncObjectFormat.open(
          bytes, at: position, targetID: targetID, keyring: entries == 1 ? keyring : try Self.keyring(entries: entries))
        let payload = try SyncPayload(reading: opened.payload, at: position, epoch: opened.epoch)
        #expect(expected == "success", "object \(id): opened, expected \(expected ?? "?")")
        let wanted = try #require(test["payload"]?.objectValue, "object \(id)")
        #expect(payload.made == wanted["made"]?.integerValue, "object \(id)")
        #expect(payload.deviceName == wanted["device"]?["name"]?.stringValue, "object \(id)")
        #expect(payload.deviceBox.map(Hex.encode) == wanted["device"]?["box"]?.stringValue, "object \(id)")
        let change = try wanted["epoch"].map {
          try SyncEpochChange(reading: $0, writer: Hex.encode(position.device), seq: position.seq, epoch: opened.epoch)
        }
        #expect(payload.epochChange == change, "object \(id)")
        guard case .array(let records) = wanted["records"] else { throw VectorFailure("object \(id): records") }
        #expect(payload.records.count == records.count, "object \(id)")
        for (mine, theirs) in zip(payload.records, records) {
          #expect(SyncPayload.value(of: mine) == SyncPayload.value(of: try SyncPayload.record(theirs)), "object \(id)")
        }
        successes += 1
      } catch let error as SyncOutcome {
        #expect(error.rawValue == expected, "object \(id) (\(test["comment"]?.stringValue ?? "")): \(error)")
      }
    }
    #expect(successes >= 10)
  }

  @Test func merges() throws {
    let tests = try Self.cases("merges")
    #expect(tests.count >= 10)
    for test in tests {
      let id = test["id"]?.integerValue ?? 0
      guard case .array(let values) = test["inputs"] else { throw VectorFailure("merge \(id): inputs") }
      let inputs = try values.map { try SyncPayload.record($0) }
      let expected = SyncPayload.value(of: try SyncPayload.record(try #require(test["joined"])))
      // Every order, and every input twice, joins to the same.
      for order in Self.permutations(inputs.indices.map { $0 }) {
        let joined = order.dropFirst().reduce(inputs[order[0]]) { $0.joined(with: inputs[$1]) }
        #expect(SyncPayload.value(of: joined) == expected, "merge \(id), order \(order)")
        #expect(joined.joined(with: joined) == joined, "merge \(id): idempotent")
        #expect(inputs.reduce(joined) { $0.joined(with: $1) } == joined, "merge \(id): inputs again")
        #expect(joined.shownVersion == test["shown"]?.stringValue, "merge \(id): shown")
        let conflicts = test["conflicts"].flatMap { value -> [String]? in
          guard case .array(let items) = value else { return nil }
          return items.compactMap(\.stringValue)
        }
        #expect(joined.conflictVersions == conflicts, "merge \(id): conflicts")
      }
    }
  }

  static func permutations(_ items: [Int]) -> [[Int]] {
    guard items.count > 1 else { return [items] }
    return items.indices.flatMap { index -> [[Int]] in
      var rest = items
      let first = rest.remove(at: index)
      return permutations(rest).map { [first] + $0 }
    }
  }

  @Test func configurationRecords() throws {
    let tests = try Self.cases("configs")
    #expect(tests.count >= 10)
    for test in tests {
      let id = test["id"]?.integerValue ?? 0
      let expected = test["result"]?.stringValue
      let bytes = try test["record"]?.stringValue.map { Array($0.utf8) } ?? Self.hex(test["record_hex"])
      do {
        let record = try SyncConfiguration(reading: bytes, database: try #require(test["database"]?.stringValue))
        #expect(expected == "success", "config \(id): read, expected \(expected ?? "?")")
        let view = try #require(test["view"]?.objectValue)
        switch record.target {
        case .folder(let folder):
          #expect(view["target_kind"]?.stringValue == "folder" && view["target"]?.stringValue == folder)
        case .webdav(let url, let user, let caFile):
          #expect(view["target_kind"]?.stringValue == "webdav" && view["target"]?.stringValue == url)
          #expect(view["user"]?.stringValue == user && view["ca_file"]?.stringValue == caFile, "config \(id)")
        }
        #expect(view["device"]?.stringValue == record.device)
        #expect(view["target_id"]?.stringValue == record.targetID && view["name"]?.stringValue == record.name)
        #expect(record.encoded(database: test["database"]!.stringValue!) == bytes, "config \(id): re-encodes")
      } catch let error as SyncOutcome {
        #expect(error.rawValue == expected, "config \(id) (\(test["comment"]?.stringValue ?? "")): \(error)")
      }
    }
  }

  @Test func syncKeyItems() throws {
    for test in try Self.cases("sync_key_items") {
      let id = test["id"]?.integerValue ?? 0
      let bytes = try Self.hex(test["item_hex"])
      let value = try SecureBytes(zeroedCount: bytes.count)
      value.withUnsafeMutableBytes { raw in for (index, byte) in bytes.enumerated() { raw[index] = byte } }
      let outcome: String
      do {
        let keyring = try SyncKeyring(itemValue: value)
        outcome = "success"
        if case .array(let epochs) = test["epochs"] {
          #expect(keyring.entries.map { Int64($0.epoch) } == epochs.compactMap(\.integerValue), "item \(id)")
        }
      } catch {
        outcome = error.rawValue
      }
      #expect(outcome == test["result"]?.stringValue, "sync key item \(id)")
    }
  }

  @Test func sealedBoxes() throws {
    let tests = try Self.cases("sealed_boxes")
    #expect(tests.count >= 4)
    for test in tests {
      let id = test["id"]?.integerValue ?? 0
      let secret = try Self.hex(test["secret_key_hex"]).withUnsafeBytes { try SecureBytes(copying: $0) }
      #expect(Hex.encode(try AnonymousBox.publicKey(of: secret)) == test["public_key_hex"]?.stringValue, "box \(id)")
      let opened = try? AnonymousBox.open(
        try Self.hex(test["box_hex"]), publicKey: try Self.hex(test["public_key_hex"]), secretKey: secret)
      if test["result"]?.stringValue == "success" {
        #expect(opened?.withUnsafeBytes { Hex.encode(Array($0)) } == test["plaintext_hex"]?.stringValue, "box \(id)")
      } else {
        #expect(opened == nil, "box \(id) opened, expected \(test["result"]?.stringValue ?? "?")")
      }
    }
  }

  /// The outcome of reading a blob through `SyncBlobReader` whose sealed
  /// bytes `next` gives, and the content read when it succeeded.
  static func read(
    _ next: @escaping () throws -> [UInt8]?, recycle: @escaping ([UInt8]) -> Void = { _ in },
    content: SyncAttachmentContent, uid: String, keyring: SyncKeyring, targetID: [UInt8]
  ) throws -> (outcome: String, content: [UInt8]) {
    var read: [UInt8] = []
    do {
      let reader = try SyncBlobReader(
        next, recycle: recycle, content: content, uid: uid, keyring: keyring, targetID: targetID)
      while case let chunk = try reader.read(), !chunk.isEmpty { read += chunk }
    } catch let outcome as SyncOutcome {
      return (outcome.rawValue, [])
    }
    return ("success", read)
  }

  /// Every blob as a fetch reads it from a folder target (the file streamed
  /// through `SyncBlobPipe` into `SyncBlobReader`), its content read to the
  /// end (the padding is checked there); then again in pieces of 7 bytes.
  @Test func blobs() throws {
    let tests = try Self.cases("blobs")
    #expect(tests.count >= 20)
    let targetID = try Self.hex(try Self.document()["target_id_hex"])
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-blobs-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    for test in tests {
      let id = test["id"]?.integerValue ?? 0
      let path = folder.appendingPathComponent("\(id)").path
      let blob = try Self.hex(test["blob_hex"])
      try Data(blob).write(to: URL(fileURLWithPath: path))
      let content = try #require(test["content"].flatMap(SyncAttachmentContent.init), "blob \(id)")
      let keyring = try Self.keyring(entries: Int(test["keyring_entries"]?.integerValue ?? 1))
      let uid = try #require(test["record_id"]?.stringValue)
      let limit = try content.blobByteCount
      let pipe = SyncBlobPipe { push in
        try SyncFiles.stream(path, limit: limit, into: push)
        return true
      }
      let fetched = try Self.read(
        pipe.next, recycle: pipe.recycle, content: content, uid: uid, keyring: keyring, targetID: targetID)
      pipe.cancel()
      pipe.finish()
      #expect(fetched.outcome == test["result"]?.stringValue, "blob \(id) (\(test["comment"]?.stringValue ?? ""))")
      if fetched.outcome == "success" {
        #expect(Hex.encode(fetched.content) == test["content_hex"]?.stringValue, "blob \(id)")
      }
      // Streamed in pieces of 7 bytes, as a blob may arrive, the outcome is the same.
      var pieces = blob[...]
      let streamed = try Self.read(
        {
          defer { pieces = pieces.dropFirst(7) }
          return pieces.isEmpty ? nil : Array(pieces.prefix(7))
        }, content: content, uid: uid, keyring: keyring, targetID: targetID)
      #expect(streamed.outcome == test["result"]?.stringValue, "blob \(id) streamed")
      if streamed.outcome == "success" {
        #expect(Hex.encode(streamed.content) == test["content_hex"]?.stringValue, "blob \(id)")
      }
    }
  }

  @Test func aSealedObjectOpensAndEveryHeaderByteIsBound() throws {
    let keyring = try SyncKeyring.generate().keyring
    let key = keyring.newest
    let targetID = SecureRandom.bytes(count: 16)
    let position = SyncObjectFormat.Position(device: SecureRandom.bytes(count: 16), seq: 7)
    let payload = SyncPayload(made: 5, deviceName: nil, records: []).encoded
    let object = try SyncObjectFormat.seal(payload, at: position, targetID: targetID, key: key)
    #expect(object.count == 46 + 512 + 16)
    #expect(try SyncObjectFormat.open(object, at: position, targetID: targetID, keyring: keyring).payload == payload)
    for offset in 0..<object.count {
      var altered = object
      altered[offset] ^= 0x01
      #expect(throws: SyncOutcome.self) {
        try SyncObjectFormat.open(altered, at: position, targetID: targetID, keyring: keyring)
      }
    }
    var otherTarget = targetID
    otherTarget[0] ^= 1
    #expect(throws: SyncOutcome.authenticationFailed) {
      try SyncObjectFormat.open(object, at: position, targetID: otherTarget, keyring: keyring)
    }
  }

  @Test func paddingFollowsPadme() {
    #expect(SyncObjectFormat.paddedSize(1) == 512)
    #expect(SyncObjectFormat.paddedSize(513) == 544)
    #expect(SyncObjectFormat.paddedSize(1025) == 1088)
    for length in stride(from: 512, to: 5_000_000, by: 997) {
      let padded = SyncObjectFormat.paddedSize(length)
      #expect(padded >= length && Double(padded - length) <= Double(length) * 0.12, "\(length)")
    }
  }
}
