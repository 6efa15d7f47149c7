import Foundation
import Glibc
import TaskKeyTestSupport
import Testing

@testable import TaskCrypto
@testable import TaskVault

/// The committed vectors in `Vectors/vault-v1/` (described in
/// Vectors/README-vault.md and SECURITY.md). Generation is deterministic:
/// every random byte and nonce comes from SHA-256 in counter mode over a
/// fixed seed, through test-only seams. `TASKKEY_WRITE_VECTORS=1` rewrites
/// the files; otherwise the test fails when they drift.
enum VaultVectors {
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/vault-v1")
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

  struct Expected: Codable, Equatable {
    struct Key: Codable, Equatable {
      let id: String
      let key: String
    }
    struct Item: Codable, Equatable {
      let name: String
      let label: String
      let `class`: String
      let created: Int64
      let modified: Int64
      let value: String
    }
    let passphrase: String
    let vaultID: String
    let kdf: String
    let generation: UInt64
    let primaryKeyID: String
    let noteKeys: [Key]
    let items: [Item]
    let syncBundleItems: [String]
  }

  struct Case: Codable, Equatable {
    let file: String
    let kind: String
    let passphrase: String
    let expect: String
    let comment: String
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
    let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/vault.tkv")))
    let bundle = try vault.exportSyncBundle(passphrase: secret(passphrase))
    let keyring = try vault.noteKeyring()
    let status = try vault.status()
    let items = try vault.items().map { attributes in
      Expected.Item(
        name: attributes.name, label: attributes.label, class: attributes.itemClass.rawName,
        created: Int64(attributes.created.timeIntervalSince1970),
        modified: Int64(attributes.modified.timeIntervalSince1970),
        value: String(decoding: bytes(of: try vault.item(named: attributes.name).value), as: UTF8.self))
    }
    try vault.lock()
    let expected = Expected(
      passphrase: passphrase, vaultID: status.vaultID, kdf: "\(status.kdfParameters)", generation: status.generation,
      primaryKeyID: keyring.primaryID.hex,
      noteKeys: keyring.keys.map { key in
        Expected.Key(id: key.id.hex, key: key.key.withUnsafeBytes { encodeHex(Array($0)) })
      },
      items: items, syncBundleItems: ["calendar/token"])

    var files = [String: [UInt8]]()
    var cases = [Case]()
    func add(
      _ name: String, _ bytes: [UInt8], _ kind: String, _ expect: String, _ comment: String, pass: String = passphrase
    ) {
      if files[name] == nil { files[name] = bytes }
      cases.append(Case(file: name, kind: kind, passphrase: pass, expect: expect, comment: comment))
    }
    add("vault.tkv", good, "vault", "success", "opens to expected.json")
    add("vault.tkv", good, "vault", "wrong_passphrase", "both wrapped keys fail", pass: "correct horse battery stapler")
    var flipped = good
    flipped[flipped.count - 1] ^= 0x01
    add("vault-bad-checksum.tkv", flipped, "vault", "damaged", "last checksum byte flipped")
    add("vault-truncated.tkv", Array(good[..<1000]), "vault", "damaged", "first 1000 bytes only")
    var version = good
    version[9] = 2
    add("vault-version-2.tkv", fixChecksum(version), "vault", "unsupported_version", "version 2, checksum recomputed")
    var store = good
    store[store.count - 100] ^= 0x01
    add(
      "vault-tampered-store.tkv", fixChecksum(store), "vault", "tampered",
      "device-only store ciphertext bit flipped, checksum recomputed")
    var wrapped = good
    wrapped[130] ^= 0x01
    add(
      "vault-tampered-wrapped-key.tkv", fixChecksum(wrapped), "vault", "tampered",
      "device-only wrapped key bit flipped, checksum recomputed")
    var costly = good
    costly[27] = 1
    costly.replaceSubrange(28..<36, with: [0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff])
    add(
      "vault-kdf-over-cap.tkv", fixChecksum(costly), "vault", "damaged",
      "calibrated preset asking for 4 TiB; refused before the KDF runs")
    add("sync.tksync", bundle, "sync", "success", "carries the keys and calendar/token only")
    add("sync.tksync", bundle, "sync", "wrong_passphrase", "passphrase check differs", pass: "wrong")
    var tamperedBundle = bundle
    tamperedBundle[tamperedBundle.count - 60] ^= 0x01
    add(
      "sync-tampered.tksync", fixChecksum(tamperedBundle), "sync", "tampered",
      "payload bit flipped, checksum recomputed")
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    files["expected.json"] = Array(try encoder.encode(expected)) + [0x0a]
    files["manifest.json"] = Array(try encoder.encode(cases)) + [0x0a]
    return files
  }
}

@Suite("Vectors/vault-v1", .serialized)
struct VaultVectorGenerationTests {
  @Test func vectorsMatchTheDeterministicGenerator() throws {
    let files = try VaultVectors.generate()
    if ProcessInfo.processInfo.environment["TASKKEY_WRITE_VECTORS"] == "1" {
      try FileManager.default.createDirectory(at: VaultVectors.directory, withIntermediateDirectories: true)
      for (name, bytes) in files {
        try Data(bytes).write(to: VaultVectors.directory.appendingPathComponent(name))
      }
    }
    for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
      let committed = try Data(contentsOf: VaultVectors.directory.appendingPathComponent(name))
      #expect([UInt8](committed) == bytes, "Vectors/vault-v1/\(name) drifted; run 'make vectors' and review")
    }
  }

  @Test func everyVectorHasItsDocumentedOutcome() throws {
    let manifest = try JSONDecoder().decode(
      [VaultVectors.Case].self, from: Data(contentsOf: VaultVectors.directory.appendingPathComponent("manifest.json")))
    let expected = try JSONDecoder().decode(
      VaultVectors.Expected.self, from: Data(contentsOf: VaultVectors.directory.appendingPathComponent("expected.json"))
    )
    #expect(manifest.count >= 10)
    for vector in manifest {
      let bytes = [UInt8](try Data(contentsOf: VaultVectors.directory.appendingPathComponent(vector.file)))
      let outcome = try Self.outcome(of: vector, bytes: bytes, expected: expected)
      #expect(outcome == vector.expect, "\(vector.file) with '\(vector.passphrase)': \(vector.comment)")
    }
  }

  /// Opens one vector and names the outcome from the closed set.
  static func outcome(of vector: VaultVectors.Case, bytes file: [UInt8], expected: VaultVectors.Expected) throws
    -> String
  {
    let machine = try TestMachine()
    do {
      switch vector.kind {
      case "vault":
        try FileManager.default.createDirectory(atPath: machine.vaultDirectory, withIntermediateDirectories: false)
        chmod(machine.vaultDirectory, 0o700)
        try machine.writeVault(file)
        let vault = try machine.open()
        try vault.unlock(passphrase: secret(vector.passphrase))
        let keyring = try vault.noteKeyring()
        #expect(keyring.primaryID.hex == expected.primaryKeyID)
        #expect(keyring.keys.map { $0.id.hex } == expected.noteKeys.map(\.id))
        #expect(
          keyring.keys.map { key in key.key.withUnsafeBytes { encodeHex(Array($0)) } } == expected.noteKeys.map(\.key))
        let status = try vault.status()
        #expect(status.vaultID == expected.vaultID)
        #expect(status.generation == expected.generation)
        #expect("\(status.kdfParameters)" == expected.kdf)
        let items = try vault.items()
        #expect(items.map(\.name) == expected.items.map(\.name))
        for item in expected.items {
          let found = try vault.item(named: item.name)
          #expect(String(decoding: bytes(of: found.value), as: UTF8.self) == item.value)
          #expect(found.attributes.label == item.label)
          #expect(found.attributes.itemClass.rawName == item.class)
          #expect(Int64(found.attributes.created.timeIntervalSince1970) == item.created)
          #expect(Int64(found.attributes.modified.timeIntervalSince1970) == item.modified)
        }
      default:
        let vault = try machine.create()
        try vault.unlock(passphrase: secret("correct horse"))
        let report = try vault.importSyncBundle(file, passphrase: secret(vector.passphrase))
        #expect(report.addedKeyIDs.map(\.hex) == expected.noteKeys.map(\.id))
        #expect(report.addedItems == expected.syncBundleItems)
      }
      return "success"
    } catch let error as TaskVaultError {
      switch error {
      case .wrongPassphrase: return "wrong_passphrase"
      case .damaged: return "damaged"
      case .tampered: return "tampered"
      case .unsupportedVersion: return "unsupported_version"
      default: return "other: \(error)"
      }
    }
  }
}
