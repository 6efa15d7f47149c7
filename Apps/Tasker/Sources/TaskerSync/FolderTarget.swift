import TaskSystem

/// A folder as the storage: one the user keeps in step with another tool
/// (Syncthing, Nextcloud's client, Dropbox) or carries (a USB stick).
/// Objects are written to `t/` and linked to their name, which fails when
/// the name exists, so a name never holds half an object and is never
/// replaced. A device's temporaries are named after it, so that it can
/// remove those a crash left behind and never another device's. No folder
/// of the root may be a symlink.
public struct FolderTarget: SyncTarget {
  /// The storage root, `<folder>/tasker-sync`.
  public let root: String
  private let files = PosixFileSystem()

  /// The target at `root`.
  public init(root: String) {
    self.root = root
  }

  /// The root's path.
  public var location: String { root }

  /// See `SyncTarget.prepare`.
  public func prepare() throws {
    let parent = PosixFileSystem.directory(of: root)
    guard try status(parent)?.kind == .directory else { throw SyncError.targetMissing(path: parent) }
    for folder in [root, root + "/d", root + "/t"] { try makeFolder(folder) }
  }

  /// See `SyncTarget.readMarker`.
  public func readMarker() throws -> [UInt8]? {
    try checkFolder(root)
    return try readFile(root + "/target", limit: SyncObjectFormat.markerByteCount)
  }

  /// See `SyncTarget.createMarker`.
  public func createMarker(_ bytes: [UInt8]) throws -> Bool {
    try createNew(root + "/target", bytes) == .created
  }

  /// See `SyncTarget.devices`.
  public func devices() throws -> [String] {
    try checkFolder(root)
    guard try status(root + "/d") != nil else { return [] }
    try checkFolder(root + "/d")
    return try listing(root + "/d").filter { SyncHex.isID($0) }.sorted()
  }

  /// See `SyncTarget.sequence(of:)`.
  public func sequence(of device: String) throws -> [UInt64] {
    let folder = root + "/d/" + device
    guard try status(folder) != nil else { return [] }
    try checkFolder(folder)
    return try listing(folder).compactMap { name in
      SyncHex.isID(name, bytes: 8) ? UInt64(name, radix: 16) : nil
    }.sorted()
  }

  /// See `SyncTarget.read(device:seq:limit:)`.
  public func read(device: String, seq: UInt64, limit: Int) throws -> [UInt8]? {
    try checkFolder(root + "/d/" + device)
    return try readFile(root + "/d/" + device + "/" + syncSeqName(seq), limit: limit)
  }

  /// See `SyncTarget.create(device:seq:bytes:)`.
  public func create(device: String, seq: UInt64, bytes: [UInt8]) throws -> SyncCreation {
    try makeFolder(root + "/d")
    try makeFolder(root + "/d/" + device)
    return try createNew(root + "/d/" + device + "/" + syncSeqName(seq), bytes, owner: device)
  }

  /// See `SyncTarget.removeTemporaries(of:)`: the regular files of `t/`
  /// named `<device>-<32 hex>`, which only `device`'s writes make.
  public func removeTemporaries(of device: String) throws {
    let folder = root + "/t"
    guard try status(folder) != nil else { return }
    try checkFolder(folder)
    for name in try listing(folder) where Self.isTemporary(name, of: device) {
      let path = folder + "/" + name
      guard try status(path)?.kind == .regular else { continue }
      do {
        try files.unlink(path)
      } catch let error as SystemError {
        if !error.isNotFound { throw SyncError.storage(error) }
      }
    }
  }

  /// The name of a new temporary in `t/`: `<owner>-<32 hex>` for an object
  /// of device `owner`, 32 random hex digits for the marker.
  static func temporaryName(owner: String?) -> String {
    owner.map { $0 + "-" + SyncHex.randomID() } ?? SyncHex.randomID()
  }

  /// Whether `name` is a temporary of `device`'s, as `temporaryName` makes them.
  static func isTemporary(_ name: String, of device: String) -> Bool {
    let parts = name.split(separator: "-", omittingEmptySubsequences: false)
    return parts.count == 2 && parts[0] == device && SyncHex.isID(device) && SyncHex.isID(String(parts[1]))
  }

  /// See `SyncTarget.createBlob(device:blob:byteCount:read:)`: written
  /// into a new file in `t/` as `read` gives it, fsynced, then linked to
  /// `a/<device>/<blob>`.
  public func createBlob(
    device: String, blob: String, byteCount: UInt64, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int
  ) throws -> Bool {
    for folder in [root + "/a", root + "/a/" + device, root + "/t"] { try makeFolder(folder) }
    let name = root + "/a/" + device + "/" + blob
    let temporary = root + "/t/" + Self.temporaryName(owner: device)
    try SyncFiles.createNew(temporary) { write in try SyncFiles.pull(read, into: write) }
    defer { SyncFiles.remove(temporary) }
    do {
      try files.link(temporary, to: name)
      try files.fsyncDirectory(root + "/a/" + device)
      return true
    } catch let error as SystemError where error.isAlreadyExisting {
      return false
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }

  /// See `SyncTarget.readBlob(device:blob:limit:into:)`: the file read in
  /// pieces of 1 MiB.
  public func readBlob(
    device: String, blob: String, limit: UInt64, into write: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> Bool {
    let folder = root + "/a/" + device
    guard try status(folder) != nil else { return false }
    try checkFolder(folder)
    guard let found = try status(folder + "/" + blob) else { return false }
    guard found.kind == .regular else {
      throw SyncError.targetUnsafe(path: folder + "/" + blob, reason: "not a regular file")
    }
    try SyncFiles.stream(folder + "/" + blob, limit: limit, into: write)
    return true
  }

  /// See `SyncTarget.remove(device:seq:)`.
  public func remove(device: String, seq: UInt64) throws {
    try checkFolder(root + "/d/" + device)
    do {
      try files.unlink(root + "/d/" + device + "/" + syncSeqName(seq))
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }

  /// See `SyncTarget.removeBlob(device:blob:)`.
  public func removeBlob(device: String, blob: String) throws {
    let folder = root + "/a/" + device
    guard try status(folder) != nil else { return }
    try checkFolder(folder)
    do {
      try files.unlink(folder + "/" + blob)
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }

  // MARK: - Files

  private func createNew(_ path: String, _ bytes: [UInt8], owner: String? = nil) throws -> SyncCreation {
    try makeFolder(root + "/t")
    let temporary = root + "/t/" + Self.temporaryName(owner: owner)
    do {
      try bytes.withUnsafeBytes { try files.createNew(temporary, contents: $0) }
      defer { try? files.unlink(temporary) }
      do {
        try files.link(temporary, to: path)
      } catch let error as SystemError where error.isAlreadyExisting {
        return .existed(try readFile(path, limit: bytes.count) ?? [])
      }
      try files.fsyncDirectory(PosixFileSystem.directory(of: path))
      return .created
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }

  private func readFile(_ path: String, limit: Int) throws -> [UInt8]? {
    guard let found = try status(path) else { return nil }
    guard found.kind == .regular else {
      throw SyncError.targetUnsafe(path: path, reason: "not a regular file")
    }
    do {
      let file = try OpenFile.reading(path)
      if file.size > limit {
        var head = [UInt8](repeating: 0, count: limit + 1)
        let count = try head.withUnsafeMutableBytes { try file.read(into: $0) }
        return Array(head.prefix(count))
      }
      return try file.readAll(limit: limit)
    } catch let error as SystemError {
      if error.isNotFound { return nil }
      throw SyncError.storage(error)
    }
  }

  private func listing(_ folder: String) throws -> [String] {
    do {
      return try DirectoryListing.names(of: folder) ?? []
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }

  private func status(_ path: String) throws -> FileStatus? {
    do {
      return try FileStatus.of(path)
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }

  private func checkFolder(_ path: String) throws {
    guard let found = try status(path) else { throw SyncError.targetMissing(path: path) }
    guard found.kind == .directory else {
      throw SyncError.targetUnsafe(path: path, reason: found.kind == .symlink ? "a symlink" : "not a folder")
    }
  }

  private func makeFolder(_ path: String) throws {
    if try status(path) == nil {
      do {
        try PrivateDirectory.make(path, parents: false, allowingSymlink: false)
      } catch let error as SystemError {
        if try status(path) == nil { throw SyncError.storage(error) }
      }
    }
    try checkFolder(path)
  }
}
