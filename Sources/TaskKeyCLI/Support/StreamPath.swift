import CommandKit

/// The path argument that means a standard stream: `--out -` is standard
/// output and an input file `-` is standard input, where the command can
/// stream (`backup create|restore`, `sync export|import`, `retire --input`).
/// A secret file (`keygen --out`, `--key-file`, `--passphrase-file`) is
/// never a stream, so there `-` is refused; no command makes or reads a file
/// named `-` (write `./-` for that).
let standardStreamPath = "-"

/// Refuses `-` for an option whose file must be a private file.
///
/// - Throws: a usage error naming the option.
func refuseStandardStream(_ path: String?, option: OptionSpec, _ arguments: ParsedArguments) throws {
  guard path != standardStreamPath else {
    throw arguments.usageError(
      "\(option.long) - is not accepted: \(option.long) names a private 0600 file (write ./- for a file named '-')")
  }
}
