// The CLI's only libc file: descriptors, terminals, owner-only files and
// new files. Everything here moves onto TaskSystem once it offers it.
import Glibc
import TaskCrypto

/// File-descriptor I/O for the CLI, EINTR-safe, with typed errors.
enum ProcessIO {
  /// Reads once into `buffer`, retrying on EINTR; 0 at the end.
  static func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
    while true {
      let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
      if count >= 0 { return count }
      if errno != EINTR { throw CLIError.io(path: path, call: "read", errno: errno) }
    }
  }

  /// Writes all of `bytes`, retrying on EINTR and short writes.
  static func write(fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    var offset = 0
    while offset < bytes.count {
      let count = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if count < 0 {
        if errno == EINTR { continue }
        throw CLIError.io(path: path, call: "write", errno: errno)
      }
      offset += count
    }
  }

  /// Whether `fd` is a terminal.
  static func isTerminal(fd: Int32) -> Bool {
    isatty(fd) == 1
  }

  /// `strerror` text for an errno value.
  static func describe(errno code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return "\(String(cString: text)) (errno \(code))"
  }

  /// Reads a whole file of at most `limit` bytes.
  ///
  /// - Throws: `CLIError.cannotOpen`, `.inputTooLarge`, `.io`.
  static func readFile(_ path: String, limit: Int) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw CLIError.cannotOpen(path: path, reason: describe(errno: errno)) }
    defer { close(fd) }
    var result = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = try chunk.withUnsafeMutableBytes { try read(fd: fd, into: $0, path: path) }
      if count == 0 { return result }
      result.append(contentsOf: chunk[0..<count])
      if result.count > limit { throw CLIError.inputTooLarge(limit: limit) }
    }
  }

  /// Whether a path exists (without following a final symlink).
  static func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
  }

  /// Creates a new file with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600,
  /// writes `bytes`, syncs it and its directory; removes it again if any
  /// step fails. Never replaces an existing file.
  ///
  /// - Throws: `CLIError.fileExists`, `.cannotOpen`, `.io`.
  static func createNewFile(_ path: String, _ bytes: UnsafeRawBufferPointer) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      let code = errno
      if code == EEXIST { throw CLIError.fileExists(path: path) }
      throw CLIError.cannotOpen(path: path, reason: describe(errno: code))
    }
    var open = true
    do {
      try write(fd: fd, bytes, path: path)
      guard fsync(fd) == 0 else { throw CLIError.io(path: path, call: "fsync", errno: errno) }
      open = false
      guard close(fd) == 0 else { throw CLIError.io(path: path, call: "close", errno: errno) }
      try syncDirectory(containing: path)
    } catch {
      if open { close(fd) }
      unlink(path)
      throw error
    }
  }

  private static func syncDirectory(containing path: String) throws {
    let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw CLIError.io(path: directory, call: "open", errno: errno) }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw CLIError.io(path: directory, call: "fsync", errno: errno) }
  }

  /// Reads a file that holds a secret (key file, passphrase file) into
  /// locked memory, up to `limit` bytes (or the first line when
  /// `firstLine`), refusing it unless it is a regular file, not a symbolic
  /// link, owned by the caller, with no group or other permission bits. The
  /// checks run on the opened descriptor, so the file cannot be swapped.
  ///
  /// - Throws: `CLIError.notRegularFile`, `.notOwner`, `.unsafePermissions`,
  ///   `.cannotOpen`, `.io`; `TaskVaultError.passphraseTooLong` via `tooLong`.
  static func readOwnerOnly(_ path: String, limit: Int, firstLine: Bool, tooLong: () -> Error) throws -> SecureBytes
  {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == ELOOP { throw CLIError.notRegularFile(path: path) }
      throw CLIError.cannotOpen(path: path, reason: describe(errno: code))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw CLIError.io(path: path, call: "fstat", errno: errno) }
    guard info.st_mode & S_IFMT == S_IFREG else { throw CLIError.notRegularFile(path: path) }
    guard info.st_uid == getuid() else { throw CLIError.notOwner(path: path) }
    guard info.st_mode & 0o077 == 0 else {
      throw CLIError.unsafePermissions(path: path, mode: info.st_mode & 0o7777)
    }
    return try readLimited(fd: fd, path: path, limit: limit, firstLine: firstLine, tooLong: tooLong)
  }

  /// Reads up to a newline (when `firstLine`) or the end, one byte at a
  /// time for lines so nothing after the line is taken, into locked memory.
  static func readLimited(fd: Int32, path: String, limit: Int, firstLine: Bool, tooLong: () -> Error) throws
    -> SecureBytes
  {
    let buffer = try SecureBytes(zeroedCount: limit + 1)
    var length = 0
    try buffer.withUnsafeMutableBytes { out in
      while true {
        let want = firstLine ? 1 : out.count - length
        guard want > 0 else { throw tooLong() }
        let count = try read(fd: fd, into: UnsafeMutableRawBufferPointer(rebasing: out[length..<length + want]), path: path)
        if count == 0 { break }
        if firstLine && out[length] == UInt8(ascii: "\n") {
          out[length] = 0
          break
        }
        length += count
        if length > limit { throw tooLong() }
      }
    }
    return try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
  }
}

/// The controlling terminal, for prompts with echo off. Prompts go to
/// `/dev/tty`, never to standard output.
enum Terminal {
  /// Whether the process has a controlling terminal to ask.
  static var isAvailable: Bool {
    let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    close(fd)
    return true
  }

  /// Writes `prompt` to the terminal and reads one line with echo off.
  ///
  /// - Throws: `CLIError.noTerminal` without a terminal, read errors,
  ///   `tooLong()` above `limit` bytes.
  static func ask(prompt: String, limit: Int, tooLong: () -> Error) throws -> SecureBytes {
    let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { throw CLIError.noTerminal }
    defer { close(fd) }
    try Array(prompt.utf8).withUnsafeBytes { try ProcessIO.write(fd: fd, $0, path: "/dev/tty") }
    var saved = termios()
    let isTerminal = tcgetattr(fd, &saved) == 0
    let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    var previous = [sighandler_t?]()
    if isTerminal {
      // Ctrl-C while echo is off must not leave the terminal silent.
      savedTerminal = saved
      savedTerminalFD = fd
      previous = signals.map { signal($0, restoreTerminalAndDie) }
      var quiet = saved
      quiet.c_lflag &= ~tcflag_t(ECHO)
      quiet.c_lflag |= tcflag_t(ECHONL)
      _ = tcsetattr(fd, TCSAFLUSH, &quiet)
    }
    defer {
      if isTerminal {
        _ = tcsetattr(fd, TCSAFLUSH, &saved)
        for (number, handler) in zip(signals, previous) { signal(number, handler) }
        savedTerminalFD = -1
      }
    }
    return try ProcessIO.readLimited(fd: fd, path: "/dev/tty", limit: limit, firstLine: true, tooLong: tooLong)
  }

  /// Writes a line to the terminal (a warning that must reach the person
  /// typing, not a log).
  static func say(_ text: String) {
    let fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    try? Array((text + "\n").utf8).withUnsafeBytes { try ProcessIO.write(fd: fd, $0, path: "/dev/tty") }
  }
}

/// The terminal state to restore if a signal arrives while echo is off.
nonisolated(unsafe) private var savedTerminal = termios()
nonisolated(unsafe) private var savedTerminalFD: Int32 = -1

/// Restores the terminal, then dies of the same signal.
private func restoreTerminalAndDie(_ number: Int32) {
  if savedTerminalFD >= 0 { _ = tcsetattr(savedTerminalFD, TCSAFLUSH, &savedTerminal) }
  signal(number, SIG_DFL)
  raise(number)
}
