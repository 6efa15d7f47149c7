import TaskCrypto
import TaskSystem

extension AssistantKeyRegistry {
  /// What this instance knows of the registry file at its path.
  struct Snapshot {
    /// Every key, parsed: a version-1 file, a full read, or a write's result.
    var index: RegistryIndex?
    /// A version-2 file of which only the header was read (verify).
    var header: RegistryFormatV2.Header?
    /// The file the contents came from, kept open to pin its identity.
    var file: OpenFile?
    var loaded = false
    /// Keys found by searching `file`, while it stays the registry.
    var found: [SHA256Digest: RegistryEntry] = [:]
    /// The most keys `found` holds before it is emptied.
    static let foundLimit = 4_096

    /// Every key; empty unless `index` is set (callers that need it
    /// refresh with `full: true`).
    var contents: RegistryFormat.Contents {
      index?.contents ?? RegistryFormat.Contents(generation: header?.generation ?? 0, entries: [])
    }

    init() {}

    init(contents: RegistryFormat.Contents, file: OpenFile?) {
      self.index = RegistryIndex(contents)
      self.file = file
      self.loaded = true
    }

    init(header: RegistryFormatV2.Header, file: OpenFile) {
      self.header = header
      self.file = file
      self.loaded = true
    }
  }

  /// Rereads the registry when the file at its path is not the one cached
  /// (or, with `full`, when only its header was read). Writers only ever
  /// rename a new file into place, and the cached file is held open, so an
  /// unchanged (device, inode) means unchanged contents.
  ///
  /// While `directoryWatch` saw nothing happen in the registry's directory,
  /// no file was renamed into place, so not even the `lstat` is needed.
  /// The watch is made after the snapshot and before an `lstat` that finds
  /// the snapshot's file still at the path: a rename before the watch is
  /// seen by that check, every later one by the watch.
  func refresh(full: Bool = false) throws {
    let enough = snapshot.loaded && (!full || snapshot.index != nil)
    if enough, let watch = directoryWatch, !watch.sawChange() { return }
    directoryWatch = nil
    let current = try files.identity(of: files.registryPath)
    if enough && current == snapshot.file?.identity {
      watchDirectory(expecting: current)
      return
    }
    try load(full: full)
    watchDirectory(expecting: snapshot.file?.identity)
  }

  /// Keeps a new watch of the registry's directory if, once it exists, the
  /// file at the path is still `identity` (nil: no file).
  private func watchDirectory(expecting identity: FileIdentity?) {
    directoryWatch = DirectoryWatch.confirming([files.directory]) {
      (try? files.identity(of: files.registryPath)) == identity
    }
  }

  private func load(full: Bool) throws {
    loadCount += 1
    if let anchor, let remembered = try? anchor.read() { floor = Swift.max(floor, remembered) }
    guard let file = try files.open(files.registryPath) else {
      // A missing registry is an empty one (every key unknown); the next
      // write continues above the remembered generation.
      snapshot = Snapshot(contents: .init(generation: floor, entries: []), file: nil)
      return
    }
    switch try RegistryReading.open(files.source(file), key: key, floor: floor, full: full) {
    case .parsed(let contents): snapshot = Snapshot(contents: contents, file: file)
    case .indexed(let header): snapshot = Snapshot(header: header, file: file)
    }
  }

  /// The entry for `digest` in the current snapshot: a dictionary lookup
  /// when every key is parsed, else a cached search or a new one (steps
  /// 7–9 of the version-2 verify). Call with `mutex` held, after `refresh`.
  func lookup(_ digest: SHA256Digest) throws -> RegistryEntry? {
    if let index = snapshot.index { return index.entry(for: digest) }
    if let entry = snapshot.found[digest] { return entry }
    guard let header = snapshot.header, let file = snapshot.file else { return nil }
    guard let entry = try RegistryFormatV2.lookup(digest, in: files.source(file), header: header, key: key) else {
      return nil
    }
    if snapshot.found.count >= Snapshot.foundLimit { snapshot.found.removeAll() }
    snapshot.found[digest] = entry
    return entry
  }
}
