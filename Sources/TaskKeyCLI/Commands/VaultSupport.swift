import Foundation
import TaskCrypto
import TaskSystem
import TaskVault

extension CLIError {
  /// The exit code of each vault error (README's table; 13 to 16 are the
  /// vault's own codes).
  static func exitCode(for error: TaskVaultError) -> ExitCode {
    switch error {
    case .wrongPassphrase: return .wrongPassphrase
    case .locked: return .vaultLocked
    case .damaged, .tampered: return .tampered
    case .notInitialised: return .vaultNotFound
    case .unsupportedVersion: return .unsupportedVersion
    case .system(let system): return system.isRefusal ? .permission : .ioError
    case .alreadyInitialised: return .ioError
    case .itemNotFound: return .noInput
    case .emptyPassphrase, .passphraseTooLong, .invalidItemName, .invalidLabel, .itemTooLarge, .storeFull,
      .itemClassConflict, .keyConflict, .retiredKey:
      return .dataError
    case .unlockUnavailable: return .osError
    case .crypto(let crypto): return CLIError.crypto(crypto).exitCode
    }
  }
}

/// Runs a vault call, mapping its errors into the CLI's.
func vaultCall<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch let error as TaskVaultError {
    throw CLIError.vault(error)
  } catch let error as TaskCryptoError {
    throw CLIError.crypto(error)
  }
}

/// Finds the vault directory: `TASKKEY_HOME`, else `$XDG_DATA_HOME/tasker/keys`,
/// else `~/.local/share/tasker/keys`.
func vaultDirectory(_ streams: StandardStreams) throws -> String {
  guard let directory = Vault.defaultDirectory(environment: streams.environment) else {
    throw CLIError.usage(
      message: "cannot find the vault: neither TASKKEY_HOME nor HOME is set",
      usage: "set TASKKEY_HOME to the vault directory")
  }
  return directory
}

/// Opens the vault at the default location.
func openVault(_ streams: StandardStreams) throws -> Vault {
  let directory = try vaultDirectory(streams)
  return try vaultCall { try Vault(at: directory) }
}

extension NoteOptions {
  /// The keyring that seals and opens: the key file's one key when
  /// `--key-file` is given, else the unlocked vault's note keyring.
  func keyring(_ streams: StandardStreams) throws -> Keyring {
    if let keyFile { return Keyring(primary: try KeyFile.read(path: keyFile)) }
    let vault = try openVault(streams)
    return try vaultCall { try vault.noteKeyring() }
  }
}

/// Where a passphrase comes from: the terminal (echo off), a 0600 file, or
/// an open file descriptor. Never argv, never the environment.
struct PassphraseSource {
  var file: String?
  var fd: Int32?

  static let help = """
      --passphrase-file F
                        Read the passphrase from F (first line), which must be
                        a regular file of mode 0600 owned by you.
      --passphrase-fd N Read the passphrase from file descriptor N, up to a
                        newline. Without either, the terminal is asked with
                        echo off.
    """

  static let newHelp = """
      --new-passphrase-file F, --new-passphrase-fd N
                        Where the new passphrase comes from, as above.
    """

  init(parsing arguments: inout Arguments, prefix: String = "") throws {
    file = try arguments.option("--\(prefix)passphrase-file")
    if let file { try refuseStandardStream(file, option: "--\(prefix)passphrase-file", arguments) }
    if let text = try arguments.option("--\(prefix)passphrase-fd") {
      guard let number = Int32(text), number >= 0 else {
        throw arguments.usageError("--\(prefix)passphrase-fd takes a file descriptor number")
      }
      fd = number
    }
    if file != nil && fd != nil {
      throw arguments.usageError("give --\(prefix)passphrase-file or --\(prefix)passphrase-fd, not both")
    }
  }

  /// Reads the passphrase; on a terminal asks twice when `confirm`.
  func read(prompt: String, confirm: Bool = false) throws -> SecureBytes {
    if let file { return try readPassphraseFile(file) }
    if let fd { return try readLine(fd: fd, path: "<fd \(fd)>") }
    return try Terminal.ask(prompt: prompt, confirm: confirm)
  }
}

/// The longest passphrase read, in bytes.
let passphraseLimit = VaultLimits.maximumPassphraseByteCount

/// Reads up to a newline (not included) or end of file from `fd` into
/// locked memory, one byte at a time so nothing after the line is taken. A
/// line ends with LF or CR LF: one CR just before the LF (or the end of
/// input) is part of the line end, so a file written on another system
/// gives the same passphrase (docs/formats/vault-file.md).
func readLine(fd: Int32, path: String, limit: Int = passphraseLimit) throws -> SecureBytes {
  let buffer = try cryptoCall { try SecureBytes(zeroedCount: limit + 1) }
  var length = 0
  try buffer.withUnsafeMutableBytes { out in
    while true {
      var byte: UInt8 = 0
      let count = try systemCall {
        try withUnsafeMutableBytes(of: &byte) { try FileDescriptor(fd, name: path).readSome(into: $0) }
      }
      if count == 0 || byte == UInt8(ascii: "\n") { break }
      guard length < limit else {
        if limit == passphraseLimit { throw CLIError.vault(.passphraseTooLong(limit: limit)) }
        throw CLIError.inputTooLarge(limit: limit)
      }
      out[length] = byte
      length += 1
      byte = 0
    }
  }
  return try buffer.withUnsafeBytes { raw in
    if length > 0 && raw[length - 1] == UInt8(ascii: "\r") { length -= 1 }
    return try cryptoCall { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<length])) }
  }
}

/// Reads the first line of a passphrase file, refusing it unless it is a
/// regular file owned by the user with mode 0600 (no group or other bits).
func readPassphraseFile(_ path: String) throws -> SecureBytes {
  let file = try openOwnerOnlyFile(path)
  return try withExtendedLifetime(file) { try readLine(fd: file.descriptor.rawValue, path: path) }
}

/// The controlling terminal, for prompts with echo off. Prompts go to
/// `/dev/tty`, never to standard output.
enum Terminal {
  static func ask(prompt: String, confirm: Bool) throws -> SecureBytes {
    guard let terminal = ControllingTerminal() else {
      throw CLIError.usage(
        message: "no terminal to ask for the passphrase",
        usage: "use --passphrase-file F (mode 0600) or --passphrase-fd N")
    }
    let first = try askOnce(terminal, prompt: prompt)
    // Nothing to confirm after Ctrl-D or an empty line; the caller refuses it.
    guard confirm, first.count > 0 else { return first }
    let second = try askOnce(terminal, prompt: "Repeat the passphrase: ")
    guard first == second else { throw CLIError.passphraseMismatch }
    return first
  }

  private static func askOnce(_ terminal: ControllingTerminal, prompt: String) throws -> SecureBytes {
    try readQuietly(terminal.descriptor, prompt: prompt, promptTo: terminal.descriptor, limit: passphraseLimit)
  }

  /// Reads a secret typed or pasted on standard input when it is a
  /// terminal: the prompt goes to standard error, echo is off while the
  /// line is read, and one line is taken (the newline is not part of it).
  static func askOnStandardInput(prompt: String, limit: Int) throws -> SecureBytes {
    try readQuietly(.standardInput, prompt: prompt, promptTo: .standardError, limit: limit)
  }

  /// Reads one line from the terminal `input` with echo off, restoring the
  /// terminal afterwards, also when a signal ends the process meanwhile.
  /// Echo goes off before the prompt is shown, so nothing typed after the
  /// prompt appears is flushed by the switch (or echoed).
  private static func readQuietly(
    _ input: FileDescriptor, prompt: String, promptTo output: FileDescriptor, limit: Int
  ) throws -> SecureBytes {
    try input.withEchoOff {
      try systemCall { try output.write(Array(prompt.utf8)) }
      return try readLine(fd: input.rawValue, path: input.name, limit: limit)
    }
  }
}

/// Parses a duration such as `90s`, `15m`, `8h` or `7d` (1 second to 365 days).
func parseDuration(_ text: String) -> Duration? {
  guard let unit = text.last, let number = Int64(text.dropLast()), number > 0,
    text.dropLast().allSatisfy({ $0.isASCII && $0.isNumber }), text.first != "0"
  else { return nil }
  let scale: Int64
  switch unit {
  case "s": scale = 1
  case "m": scale = 60
  case "h": scale = 3600
  case "d": scale = 86400
  default: return nil
  }
  guard number <= 365 * 86400 / scale else { return nil }
  return .seconds(number * scale)
}

/// ISO 8601 in UTC, whole seconds.
func isoDate(_ date: Date) -> String {
  let formatter = ISO8601DateFormatter()
  formatter.timeZone = TimeZone(identifier: "UTC")
  return formatter.string(from: date)
}

/// Encodes a value as JSON with sorted keys.
func jsonText<T: Encodable>(_ value: T) throws -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
  return String(decoding: try encoder.encode(value), as: UTF8.self)
}
