/// What a value on the command line is. The parser checks choices and
/// numbers by it, the help text names it, and the shell completions
/// offer files, names or ids by it.
public enum ValueKind: Equatable, Sendable {
  /// Free text; nothing to complete.
  case text
  /// A path to a file; completes file names.
  case file
  /// A path to a directory; completes directory names.
  case directory
  /// A non-negative whole number that fits in 32 bits (a file descriptor).
  case number
  /// A record id: a positive decimal whole number, written without a sign
  /// or leading zeros (`42`).
  case recordID
  /// A duration such as `90s`, `8h` or `1h30m`.
  case duration
  /// One of a fixed set of words.
  case choice([String])
  /// Free text whose current values the program lists itself: the
  /// completions run `<program> completion words NAME` (ids, names from
  /// the user's own data, read without asking for a passphrase).
  case live(String)
  /// A record id (checked as `.recordID`) whose current values the
  /// program lists itself, as `.live` does.
  case liveID(String)
}

/// One option of a command: its spellings, its value and its help line.
/// The parser accepts exactly the declared options, and help, man page and
/// completions print the same declaration.
public struct OptionSpec: Equatable, Sendable {
  /// The long spelling, with its dashes: `--out`.
  public let long: String
  /// The short spelling, if any: `o` for `-o`.
  public let short: Character?
  /// The value's placeholder (`F`), or nil for a flag.
  public let placeholder: String?
  /// What the value is.
  public let kind: ValueKind
  /// The help text, wrapped by the help renderer.
  public let help: String
  /// Whether the option may be given more than once.
  public let repeatable: Bool
  /// Whether the command cannot run without it.
  public let required: Bool

  /// A flag: present or not.
  public static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
    OptionSpec(
      long: long, short: short, placeholder: nil, kind: .text, help: help, repeatable: false, required: false)
  }

  /// An option that takes a value.
  public static func value(
    _ long: String, short: Character? = nil, _ placeholder: String, _ kind: ValueKind = .text, help: String,
    repeatable: Bool = false, required: Bool = false
  ) -> OptionSpec {
    OptionSpec(
      long: long, short: short, placeholder: placeholder, kind: kind, help: help, repeatable: repeatable,
      required: required)
  }

  /// The same option, required.
  public var asRequired: OptionSpec {
    OptionSpec(
      long: long, short: short, placeholder: placeholder, kind: kind, help: help, repeatable: repeatable,
      required: true)
  }

  /// `-o, --out F` as help and the man page show it.
  public var synopsis: String {
    let names = short.map { "-\($0), \(long)" } ?? long
    return placeholder.map { "\(names) \($0)" } ?? names
  }

  /// `--out F` or `[--out F]` for the usage line.
  public var usage: String {
    let text = placeholder.map { "\(long) \($0)" } ?? long
    let repeated = repeatable ? "..." : ""
    return required ? text + repeated : "[\(text)]\(repeated)"
  }
}

/// One positional argument of a command.
public struct ArgumentSpec: Equatable, Sendable {
  /// The placeholder: `KID`, `F`, `NAME`.
  public let name: String
  /// What the value is.
  public let kind: ValueKind
  /// The help text.
  public let help: String
  /// Whether it may be left out.
  public var optional = false
  /// Whether it may be given more than once (last argument only).
  public var repeating = false

  /// A positional argument.
  public init(name: String, kind: ValueKind, help: String, optional: Bool = false, repeating: Bool = false) {
    self.name = name
    self.kind = kind
    self.help = help
    self.optional = optional
    self.repeating = repeating
  }

  /// `KID`, `[PATH...]` for the usage line.
  public var usage: String {
    let text = repeating ? "\(name)..." : name
    return optional ? "[\(text)]" : text
  }
}

/// The JSON a command prints with `--json`: the fields of its one object,
/// declared once so the help text and a test of the real output agree.
public struct JSONShape: Equatable, Sendable {
  /// The top-level field names, snake_case, in the order help lists them.
  public let fields: [String]
  /// What the fields hold, for the help text.
  public let help: String

  /// The shape of one command's `--json` object.
  public init(fields: [String], help: String) {
    self.fields = fields
    self.help = help
  }
}

/// Everything a command declares about its command line. The parser reads
/// only this, and help, the man page and the shell completions are printed
/// from it, so none of them can disagree with the parser.
public struct CommandSpec: Sendable {
  /// The word that selects the command (`seal`, or `set` under `item`).
  public let name: String
  /// One sentence for the command list.
  public let abstract: String
  /// Positional arguments, in order.
  public var arguments: [ArgumentSpec] = []
  /// The command's own options (the common ones are added by `allOptions`).
  public var options: [OptionSpec] = []
  /// `--json` output, when the command reports something.
  public var json: JSONShape? = nil
  /// Paragraphs after the options.
  public var discussion: String = ""
  /// Example invocations with comments, one per line.
  public var example: String = ""
  /// For a command that takes no positional argument because one would be
  /// a secret on the command line (`verify`): the refusal, which never
  /// repeats the argument.
  public var positionalRefusal: String? = nil

  /// A command's declaration; only `name` and `abstract` are required.
  public init(
    name: String, abstract: String, arguments: [ArgumentSpec] = [], options: [OptionSpec] = [],
    json: JSONShape? = nil, discussion: String = "", example: String = "", positionalRefusal: String? = nil
  ) {
    self.name = name
    self.abstract = abstract
    self.arguments = arguments
    self.options = options
    self.json = json
    self.discussion = discussion
    self.example = example
    self.positionalRefusal = positionalRefusal
  }

  /// `--json`, declared for every command with a `json` shape.
  public static let jsonOption = OptionSpec.flag(
    "--json", help: "Print one JSON object (docs/json-output.md: snake_case keys, RFC 3339 UTC times, explicit nulls).")
  /// `-h, --help`.
  public static let helpOption = OptionSpec.flag("--help", short: "h", help: "Show this help.")
  /// `-q, --quiet`.
  public static let quietOption = OptionSpec.flag(
    "--quiet", short: "q", help: "Print no notes or progress on standard error; errors still are.")
  /// `-v, --verbose`.
  public static let verboseOption = OptionSpec.flag(
    "--verbose", short: "v", help: "Print more about what is done (paths, KDF costs) on standard error.")
  /// The options every command takes.
  public static let commonOptions = [helpOption, quietOption, verboseOption]

  /// The command's options, then `--json` when it reports, then the
  /// common ones.
  public var allOptions: [OptionSpec] {
    options + (json == nil ? [] : [Self.jsonOption]) + Self.commonOptions
  }
}
