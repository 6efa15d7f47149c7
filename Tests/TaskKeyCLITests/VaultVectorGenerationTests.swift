import Foundation
import Glibc
import TaskKeyTestSupport
import TaskSystem
import Testing

@testable import TaskCrypto
@testable import TaskKeyCLI
@testable import TaskKeyVectors
@testable import TaskVault

/// The committed vectors in `Vectors/vault-v1/` (described in
/// Vectors/README.md and SECURITY.md). Generation is deterministic:
/// every random byte and nonce comes from SHA-256 in counter mode over a
/// fixed seed, through test-only seams. `TASKKEY_WRITE_VECTORS=1` rewrites
/// the files; otherwise the test fails when they drift.
enum VaultVectors {
  static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors")
  static let passphrase = "correct horse battery staple"
  static let now: Int64 = 1_800_000_000

  /// A deterministic byte stream: SHA-256(seed || counter as 8 bytes BE).
  final class Stream: @unchecked Sendable {
    private let seed: [UInt8]
    private var counter: UInt64 = 0
    private var pool = [UInt8]()

    init(seed: String) { self.seed = Array(seed.utf8) }

    func next(_ count: Int) -> [UInt8] {
      while pool.count < count {
        let block = seed + (0..<8).map { UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * $0)) }
        pool += SHA256.hash(data: block).bytes
        counter += 1
      }
      defer { pool.removeFirst(count) }
      return Array(pool[..<count])
    }
  }

  /// The vault file with its synchronisable store plaintext changed by
  /// `edit` (bytes) or `change` (contents) and sealed again under the right
  /// key, as only a writer holding the master key could: for invalid
  /// vectors behind the store's tag.
  static func resealed(
    _ vault: Vault, change: (inout StoreContents) -> Void = { _ in }, edit: (inout [UInt8]) throws -> Void = { _ in }
  ) throws -> [UInt8] {
    var file = try vault.readFile()
    let keys = try vault.sessionKeys(file).keys
    var store = try vault.openStores(file, keys: keys).synchronisable
    change(&store)
    var plaintext = bytes(of: try store.encode())
    try edit(&plaintext)
    let aad = VaultFile.storeAAD(vaultID: file.vaultID, generation: file.generation)
    file.sealed = try plaintext.withUnsafeBytes { try vault.environment.seal($0, keys.sync, aad) }
    return file.encode()
  }

  /// Builds every vector file in memory.
  static func generate() throws -> [String: [UInt8]] {
    let stream = Stream(seed: "TaskKey vault vectors v1")
    let runtime = try TemporaryDirectory()
    let home = try TemporaryDirectory()
    var clock = now
    let environment = VaultEnvironment(
      fileSystem: PosixFileSystem(), bootID: { [UInt8](repeating: 0xb0, count: 16) }, now: { clock },
      runtimeDirectory: { runtime.url.path },
      random: { buffer in
        for (index, byte) in stream.next(buffer.count).enumerated() { buffer[index] = byte }
      },
      sealer: { plaintext, key, aad in
        try AES.GCM.seal(plaintext, using: key, nonce: stream.next(12), authenticating: aad)
      })
    let directory = home.path("keys")
    let vault = try Vault.create(
      at: directory, passphrase: secret(passphrase), preset: .fastTestOnly, environment: environment)
    try vault.unlock(passphrase: secret(passphrase))
    clock += 60
    try vault.setItem(
      secret("cal-0123456789"), named: "calendar/token", label: "Calendar token", class: .afterFirstUnlock)
    clock += 60
    try vault.setItem(
      secret("sk-test-DEVICE-ONLY-0123456789"), named: "provider/openai", label: "OpenAI key",
      class: .afterFirstUnlockThisDeviceOnly)
    clock += 60
    let second = NoteKey(id: KeyID(rawValue: 0x0bad_cafe), key: try environment.randomKey())
    try vault.updateNoteKeyring {
      try $0.add(second)
      try $0.promote(second.id)
    }
    clock += 60
    // A third key, retired at once: its id stays as a tombstone.
    let third = NoteKey(id: KeyID(rawValue: 0x0dea_d0ff), key: try environment.randomKey())
    try vault.updateNoteKeyring { try $0.add(third) }
    try vault.updateNoteKeyring { try $0.retire(third.id) }
    let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/vault.tkv")))
    let device = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/device-only/device.tkv")))
    let bundle = try vault.exportSyncBundle(passphrase: secret(passphrase))
    let keyring = try vault.noteKeyring()
    let status = try vault.status()
    let items = try vault.items().map { attributes in
      VaultVectorFile.Expected.Item(
        name: attributes.name, label: attributes.label, class: attributes.itemClass.rawName,
        created: Int64(attributes.created.timeIntervalSince1970),
        modified: Int64(attributes.modified.timeIntervalSince1970),
        value: String(decoding: bytes(of: try vault.item(named: attributes.name).value), as: UTF8.self))
    }
    let retiredInKeyring = try resealed(vault, change: { $0.retired = [keyring.primaryID] })
    let retiredEmpty = try resealed(
      vault,
      edit: { plaintext in
        // "RTRD", count 1, the id: make the count 0 and the id padding.
        let start = try #require(
          (0..<(plaintext.count - 4)).first { Array(plaintext[$0..<($0 + 4)]) == Array("RTRD".utf8) })
        plaintext.replaceSubrange((start + 4)..<(start + 12), with: [UInt8](repeating: 0, count: 8))
      })
    let bidiLabel = try resealed(
      vault,
      edit: { plaintext in
        // "Calendar token" -> "Calendar" U+202E "ken": same length, behind a valid tag.
        let label = Array("Calendar token".utf8)
        let start = try #require(
          (0...(plaintext.count - label.count)).first { Array(plaintext[$0..<($0 + label.count)]) == label })
        plaintext.replaceSubrange(
          start..<(start + label.count), with: Array("Calendar".utf8) + [0xe2, 0x80, 0xae] + Array("ken".utf8))
      })
    try vault.lock()
    let expected = VaultVectorFile.Expected(
      vaultID: status.vaultID, kdf: "\(status.kdfParameters)", generation: status.generation,
      primaryKeyID: keyring.primaryID.hex,
      noteKeys: keyring.keys.map { key in
        VaultVectorFile.Expected.Key(id: key.id.hex, key: key.key.withUnsafeBytes { Hex.encode(Array($0)) })
      },
      retiredKeyIDs: [third.id.hex],
      items: items, syncBundleItems: ["calendar/token"])

    var files = [String: [UInt8]]()
    var cases = [VaultVectorFile.Case]()
    func add(
      _ name: String, _ bytes: [UInt8], _ kind: String, _ expect: String, _ comment: String, pass: String = passphrase,
      device deviceName: String? = nil, _ deviceBytes: [UInt8]? = nil
    ) {
      if files[name] == nil { files[name] = bytes }
      if let deviceName, files[deviceName] == nil { files[deviceName] = deviceBytes }
      cases.append(
        VaultVectorFile.Case(
          id: cases.count + 1, file: name, deviceFile: deviceName, kind: kind, passphrase: pass, expect: expect,
          comment: comment))
    }
    add(
      "vault.tkv", good, "vault", "success", "with device.tkv: opens to expected.json (every item)",
      device: "device.tkv", device)
    add(
      "vault.tkv", good, "vault", "success",
      "without a device-only file (as after a restore): the synchronisable items only, device-only store empty")
    add(
      "vault.tkv", good, "vault", "wrong_passphrase", "the wrapped key fails to open",
      pass: "correct horse battery stapler")
    var flipped = good
    flipped[flipped.count - 1] ^= 0x01
    add("vault-bad-checksum.tkv", flipped, "vault", "damaged", "last checksum byte flipped")
    add("vault-truncated.tkv", Array(good[..<(good.count / 2)]), "vault", "damaged", "first half only")
    var version = good
    version[9] = 2
    add("vault-version-2.tkv", fixChecksum(version), "vault", "unsupported_version", "version 2, checksum recomputed")
    var store = good
    store[store.count - 100] ^= 0x01
    add(
      "vault-tampered-store.tkv", fixChecksum(store), "vault", "tampered",
      "synchronisable store ciphertext bit flipped, checksum recomputed")
    var costly = good
    costly[27] = 1
    costly.replaceSubrange(28..<36, with: [0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff])
    add(
      "vault-kdf-over-cap.tkv", fixChecksum(costly), "vault", "damaged",
      "calibrated preset asking for 4 TiB; refused before the KDF runs")
    var deviceWrapped = device
    deviceWrapped[40] ^= 0x01
    add(
      "vault.tkv", good, "vault", "tampered", "device-only wrapped key bit flipped, checksum recomputed",
      device: "device-tampered-wrapped-key.tkv", fixChecksum(deviceWrapped))
    var deviceStore = device
    deviceStore[deviceStore.count - 100] ^= 0x01
    add(
      "vault.tkv", good, "vault", "tampered", "device-only store ciphertext bit flipped, checksum recomputed",
      device: "device-tampered-store.tkv", fixChecksum(deviceStore))
    var deviceGeneration = device
    deviceGeneration[94] ^= 0x01
    add(
      "vault.tkv", good, "vault", "tampered", "device-only generation changed (in the store AAD), checksum recomputed",
      device: "device-generation-changed.tkv", fixChecksum(deviceGeneration))
    var otherVault = device
    otherVault[10] ^= 0x01
    add(
      "vault.tkv", good, "vault", "damaged", "device-only file of another vault (vault id differs)",
      device: "device-other-vault.tkv", fixChecksum(otherVault))
    var deviceVersion = device
    deviceVersion[9] = 2
    add(
      "vault.tkv", good, "vault", "unsupported_version", "device-only file version 2, checksum recomputed",
      device: "device-version-2.tkv", fixChecksum(deviceVersion))
    var deviceChecksum = device
    deviceChecksum[deviceChecksum.count - 1] ^= 0x01
    add(
      "vault.tkv", good, "vault", "damaged", "device-only file: last checksum byte flipped",
      device: "device-bad-checksum.tkv", deviceChecksum)
    // A device-only fault with a wrong passphrase: steps 1-5 of the
    // device-only file run before the KDF, so the fault is reported.
    for (deviceName, deviceBytes, expect) in [
      ("device-bad-checksum.tkv", deviceChecksum, "damaged"),
      ("device-version-2.tkv", fixChecksum(deviceVersion), "unsupported_version"),
      ("device-other-vault.tkv", fixChecksum(otherVault), "damaged"),
    ] {
      add(
        "vault.tkv", good, "vault", expect,
        "\(deviceName) with a wrong passphrase: the device-only file's checks run before the KDF",
        pass: "correct horse battery stapler", device: deviceName, deviceBytes)
    }
    add("sync.tksync", bundle, "sync", "success", "carries the keys and calendar/token only")
    add("sync.tksync", bundle, "sync", "wrong_passphrase", "passphrase check differs", pass: "wrong")
    var tamperedBundle = bundle
    tamperedBundle[tamperedBundle.count - 60] ^= 0x01
    add(
      "sync-tampered.tksync", fixChecksum(tamperedBundle), "sync", "tampered",
      "payload bit flipped, checksum recomputed")
    add(
      "vault-retired-in-keyring.tkv", retiredInKeyring, "vault", "damaged",
      "a retired key id that is also in the keyring (store resealed under the right key)")
    add(
      "vault-retired-empty.tkv", retiredEmpty, "vault", "damaged",
      "a retired-key section that lists no id (store resealed under the right key)")
    add(
      "vault-label-bidi.tkv", bidiLabel, "vault", "damaged",
      "an item label holding U+202E, a bidirectional control (store resealed under the right key)")
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let file = VaultVectorFile(
      description:
        "TaskKey vault file and sync bundle, version 1 (SECURITY.md). Every vault uses the fast test preset and "
        + "the passphrase '\(passphrase)'. Made by VaultVectors.generate() with a fixed seed; see Vectors/README.md.",
      files: "vault-v1", expected: expected, tests: cases)
    var result = ["vault-v1.json": Array(try encoder.encode(file)) + [0x0a]]
    for (name, bytes) in files { result["vault-v1/" + name] = bytes }
    return result
  }
}

@Suite("Vectors/vault-v1", .serialized)
struct VaultVectorGenerationTests {
  @Test func vectorsMatchTheDeterministicGenerator() throws {
    let drifted = try CommittedVectors.drifted(try VaultVectors.generate())
    #expect(drifted.isEmpty, "Vectors/\(drifted) drifted; run 'make vectors' and review")
  }

  @Test func everyVectorHasItsDocumentedOutcome() throws {
    let path = VaultVectors.vectors.appendingPathComponent("vault-v1.json").path
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let file = try JSONDecoder().decode(VaultVectorFile.self, from: data)
    #expect(file.tests.count >= 10)
    #expect(
      Set(file.tests.map(\.expect)) == ["success", "wrong_passphrase", "damaged", "tampered", "unsupported_version"])
    var report = VectorReport(path: path)
    try VaultVectorChecker.check(data, path: path, readers: .taskkey, into: &report)
    #expect(report.passed == file.tests.count)
    #expect(report.failures.isEmpty, "\(report.failures)")
  }

  @Test func theCheckerCatchesAVectorWhoseExpectationIsWrong() throws {
    let path = VaultVectors.vectors.appendingPathComponent("vault-v1.json").path
    var file = try JSONDecoder().decode(VaultVectorFile.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    file.expected.items[0].value = "something else"
    var report = VectorReport(path: path)
    try VaultVectorChecker.check(try JSONEncoder().encode(file), path: path, readers: .taskkey, into: &report)
    // Every success case that holds the changed item fails; the rest pass.
    #expect(report.failed > 0)
    #expect(report.failures.count == report.failed)
    #expect(report.passed + report.failed == file.tests.count)
  }
}
