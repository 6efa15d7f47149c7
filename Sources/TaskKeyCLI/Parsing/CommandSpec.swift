/// What a value on the command line is. The parser checks choices and
/// numbers by it, the help text names it, and the shell completions
/// offer files, names or ids by it.
enum ValueKind: Equatable, Sendable {
  /// Free text; nothing to complete.
  case text
  /// A path to a file; completes file names.
  case file
  /// A path to a directory; completes directory names.
  case directory
  /// A non-negative whole number (a file descriptor).
  case number
  /// A duration such as `90s`, `8h` or `1h30m`.
  case duration
  /// One of a fixed set of words.
  case choice([String])
  /// A note key id from the unlocked vault.
  case noteKeyID
  /// An assistant name from the unlocked vault's registry.
  case assistantName
  /// An assistant key id (`tkid_…`) from the unlocked vault's registry.
  case assistantKeyID
  /// A vault item name from the unlocked vault.
  case itemName
}

/// One option of a command: its spellings, its value and its help line.
/// The parser accepts exactly the declared options, and help, man page and
/// completions print the same declaration.
struct OptionSpec: Equatable, Sendable {
  /// The long spelling, with its dashes: `--out`.
  let long: String
  /// The short spelling, if any: `o` for `-o`.
  let short: Character?
  /// The value's placeholder (`F`), or nil for a flag.
  let placeholder: String?
  /// What the value is.
  let kind: ValueKind
  /// The help text, wrapped by the help renderer.
  let help: String
  /// Whether the option may be given more than once.
  let repeatable: Bool
  /// Whether the command cannot run without it.
  let required: Bool

  /// A flag: present or not.
  static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
    OptionSpec(
      long: long, short: short, placeholder: nil, kind: .text, help: help, repeatable: false, required: false)
  }

  /// An option that takes a value.
  static func value(
    _ long: String, short: Character? = nil, _ placeholder: String, _ kind: ValueKind = .text, help: String,
    repeatable: Bool = false, required: Bool = false
  ) -> OptionSpec {
    OptionSpec(
      long: long, short: short, placeholder: placeholder, kind: kind, help: help, repeatable: repeatable,
      required: required)
  }

  /// The same option, required.
  var asRequired: OptionSpec {
    OptionSpec(
      long: long, short: short, placeholder: placeholder, kind: kind, help: help, repeatable: repeatable,
      required: true)
  }

  /// `-o, --out F` as help and the man page show it.
  var synopsis: String {
    let names = short.map { "-\($0), \(long)" } ?? long
    return placeholder.map { "\(names) \($0)" } ?? names
  }

  /// `--out F` or `[--out F]` for the usage line.
  var usage: String {
    let text = placeholder.map { "\(long) \($0)" } ?? long
    let repeated = repeatable ? "..." : ""
    return required ? text + repeated : "[\(text)]\(repeated)"
  }
}

/// One positional argument of a command.
struct ArgumentSpec: Equatable, Sendable {
  /// The placeholder: `KID`, `F`, `NAME`.
  let name: String
  /// What the value is.
  let kind: ValueKind
  /// The help text.
  let help: String
  /// Whether it may be left out.
  var optional = false
  /// Whether it may be given more than once (last argument only).
  var repeating = false

  /// `KID`, `[PATH...]` for the usage line.
  var usage: String {
    let text = repeating ? "\(name)..." : name
    return optional ? "[\(text)]" : text
  }
}

/// The JSON a command prints with `--json`: the fields of its one object,
/// declared once so the help text and a test of the real output agree.
struct JSONShape: Equatable, Sendable {
  /// The top-level field names, snake_case, in the order help lists them.
  let fields: [String]
  /// What the fields hold, for the help text.
  let help: String
}

/// Everything a command declares about its command line. The parser reads
/// only this, and help, the man page and the shell completions are printed
/// from it, so none of them can disagree with the parser.
struct CommandSpec: Sendable {
  /// The word that selects the command (`seal`, or `set` under `item`).
  let name: String
  /// One sentence for the command list.
  let abstract: String
  /// Positional arguments, in order.
  var arguments: [ArgumentSpec] = []
  /// The command's own options (the common ones are added by `allOptions`).
  var options: [OptionSpec] = []
  /// `--json` output, when the command reports something.
  var json: JSONShape? = nil
  /// Paragraphs after the options.
  var discussion: String = ""
  /// Example invocations with comments, one per line.
  var example: String = ""
  /// For a command that takes no positional argument because one would be
  /// a secret on the command line (`verify`): the refusal, which never
  /// repeats the argument.
  var positionalRefusal: String? = nil

  /// `--json`, declared for every command with a `json` shape.
  static let jsonOption = OptionSpec.flag("--json", help: "Print one JSON object (snake_case keys, UTC times).")
  /// `-h, --help`.
  static let helpOption = OptionSpec.flag("--help", short: "h", help: "Show this help.")
  /// `-q, --quiet`.
  static let quietOption = OptionSpec.flag(
    "--quiet", short: "q", help: "Print no notes or progress on standard error; errors still are.")
  /// `-v, --verbose`.
  static let verboseOption = OptionSpec.flag(
    "--verbose", short: "v", help: "Print more about what is done (paths, KDF costs) on standard error.")
  /// The options every command takes.
  static let commonOptions = [helpOption, quietOption, verboseOption]

  /// The command's options, then `--json` when it reports, then the
  /// common ones.
  var allOptions: [OptionSpec] {
    options + (json == nil ? [] : [Self.jsonOption]) + Self.commonOptions
  }
}
