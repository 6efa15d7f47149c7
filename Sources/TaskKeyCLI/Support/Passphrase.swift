import CommandKit
import TaskCrypto
import TaskSystem
import TaskVault

/// Where a passphrase comes from: the terminal (echo off), a 0600 file, or
/// an open file descriptor. Never argv, never the environment.
struct PassphraseSource {
  /// `--passphrase-file F`.
  static let fileOption = OptionSpec.value(
    "--passphrase-file", "F", .file,
    help: "Read the passphrase from F (first line), a regular file of mode 0600 owned by you.")
  /// `--passphrase-fd N`.
  static let fdOption = OptionSpec.value(
    "--passphrase-fd", "N", .number,
    help: "Read the passphrase from file descriptor N, up to a newline. Without either, the terminal is asked "
      + "with echo off.")
  /// `--new-passphrase-file F`.
  static let newFileOption = OptionSpec.value(
    "--new-passphrase-file", "F", .file, help: "Read the new passphrase from F, as --passphrase-file.")
  /// `--new-passphrase-fd N`.
  static let newFDOption = OptionSpec.value(
    "--new-passphrase-fd", "N", .number, help: "Read the new passphrase from descriptor N, as --passphrase-fd.")
  /// `--accept-weak-passphrase`.
  static let acceptWeakOption = OptionSpec.flag(
    "--accept-weak-passphrase",
    help: "Use a new passphrase even though it is weak (shorter than 12 characters, or a common password); "
      + "without it a weak one is refused (exit 41) before any key work.")

  /// The two options of the current passphrase.
  static let options = [fileOption, fdOption]
  /// The two options of a new passphrase, and the weak-passphrase switch.
  static let newOptions = [newFileOption, newFDOption, acceptWeakOption]

  var file: String?
  var fd: Int32?

  /// Reads the source from `file` / `fd` options.
  ///
  /// - Throws: a usage error when both are given.
  init(_ arguments: ParsedArguments, file fileOption: OptionSpec = fileOption, fd fdOption: OptionSpec = fdOption)
    throws
  {
    file = arguments.value(fileOption)
    try refuseStandardStream(file, option: fileOption, arguments)
    fd = arguments.value(fdOption).flatMap { Int32($0) }
    if file != nil && fd != nil {
      throw arguments.usageError("give \(fileOption.long) or \(fdOption.long), not both")
    }
  }

  /// Whether the passphrase will be asked on the terminal.
  var asksTerminal: Bool { file == nil && fd == nil }

  /// Fails at once when the passphrase would be asked and there is no
  /// terminal: a cheap check to run before any slow work.
  ///
  /// - Throws: `CLIError.noTerminal`.
  func checkAvailable() throws {
    if asksTerminal && !Terminal.isAvailable { throw CLIError.noTerminal }
  }

  /// Reads the passphrase; on a terminal asks twice when `confirm`.
  ///
  /// - Throws: `CLIError.noTerminal`, `.passphraseMismatch`, file errors,
  ///   `TaskVaultError.passphraseTooLong`, `.emptyPassphrase`.
  func read(prompt: String, confirm: Bool = false) throws -> SecureBytes {
    let limit = VaultLimits.maximumPassphraseByteCount
    let tooLong = { TaskVaultError.passphraseTooLong(limit: limit) as Error }
    let secret: SecureBytes
    if let file {
      secret = try ProcessIO.readOwnerOnly(file, limit: limit, firstLine: true, tooLong: tooLong)
    } else if let fd {
      let input = FileDescriptor(fd, name: "<fd \(fd)>")
      secret = try ProcessIO.readLimited(input, limit: limit, firstLine: true, tooLong: tooLong)
    } else {
      secret = try Terminal.ask(prompt: prompt, limit: limit, tooLong: tooLong)
      // Nothing to confirm after Ctrl-D or an empty line; it is refused below.
      if confirm && secret.count > 0 {
        let again = try Terminal.ask(prompt: "Repeat the passphrase: ", limit: limit, tooLong: tooLong)
        guard secret == again else { throw CLIError.passphraseMismatch }
      }
    }
    guard secret.count > 0 else { throw TaskVaultError.emptyPassphrase }
    return secret
  }
}

/// Why a new passphrase is weak, or nil when it is not: shorter than 12
/// characters, one character repeated, or one of the most common passwords.
func weakness(of passphrase: SecureBytes) -> String? {
  // Read in place: no copy of the passphrase into a String or Array.
  passphrase.withUnsafeBytes { bytes -> String? in
    let characters = bytes.reduce(0) { $0 + ($1 & 0xC0 != 0x80 ? 1 : 0) }
    if characters < 12 { return "it is \(characters) character(s) long; use at least 12" }
    if bytes.allSatisfy({ $0 == bytes[0] }) { return "it is one character repeated" }
    func lowered(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
    let common = commonPasswords.contains { word in
      word.utf8.count == bytes.count && zip(word.utf8, bytes).allSatisfy { $0 == lowered($1) }
    }
    return common ? "it is one of the most common passwords" : nil
  }
}

/// Passwords of 12 characters or more that lists of leaked passwords
/// rank first; shorter ones are refused by length already.
private let commonPasswords = [
  "123456789012", "1234567890123", "12345678910", "qwertyuiopasdfgh", "qwertyuiop123", "passwordpassword",
  "password1234", "password12345", "iloveyou1234", "123qweasdzxc", "1q2w3e4r5t6y", "zaq12wsxcde3",
  "correcthorsebatterystaple", "correct horse battery staple", "trustno1trustno1", "letmeinletmein",
  "administrator", "changemechangeme", "welcome12345", "abcdefghijkl", "qazwsxedcrfv",
]
