import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskVault

/// The head of the receipt chain: `receipts.head` in the Tasker home, one
/// ASCII line (docs/formats/receipt.md, *The head*):
///
///     tasker-receipt-head 1 <id> <chain> <mac>\n
///
/// `id` in canonical decimal (≥ 1), `chain` and `mac` 64 lowercase hex
/// digits, `mac` = HMAC-SHA-256 under the device-only vault item
/// `tasker/receipt-head-key` of the line's bytes before the space that
/// precedes it. A database writer without the vault cannot make a head
/// that verifies, so it cannot move the anchor.
public struct ReceiptHead: Sendable, Equatable {
  /// The format's version: 1.
  public static let version = 1
  /// The line's first word.
  public static let magic = "tasker-receipt-head"
  /// The file's name in the Tasker home.
  public static let fileName = "receipts.head"
  /// The vault item holding the 32-byte key (device-only).
  public static let keyItemName = "tasker/receipt-head-key"
  /// The longest file a reader accepts: 256 bytes.
  public static let maximumByteCount = 256

  /// The newest receipt the head anchors.
  public var id: Int64
  /// Its chain value, 32 bytes.
  public var chain: [UInt8]
  /// The authentication code, 32 bytes.
  public var mac: [UInt8]

  /// The bytes the code covers: `tasker-receipt-head 1 <id> <chain hex>`.
  public static func authenticated(id: Int64, chain: [UInt8]) -> [UInt8] {
    Array("\(magic) \(version) \(id) \(chain.lowercaseHex)".utf8)
  }

  /// A head for (`id`, `chain`) authenticated under `key`.
  public init(id: Int64, chain: [UInt8], key: SymmetricKey) {
    self.id = id
    self.chain = chain
    mac = HMACSHA256.authenticationCode(for: Self.authenticated(id: id, chain: chain), using: key)
  }

  init(id: Int64, chain: [UInt8], mac: [UInt8]) {
    self.id = id
    self.chain = chain
    self.mac = mac
  }

  /// The file's bytes.
  public var encoded: [UInt8] { Self.authenticated(id: id, chain: chain) + Array(" \(mac.lowercaseHex)\n".utf8) }

  /// Reads a head strictly: exactly the line above, nothing before or
  /// after, every field canonical (re-encoding gives the same bytes).
  ///
  /// - Returns: nil for any other bytes.
  public static func parse(_ bytes: [UInt8]) -> ReceiptHead? {
    guard bytes.count <= maximumByteCount, bytes.last == 0x0a else { return nil }
    let words = bytes.dropLast().split(separator: 0x20, omittingEmptySubsequences: false).map {
      String(decoding: $0, as: UTF8.self)
    }
    guard words.count == 5, words[0] == magic, words[1] == "\(version)",
      let id = GateReceipt.id(Substring(words[2])),
      let chain = SHA256Digest(hex: words[3]), let mac = SHA256Digest(hex: words[4])
    else { return nil }
    let head = ReceiptHead(id: id, chain: chain.bytes, mac: mac.bytes)
    return head.encoded == bytes ? head : nil
  }

  /// Whether the code verifies under `key` (constant time).
  public func isAuthentic(under key: SymmetricKey) -> Bool {
    HMACSHA256.isValidAuthenticationCode(mac, authenticating: Self.authenticated(id: id, chain: chain), using: key)
  }
}

/// Where the head's key is kept, out of the database's reach.
public protocol ReceiptHeadKeys {
  /// The head key, made (32 random bytes, device-only) when `create` and
  /// there is none; nil when there is none and `create` is false.
  ///
  /// - Throws: `TaskerError.vaultLocked`, `.vaultNotFound`, `.vault`,
  ///   `.receiptHeadKeyUnusable` (not 32 bytes, or not device-only).
  func receiptHeadKey(create: Bool) throws -> SymmetricKey?
}

extension NoteKeySource {
  /// A source keeps no head key unless it says so (then no head is written).
  public var receiptHeadKeys: (any ReceiptHeadKeys)? { nil }
}

extension VaultKeySource: ReceiptHeadKeys {
  /// The vault: the head key is a device-only item in it.
  public var receiptHeadKeys: (any ReceiptHeadKeys)? { self }

  /// Reads (or makes) the vault item `tasker/receipt-head-key`. The key
  /// read is kept for this process (in `SecureBytes`, TaskCrypto's locked
  /// and wiped memory) with the vault's unlock stamp taken before it, and
  /// used again only while `Vault.isStillUnlocked(since:)` says nothing
  /// the unlock state depends on changed; otherwise it is dropped and the
  /// vault read again, so `taskkey lock` stops head signing at the next
  /// receipt.
  ///
  /// - Throws: as `ReceiptHeadKeys.receiptHeadKey(create:)`.
  public func receiptHeadKey(create: Bool) throws -> SymmetricKey? {
    guard let directory else { throw TaskerError.noVaultLocation }
    return try TaskerError.withVault(at: directory) { vault in
      if let kept = ReceiptHeadKeyCache.shared.key(for: directory, stillValid: vault.isStillUnlocked) { return kept }
      // Taken before the item is read: a lock in between fails the read,
      // and any later change makes the stamp stale.
      let stamp = try vault.unlockStamp()
      guard let key = try Self.readHeadKey(vault, create: create) else { return nil }
      if let stamp { ReceiptHeadKeyCache.shared.keep(key, for: directory, stamp: stamp) }
      return key
    }
  }

  /// The head key as stored in the vault, checked; made when `create`
  /// and there is none.
  private static func readHeadKey(_ vault: Vault, create: Bool) throws -> SymmetricKey? {
    let item: VaultItem
    do {
      item = try vault.item(named: ReceiptHead.keyItemName)
    } catch TaskVaultError.itemNotFound {
      guard create else { return nil }
      let key = try SecureBytes.random(count: SymmetricKey.byteCount)
      try vault.setItem(
        key, named: ReceiptHead.keyItemName, label: "Tasker receipt head key", class: .afterFirstUnlockThisDeviceOnly)
      return try SymmetricKey(bytes: key)
    }
    guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly, item.value.count == SymmetricKey.byteCount
    else { throw TaskerError.receiptHeadKeyUnusable(item: ReceiptHead.keyItemName) }
    return try SymmetricKey(bytes: item.value)
  }
}

/// The head key one process read, with the unlock stamp it was read
/// under: `SymmetricKey` keeps its bytes in `SecureBytes`. One per vault
/// directory; dropped as soon as a check finds the stamp stale.
final class ReceiptHeadKeyCache: @unchecked Sendable {
  static let shared = ReceiptHeadKeyCache()

  private let lock = ThreadLock()
  private var kept: (directory: String, key: SymmetricKey, stamp: UnlockStamp)?

  /// The kept key of `directory` while `stillValid(stamp)` holds; else
  /// drops it and returns nil.
  func key(for directory: String, stillValid: (UnlockStamp) -> Bool) -> SymmetricKey? {
    lock.withLock {
      guard let kept, kept.directory == directory else { return nil }
      guard stillValid(kept.stamp) else {
        self.kept = nil
        return nil
      }
      return kept.key
    }
  }

  /// Keeps `key`, read from `directory` under `stamp`.
  func keep(_ key: SymmetricKey, for directory: String, stamp: UnlockStamp) {
    lock.withLock { kept = (directory, key, stamp) }
  }
}

extension TaskStore {
  /// `receipts.head` beside the database.
  public var receiptHeadPath: String { TaskerFiles.directory(of: databasePath) + "/" + ReceiptHead.fileName }

  /// The head file's bytes, or nil when there is none.
  ///
  /// - Throws: `TaskerError.system` (not owner-only, too large, unreadable).
  public func receiptHeadBytes() throws -> [UInt8]? {
    try TaskerFiles.system { try OpenFile.readOwnerOnly(receiptHeadPath, limit: ReceiptHead.maximumByteCount) }
  }

  /// Brings the head up to the newest receipt, after a receipt committed.
  /// Never fails the write: a locked vault (or any other error) leaves
  /// the head as it was, and the next write with the vault readable moves
  /// it. It never moves back: a head that verifies and names a newer
  /// receipt (another process's) is kept.
  func updateReceiptHead(id: Int64, chain: [UInt8]) {
    guard let keys = receiptHeadKeys else { return }
    do {
      guard let key = try keys.receiptHeadKey(create: true) else { return }
      var newest = (id: id, chain: chain)
      let row = try connection.prepare("SELECT id, chain FROM gate_receipts ORDER BY id DESC LIMIT 1").first {
        row -> (Int64, [UInt8]?) in (row.integer(0), row.optionalChain(1))
      }
      if let row, row.0 > id, let stored = row.1, stored.count == SHA256.byteCount {
        newest = (row.0, stored)
      }
      if let bytes = try receiptHeadBytes(), let old = ReceiptHead.parse(bytes), old.isAuthentic(under: key),
        old.id > newest.id
      {
        return
      }
      let head = ReceiptHead(id: newest.id, chain: newest.chain, key: key)
      try TaskerFiles.system { try files.fileSystem.replace(receiptHeadPath, contents: head.encoded) }
    } catch {
      return
    }
  }
}
