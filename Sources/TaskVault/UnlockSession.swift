import FoundationEssentials
import TaskCrypto
import TaskSystem

/// The after-first-unlock state of one vault: the two master keys sealed
/// under a session key in `device-only/unlock.session`, and the session key
/// itself in the runtime directory (memory that a reboot clears). It ends at
/// a reboot (new boot id, runtime directory emptied), at `lock`, or when
/// the optional time limit passes. The passphrase is never stored.
struct UnlockSession {
  let layout: VaultLayout
  let environment: VaultEnvironment

  /// The session key file of this home, and the one a new session writes
  /// first (`.next`), renamed over it once the session file is in place.
  func keyFiles(vaultID: [UInt8]) throws -> (current: String, next: String) {
    let runtime = try environment.runtimeDirectory()
    let current = try system { try layout.sessionKeyFile(in: runtime, vaultID: vaultID) }
    return (current, current + ".next")
  }

  /// Starts a session for the vault `vaultID` holding `keys`: a fresh
  /// session key to `<key file>.next`, then the sealed master keys, then the
  /// key renamed into place. A failure at any step leaves a running session
  /// as it was: its session file and key file are untouched until the new
  /// session file is written, and readers try `.next` when the key file does
  /// not open the session file.
  func begin(file: VaultFile, keys: VaultKeys, for duration: Duration?) throws {
    let now = environment.now()
    try begin(file: file, keys: keys, notAfter: duration.map { now + max(1, $0.components.seconds) } ?? 0)
  }

  /// Starts a session that ends at `notAfter` (0: at reboot or lock), as
  /// `begin(file:keys:for:)`; a passphrase change uses it to keep the
  /// running session's limit while binding the new header.
  func begin(file: VaultFile, keys: VaultKeys, notAfter: Int64) throws {
    let vaultID = file.vaultID
    let headerDigest = file.headerDigest
    let bootID = try environment.bootID()
    let now = environment.now()
    let sessionKey = try environment.randomKey()
    let files = try keyFiles(vaultID: vaultID)
    let keyBytes = try SessionKeyFile.encode(bootID: bootID, key: sessionKey)
    try keyBytes.withUnsafeBytes { try environment.replaceFile(files.next, with: $0) }
    let master = try wrapCrypto { try SecureBytes(zeroedCount: 64) }
    master.withUnsafeMutableBytes { out in
      for (index, key) in [keys.sync, keys.deviceWrap].enumerated() {
        key.withUnsafeBytes {
          out.baseAddress!.advanced(by: 32 * index).copyMemory(from: $0.baseAddress!, byteCount: 32)
        }
      }
    }
    let aad = SessionFile.aad(
      vaultID: vaultID, bootID: bootID, unlockedAt: now, notAfter: notAfter, headerDigest: headerDigest)
    let sealed = try master.withUnsafeBytes { plain in try environment.seal(plain, sessionKey, aad) }
    let session = SessionFile(
      vaultID: vaultID, bootID: bootID, unlockedAt: now, notAfter: notAfter, headerDigest: headerDigest,
      sealed: sealed)
    do {
      try session.encode().withUnsafeBytes { try environment.replaceFile(layout.sessionFile, with: $0) }
    } catch {
      try? system { try environment.fileSystem.unlink(files.next) }
      throw error
    }
    // From here the new session file is in place; should the rename fail,
    // readers find its key as `.next`.
    try system {
      try environment.fileSystem.move(files.next, to: files.current)
      try environment.fileSystem.fsyncDirectory(PosixFileSystem.directory(of: files.current))
    }
  }

  /// The master keys of the running session, or `.locked` with the reason.
  ///
  /// - Returns: the keys and the time limit (0 = until reboot or lock).
  func keys(file: VaultFile) throws -> (keys: VaultKeys, notAfter: Int64) {
    let vaultID = file.vaultID
    let bytes = try readSessionFile()
    return try Self.open(
      session: bytes, vaultID: vaultID, headerDigest: file.headerDigest, bootID: environment.bootID,
      now: environment.now(), vaultFile: layout.vaultFile
    ) { bootID in
      // An unsafe runtime directory is reported as such, not as "locked".
      let files = try keyFiles(vaultID: vaultID)
      let candidates = try [files.current, files.next].compactMap {
        try SessionKeyFile.read(path: $0, bootID: bootID)
      }
      if !candidates.isEmpty { try hardenProcess() }
      return candidates
    }
  }

  /// The session file's bytes, or nil when there is none (step 1). A file
  /// longer than a session is refused by step 2 without being read: the
  /// vault is locked, not damaged (the session is not part of the vault).
  ///
  /// - Throws: `TaskVaultError.locked(.notUnlocked)` for a longer file;
  ///   `.system` for an unsafe or unreadable one.
  func readSessionFile() throws -> [UInt8]? {
    do {
      return try OpenFile.readOwnerOnly(layout.sessionFile, limit: SessionFile.byteCount)
    } catch SystemError.tooLarge {
      throw TaskVaultError.locked(reason: .notUnlocked)
    } catch let error as SystemError {
      throw TaskVaultError.system(error)
    }
  }

  /// Steps 1 to 8 of docs/formats/unlock-session.md ("Reading") over bytes
  /// already read: the one reader of a session, used by every command and
  /// by the session vectors.
  ///
  /// - Parameters:
  ///   - bytes: the session file, or nil when there is none.
  ///   - vaultID: the vault file's id.
  ///   - headerDigest: SHA-256 of the vault file's bytes 0..<121 now.
  ///   - bootID: the kernel's current boot id (read only once step 2 passed).
  ///   - now: seconds since 1970.
  ///   - vaultFile: the vault file's path, named by `tampered`.
  ///   - sessionKeys: the usable session keys (the key file, then `.next`)
  ///     for the boot id; asked only after steps 1 to 4 passed.
  /// - Returns: the keys and the time limit (0 = until reboot or lock).
  /// - Throws: `TaskVaultError.locked` with the step's reason, `.tampered`
  ///   (step 7), or what `sessionKeys` throws.
  static func open(
    session bytes: [UInt8]?, vaultID: [UInt8], headerDigest: [UInt8], bootID currentBootID: () throws -> [UInt8],
    now: Int64, vaultFile: String, sessionKeys: ([UInt8]) throws -> [SymmetricKey]
  ) throws -> (keys: VaultKeys, notAfter: Int64) {
    guard let bytes else { throw TaskVaultError.locked(reason: .notUnlocked) }
    guard let session = SessionFile.parse(bytes), session.vaultID == vaultID else {
      throw TaskVaultError.locked(reason: .notUnlocked)
    }
    let bootID = try currentBootID()
    guard session.bootID == bootID else { throw TaskVaultError.locked(reason: .machineRestarted) }
    if session.notAfter != 0 && now >= session.notAfter {
      throw TaskVaultError.locked(reason: .expired)
    }
    let candidates = try sessionKeys(bootID)
    guard !candidates.isEmpty else { throw TaskVaultError.locked(reason: .sessionKeyGone) }
    // The key file, or the `.next` of an unlock between its two renames.
    guard
      let master = candidates.lazy.compactMap({
        try? AES.GCM.openSecret(session.sealed, using: $0, authenticating: session.aad)
      }).first
    else {
      // A session key from a later or interrupted unlock: not usable, so locked.
      throw TaskVaultError.locked(reason: .sessionKeyMismatch)
    }
    // The session is authentic; the header it was made for must be the one
    // on disk now, or the header was edited (with the checksum recomputed).
    guard ConstantTime.equals(session.headerDigest, headerDigest) else {
      throw TaskVaultError.tampered(
        path: vaultFile, part: "header (salt, KDF, creation time or wrapped key changed since unlock)")
    }
    let keys = try master.withUnsafeBytes { raw in
      try wrapCrypto {
        VaultKeys(
          sync: try SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: raw[0..<32])),
          deviceWrap: try SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: raw[32..<64])))
      }
    }
    // DWK is derived from MK_1; a session holding another one is refused
    // here, not later as a damaged device-only file.
    let derived = try DeviceFile.wrapKey(syncMasterKey: keys.sync, vaultID: vaultID)
    guard derived == keys.deviceWrap else { throw TaskVaultError.locked(reason: .sessionInconsistent) }
    return (keys, session.notAfter)
  }

  /// Ends the session: removes the session key of `vaultID` (and of the
  /// vault the session file names, should the vault file be damaged) from
  /// the runtime directory, then the session file. Ending no session is
  /// not an error.
  func end(vaultID: [UInt8]?) throws {
    var ids = vaultID.map { [$0] } ?? []
    if let bytes = try? readSessionFile(), let session = SessionFile.parse(bytes) {
      ids.append(session.vaultID)
    }
    let fileSystem = environment.fileSystem
    let keyFiles = ids.compactMap { try? self.keyFiles(vaultID: $0) }
    try system {
      for files in keyFiles {
        try fileSystem.unlink(files.current)
        try fileSystem.unlink(files.next)
      }
      try fileSystem.unlink(layout.sessionFile)
      if FileStatus.exists(layout.deviceOnlyDirectory) { try fileSystem.fsyncDirectory(layout.deviceOnlyDirectory) }
    }
  }
}

/// The session file `unlock.session` in the vault directory: the two store
/// master keys sealed under a session key that lives only in the tmpfs
/// runtime directory (SECURITY.md, "Unlocked state").
struct SessionFile {
  static let byteCount = 90 + 12 + 64 + 16
  static let aadByteCount = 90

  var vaultID: [UInt8]
  var bootID: [UInt8]
  var unlockedAt: Int64
  var notAfter: Int64  // 0 = until reboot or lock
  var headerDigest: [UInt8]  // SHA-256 of vault.tkv bytes 0..<121 at unlock
  var sealed: AES.GCM.SealedBox

  static func aad(vaultID: [UInt8], bootID: [UInt8], unlockedAt: Int64, notAfter: Int64, headerDigest: [UInt8])
    -> [UInt8]
  {
    var writer = ByteWriter()
    writer.append(FormatHeader.unlockSession.bytes)
    writer.append(vaultID)
    writer.append(bootID)
    writer.u64(UInt64(bitPattern: unlockedAt))
    writer.u64(UInt64(bitPattern: notAfter))
    writer.append(headerDigest)
    return writer.bytes
  }

  var aad: [UInt8] {
    Self.aad(
      vaultID: vaultID, bootID: bootID, unlockedAt: unlockedAt, notAfter: notAfter, headerDigest: headerDigest)
  }

  func encode() -> [UInt8] { aad + sealed.combined }

  static func parse(_ bytes: [UInt8]) -> SessionFile? {
    guard bytes.count == byteCount, FormatHeader.unlockSession.mismatch(in: bytes) == nil else { return nil }
    return bytes.withUnsafeBytes { buffer -> SessionFile? in
      var reader = ByteReader(buffer)
      guard (try? reader.take(10, "")) != nil, let vaultID = try? reader.bytes(16, ""),
        let bootID = try? reader.bytes(16, ""), let unlockedAt = try? reader.u64(""),
        let notAfter = try? reader.u64(""), let headerDigest = try? reader.bytes(32, ""),
        let rest = try? reader.bytes(92, ""), let sealed = try? AES.GCM.SealedBox(combined: rest)
      else { return nil }
      return SessionFile(
        vaultID: vaultID, bootID: bootID, unlockedAt: Int64(bitPattern: unlockedAt),
        notAfter: Int64(bitPattern: notAfter), headerDigest: headerDigest, sealed: sealed)
    }
  }
}

/// The session key file `<runtime dir>/<vault id hex>-<home>.key`
/// (`VaultLayout.sessionKeyFile(in:vaultID:)`):
/// `"TKSESKEY" || boot id (16) || session key (32)`, 56 bytes, 0600.
enum SessionKeyFile {
  static let magic: [UInt8] = Array("TKSESKEY".utf8)
  static let byteCount = 56

  /// Reads the key if the file exists, is private and names `bootID`.
  static func read(path: String, bootID: [UInt8]) throws -> SymmetricKey? {
    guard let file = try system({ try OpenFile.ownerOnly(path) }), file.size == byteCount else { return nil }
    let buffer = try wrapCrypto { try SecureBytes(zeroedCount: byteCount) }
    let total = try system { try buffer.withUnsafeMutableBytes { try file.read(into: $0) } }
    guard total == byteCount else { return nil }
    return try buffer.withUnsafeBytes { try parse($0, bootID: bootID) }
  }

  /// The key in a key file's bytes, or nil when they are not exactly 56
  /// bytes of the magic, `bootID` and a key (step 5 of "Reading").
  static func parse(_ bytes: UnsafeRawBufferPointer, bootID: [UInt8]) throws -> SymmetricKey? {
    guard bytes.count == byteCount, Array(bytes[0..<8]) == magic, Array(bytes[8..<24]) == bootID else { return nil }
    return try wrapCrypto { try SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: bytes[24..<56])) }
  }

  /// The file's bytes in locked memory.
  static func encode(bootID: [UInt8], key: SymmetricKey) throws -> SecureBytes {
    let bytes = try wrapCrypto { try SecureBytes(zeroedCount: byteCount) }
    bytes.withUnsafeMutableBytes { out in
      for (index, byte) in (magic + bootID).enumerated() { out[index] = byte }
      key.withUnsafeBytes { out.baseAddress!.advanced(by: 24).copyMemory(from: $0.baseAddress!, byteCount: 32) }
    }
    return bytes
  }
}
