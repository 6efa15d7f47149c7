import FoundationEssentials
import TaskCrypto
import TaskVault

/// Checks `Vectors/sync-import-v1.json`: each case merges a bundle's store
/// into a local synchronisable store with `SyncMerge` (the code
/// `sync import` runs), without files, and compares the result with the
/// case's. The schema is in `Vectors/README.md`.
public enum SyncImportVectors {
  /// The format this checker reads.
  public static let format = "sync-import"

  /// Checks one file.
  ///
  /// - Returns: how many cases ran and one line per failed case, or nil when
  ///   the file is not a `sync-import` file.
  /// - Throws: a decoding error when the file does not follow the schema.
  public static func check(_ data: Data) throws -> (cases: Int, failures: [String])? {
    let file = try JSONDecoder().decode(File.self, from: data)
    guard file.format == format, file.version == 1 else { return nil }
    return (file.tests.count, file.tests.compactMap(check))
  }

  static func check(_ test: Case) -> String? {
    let name = "case \(test.id) (\(test.comment))"
    do {
      let local = try test.local.contents()
      let incoming = try test.bundle.contents()
      guard let choice = test.choice else { return "\(name): both 'adopt_primary' and 'keep_primary'" }
      let outcome = Result {
        try VaultReaders.mergeSync(
          incoming, into: local, deviceOnlyNames: test.local.deviceOnlyItems.sorted(), primary: choice)
      }
      switch (outcome, test.result) {
      case (.failure(TaskVaultError.keyConflict), "invalid") where test.error == "key_conflict": return nil
      case (.failure(TaskVaultError.retiredKey), "invalid") where test.error == "retired_key": return nil
      case (.failure(let error), _): return "\(name): got \(error)"
      case (.success, "invalid"): return "\(name): expected \(test.error ?? "?"), but it merged"
      case (.success(let merged), _):
        guard let expected = test.expected, Store(merged) == expected else {
          return "\(name): merged to another store"
        }
        return nil
      }
    } catch {
      return "\(name): \(error)"
    }
  }

  /// The file.
  struct File: Codable, Equatable {
    var format: String
    var version: Int
    var description: String
    var tests: [Case]
  }

  /// One case: merge `bundle` into `local`.
  struct Case: Codable, Equatable {
    var id: Int
    var comment: String
    var local: Store
    var bundle: Store
    /// Import with `--adopt-primary`.
    var adoptPrimary: Bool
    /// Import with `--keep-primary` (absent: false). Neither option: the
    /// automatic choice.
    var keepPrimary: Bool?
    /// `valid` (merges to `expected`) or `invalid` (refused with `error`,
    /// nothing written).
    var result: String
    var error: String?
    var expected: Store?

    enum CodingKeys: String, CodingKey {
      case id, comment, local, bundle, result, error, expected
      case adoptPrimary = "adopt_primary"
      case keepPrimary = "keep_primary"
    }

    /// The option the case imports with, or nil when it names both.
    var choice: SyncPrimaryChoice? {
      switch (adoptPrimary, keepPrimary ?? false) {
      case (true, true): return nil
      case (true, false): return .adopt
      case (false, true): return .keep
      case (false, false): return .automatic
      }
    }
  }

  /// A synchronisable store: keys (id → key hex), primary, retired ids,
  /// items; `deviceOnlyItems` names the local device-only items.
  struct Store: Codable, Equatable {
    var keys: [String: String]
    var primary: String
    var retired: [String]
    var items: [Item]
    var deviceOnlyItems: [String] = []

    enum CodingKeys: String, CodingKey {
      case keys, primary, retired, items
      case deviceOnlyItems = "device_only_items"
    }

    init(keys: [String: String], primary: String, retired: [String], items: [Item], deviceOnlyItems: [String] = []) {
      (self.keys, self.primary, self.retired, self.items) = (keys, primary, retired, items)
      self.deviceOnlyItems = deviceOnlyItems
    }

    init(from decoder: any Decoder) throws {
      let c = try decoder.container(keyedBy: CodingKeys.self)
      keys = try c.decode([String: String].self, forKey: .keys)
      primary = try c.decode(String.self, forKey: .primary)
      retired = try c.decode([String].self, forKey: .retired)
      items = try c.decode([Item].self, forKey: .items)
      deviceOnlyItems = try c.decodeIfPresent([String].self, forKey: .deviceOnlyItems) ?? []
    }

    /// The store as the merge leaves it, in this schema.
    init(_ store: VaultReaders.SyncStore) {
      self.init(
        keys: Dictionary(
          uniqueKeysWithValues: store.keyring.keys.map {
            ($0.id.hex, $0.key.withUnsafeBytes { Hex.encode(Array($0)) })
          }),
        primary: store.keyring.primaryID.hex, retired: store.retired.map(\.hex).sorted(),
        items: store.items.map { item in
          Item(
            name: item.name, modified: item.modified,
            value: item.value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        })
    }

    /// The store in the merge's terms.
    ///
    /// - Throws: `TaskCryptoError` for a malformed key or key id.
    func contents() throws -> VaultReaders.SyncStore {
      let noteKeys = try keys.sorted { $0.key < $1.key }.map { id, key in
        try Array("\(id):\(key)".utf8).withUnsafeBytes { try NoteKey.parseKeyFile($0) }
      }
      return VaultReaders.SyncStore(
        keyring: try Keyring(keys: noteKeys, primaryID: try KeyID(hex: primary)),
        retired: try retired.map { try KeyID(hex: $0) }, items: try items.map { try $0.stored() })
    }
  }

  /// A synchronisable item: name, `modified` (Unix seconds), UTF-8 value.
  struct Item: Codable, Equatable {
    var name: String
    var modified: Int64
    var value: String

    /// The item in the merge's terms.
    ///
    /// - Throws: `TaskCryptoError` when locked memory is refused.
    func stored() throws -> (name: String, modified: Int64, value: SecureBytes) {
      (name, modified, try Array(value.utf8).withUnsafeBytes { try SecureBytes(copying: $0) })
    }
  }
}
