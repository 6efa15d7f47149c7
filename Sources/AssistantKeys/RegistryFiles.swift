import Glibc
import TaskCrypto

/// One step of a durable write, named so tests can make any of them fail.
enum FileStep: String, CaseIterable {
  case createTemporary = "open(O_CREAT|O_EXCL|O_NOFOLLOW)"
  case write = "write"
  case syncFile = "fsync"
  case rename = "rename"
  case syncDirectory = "fsync(directory)"
}

/// The registry's files in one directory, and the only place that writes
/// them: exclusive creation with mode 0600, temp file + fsync + rename +
/// directory fsync, an `flock` for read-modify-write, and strict checks on
/// what is read (regular file, owner, no group or other bits, size cap).
struct RegistryFiles {
  let directory: String
  /// The fault-injection seam: returns an errno to make `step` fail as if
  /// the system call had. Tests only; nil in production.
  var fault: ((FileStep, String) -> Int32?)?

  var registryPath: String { directory + "/assistant-keys.registry" }
  var lastUsedPath: String { directory + "/assistant-keys.last-used" }
  var lockPath: String { directory + "/assistant-keys.lock" }

  /// Makes the directory (mode 0700) if it is missing, then refuses it when
  /// it is a symlink, not a directory, not ours, or open to group or others.
  func prepareDirectory() throws {
    if mkdir(directory, 0o700) != 0 && errno != EEXIST {
      throw AssistantKeyError.storageFailure(path: directory, call: "mkdir", errno: errno)
    }
    try checkDirectory()
  }

  /// Refuses the directory when it is a symlink, not a directory, not
  /// ours, or open to group or others.
  func checkDirectory() throws {
    var info = stat()
    guard lstat(directory, &info) == 0 else {
      throw damaged(.unreadable(path: directory, call: "lstat", errno: errno))
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
      throw damaged(.unsafeFile(path: directory, reason: "is not a directory (or is a symlink)"))
    }
    try checkOwnerAndMode(info, path: directory)
  }

  private func damaged(_ damage: AssistantKeyError.RegistryDamage) -> AssistantKeyError {
    .registryDamaged(damage)
  }

  private func checkOwnerAndMode(_ info: stat, path: String) throws {
    guard info.st_uid == geteuid() else {
      throw damaged(.unsafeFile(path: path, reason: "is not owned by this user"))
    }
    guard info.st_mode & 0o077 == 0 else {
      throw damaged(
        .unsafeFile(path: path, reason: "has mode \(String(info.st_mode & 0o7777, radix: 8)); it must be 0600 or 0700"))
    }
  }

  /// The (device, inode) at `path` without following a symlink, or nil
  /// when nothing is there.
  func identity(of path: String) throws -> FileIdentity? {
    var info = stat()
    guard lstat(path, &info) == 0 else {
      if errno == ENOENT { return nil }
      throw damaged(.unreadable(path: path, call: "lstat", errno: errno))
    }
    return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
  }

  /// Opens and reads a registry-kind file, or returns nil when it does not
  /// exist. The descriptor stays open in the returned file, which pins the
  /// inode so that its identity cannot be reused while it is cached.
  func read(_ path: String, limit: Int) throws -> (file: OpenedFile, bytes: [UInt8])? {
    let fd = retrying { open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
    guard fd >= 0 else {
      let code = errno
      if code == ENOENT { return nil }
      if code == ELOOP { throw damaged(.unsafeFile(path: path, reason: "is a symlink")) }
      throw damaged(.unreadable(path: path, call: "open", errno: code))
    }
    let file = OpenedFile(fd: fd)
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw damaged(.unreadable(path: path, call: "fstat", errno: errno)) }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw damaged(.unsafeFile(path: path, reason: "is not a regular file"))
    }
    try checkOwnerAndMode(info, path: path)
    guard Int(info.st_size) <= limit else { throw damaged(.tooLarge(byteCount: Int(info.st_size), limit: limit)) }
    file.identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    var bytes = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw damaged(.unreadable(path: path, call: "read", errno: errno))
      }
      if count == 0 { break }
      bytes += chunk[0..<count]
      guard bytes.count <= limit else { throw damaged(.tooLarge(byteCount: bytes.count, limit: limit)) }
    }
    return (file, bytes)
  }

  /// Replaces `path` with `bytes` durably and atomically: a new temporary
  /// file in the same directory (`O_CREAT|O_EXCL|O_NOFOLLOW`, 0600), write,
  /// fsync, rename over `path`, fsync the directory. On failure before the
  /// rename the old file is untouched and the temporary file is removed.
  ///
  /// - Returns: the new file, still open, so its identity is pinned.
  @discardableResult
  func replace(_ path: String, with bytes: [UInt8]) throws -> OpenedFile {
    let suffix = SecureRandom.bytes(count: 8).map { String($0 >> 4, radix: 16) + String($0 & 0x0f, radix: 16) }.joined()
    let temporary = directory + "/.assistant-keys.\(suffix).tmp"
    func fail(_ step: FileStep, _ code: Int32, _ where: String) -> AssistantKeyError {
      .storageFailure(path: `where`, call: step.rawValue, errno: code)
    }
    func inject(_ step: FileStep, _ where: String) throws {
      if let code = fault?(step, path) { throw fail(step, code, `where`) }
    }
    try inject(.createTemporary, temporary)
    let fd = retrying { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
    guard fd >= 0 else { throw fail(.createTemporary, errno, temporary) }
    let file = OpenedFile(fd: fd)
    var renamed = false
    defer { if !renamed { unlink(temporary) } }
    try inject(.write, temporary)
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
      if count < 0 {
        if errno == EINTR { continue }
        throw fail(.write, errno, temporary)
      }
      offset += count
    }
    try inject(.syncFile, temporary)
    guard retrying({ fsync(fd) }) == 0 else { throw fail(.syncFile, errno, temporary) }
    try inject(.rename, path)
    guard rename(temporary, path) == 0 else { throw fail(.rename, errno, path) }
    renamed = true
    var info = stat()
    if fstat(fd, &info) == 0 { file.identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) }
    try inject(.syncDirectory, directory)
    try syncDirectory()
    return file
  }

  func syncDirectory() throws {
    let fd = retrying { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    guard fd >= 0 else { throw AssistantKeyError.storageFailure(path: directory, call: "open", errno: errno) }
    defer { close(fd) }
    guard retrying({ fsync(fd) }) == 0 else {
      throw AssistantKeyError.storageFailure(path: directory, call: FileStep.syncDirectory.rawValue, errno: errno)
    }
  }

  /// Runs `body` holding an exclusive `flock` on the lock file, which is
  /// created 0600 with `O_CREAT|O_EXCL|O_NOFOLLOW` the first time.
  func withLock<Result>(_ body: () throws -> Result) throws -> Result {
    var fd = retrying { open(lockPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
    if fd < 0 && errno == EEXIST {
      fd = retrying { open(lockPath, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
    }
    guard fd >= 0 else { throw AssistantKeyError.storageFailure(path: lockPath, call: "open", errno: errno) }
    defer { close(fd) }
    guard retrying({ flock(fd, LOCK_EX) }) == 0 else {
      throw AssistantKeyError.storageFailure(path: lockPath, call: "flock", errno: errno)
    }
    defer { _ = flock(fd, LOCK_UN) }
    return try body()
  }

  private func retrying(_ call: () -> Int32) -> Int32 {
    while true {
      let result = call()
      if result >= 0 || errno != EINTR { return result }
    }
  }
}

/// Which file a path named at one moment.
struct FileIdentity: Equatable {
  let device: UInt64
  let inode: UInt64
}

/// An open descriptor and the identity of its file; closed on release.
final class OpenedFile {
  let fd: Int32
  var identity: FileIdentity?

  init(fd: Int32) { self.fd = fd }

  deinit { close(fd) }
}
