import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskVault
import Testing

@testable import BackupRules
@testable import TaskKeyCLI
@testable import TaskKeyVectors

/// `Vectors/backup-v1.json` and `Vectors/backup-v1/`: made from the
/// committed vault vector `Vectors/vault-v1/vault.tkv`, so generation is
/// deterministic (the backup tag is an HMAC; nothing is random).
/// `TASKKEY_WRITE_VECTORS=1` rewrites the files; otherwise the test fails
/// when they drift.
enum BackupVectors {
  static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors")
  static let passphrase = "correct horse battery staple"
  static let created: Int64 = 1_800_000_300

  static func generate() throws -> [String: [UInt8]] {
    let vaultFile = [UInt8](try Data(contentsOf: vectors.appendingPathComponent("vault-v1/vault.tkv")))
    let snapshot = try Vault.openSnapshot(vaultFile, passphrase: secret(passphrase), label: "vault-v1/vault.tkv")
    let good = BackupFile.encode(snapshot, created: created)
    var files = [String: [UInt8]]()
    var cases = [BackupVectorFile.Case]()
    func add(_ name: String, _ bytes: [UInt8], _ expect: String, _ comment: String, pass: String = passphrase) {
      if files[name] == nil { files[name] = bytes }
      cases.append(.init(id: cases.count + 1, file: name, passphrase: pass, expect: expect, comment: comment))
    }
    func retag(_ bytes: [UInt8]) -> [UInt8] {
      let body = Array(bytes.dropLast(32))
      return body + HMACSHA256.authenticationCode(for: body, using: snapshot.backupAuthenticationKey)
    }
    func rechecksumInner(_ bytes: [UInt8]) -> [UInt8] {
      var out = bytes
      let inner = Array(bytes[46..<(bytes.count - 32)])
      let body = Array(inner.dropLast(32))
      out.replaceSubrange(46..<(bytes.count - 32), with: body + SHA256.hash(data: body).bytes)
      return out
    }
    add("backup.tkbackup", good, "success", "opens to expected")
    add("backup.tkbackup", good, "wrong_passphrase", "the vault file's key fails to unwrap", pass: "wrong")
    var magic = good
    magic[0] ^= 0x01
    add("backup-bad-magic.tkbackup", magic, "damaged", "first magic byte flipped")
    var version = good
    version[9] = 2
    add("backup-version-2.tkbackup", version, "unsupported_version", "envelope version 2")
    add("backup-truncated.tkbackup", Array(good.dropLast()), "damaged", "last byte missing: length field disagrees")
    var length = good
    length[45] &+= 1
    add("backup-length-mismatch.tkbackup", retag(length), "damaged", "vault file length field + 1, tag recomputed")
    var generation = good
    generation[33] ^= 0x01
    add(
      "backup-header-generation.tkbackup", retag(generation), "damaged",
      "header generation differs from the vault file's, tag recomputed")
    var created = good
    created[41] ^= 0x01
    add("backup-tampered-created.tkbackup", created, "tampered", "created time changed: only the tag covers it")
    var tag = good
    tag[tag.count - 1] ^= 0x01
    add("backup-tampered-tag.tkbackup", tag, "tampered", "last tag byte flipped")
    var innerChecksum = good
    innerChecksum[good.count - 33] ^= 0x01
    add(
      "backup-inner-checksum.tkbackup", retag(innerChecksum), "damaged",
      "the vault file's own SHA-256 fails, tag recomputed")
    var innerStore = good
    innerStore[good.count - 32 - 32 - 100] ^= 0x01
    add(
      "backup-inner-store-tampered.tkbackup", rechecksumInner(innerStore), "tampered",
      "a sealed store byte flipped, the vault file's checksum recomputed (the tag no longer matches either)")
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let file = BackupVectorFile(
      description:
        "TaskKey backup file, version 1 (SECURITY.md, Backups). Made from Vectors/vault-v1/vault.tkv with the "
        + "passphrase '\(passphrase)' by BackupVectors.generate(); see Vectors/README.md.",
      files: "backup-v1",
      expected: .init(
        vaultID: snapshot.vaultID.map { String(format: "%02x", $0) }.joined(), generation: snapshot.generation,
        created: BackupVectors.created, noteKeyCount: snapshot.noteKeyCount, items: snapshot.itemNames),
      tests: cases)
    var result = ["backup-v1.json": Array(try encoder.encode(file)) + [0x0a]]
    for (name, bytes) in files { result["backup-v1/" + name] = bytes }
    return result
  }
}

@Suite("Vectors/backup-v1", .serialized)
struct BackupVectorGenerationTests {
  @Test func vectorsMatchTheDeterministicGenerator() throws {
    let drifted = try CommittedVectors.drifted(try BackupVectors.generate())
    #expect(drifted.isEmpty, "Vectors/\(drifted) drifted; run 'make vectors' and review")
  }

  @Test func everyVectorHasItsDocumentedOutcome() throws {
    let path = BackupVectors.vectors.appendingPathComponent("backup-v1.json").path
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let file = try JSONDecoder().decode(BackupVectorFile.self, from: data)
    #expect(
      Set(file.tests.map(\.expect)) == ["success", "wrong_passphrase", "damaged", "tampered", "unsupported_version"])
    var report = VectorReport(path: path)
    try BackupVectorChecker.check(data, path: path, readers: .taskkey, into: &report)
    #expect(report.passed == file.tests.count)
    #expect(report.failures.isEmpty, "\(report.failures)")
  }
}
