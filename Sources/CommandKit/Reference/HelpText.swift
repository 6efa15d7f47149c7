/// `--help` text, printed from a command's `CommandSpec` in the familiar
/// shape: OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS, EXAMPLE.
public enum HelpText {
  /// The column where help text starts.
  public static let column = 20
  /// The width help is wrapped to.
  public static let width = 80

  /// `taskkey item set NAME [--label L] …`, or `taskkey item <subcommand>`.
  public static func usageLine(
    _ spec: CommandSpec, path: String, subcommands: [any CommandDeclaration.Type] = []
  ) -> String {
    if !subcommands.isEmpty { return "\(path) <subcommand> [options]" }
    let words =
      [path] + spec.arguments.map(\.usage) + spec.options.map(\.usage) + (spec.json == nil ? [] : ["[--json]"])
    return words.joined(separator: " ")
  }

  /// The full help of one command.
  public static func render(_ command: any CommandDeclaration.Type, path: String) -> String {
    let spec = command.spec
    var sections = [
      "OVERVIEW: \(spec.abstract)", "USAGE: \(usageLine(spec, path: path, subcommands: command.subcommands))",
    ]
    if !spec.arguments.isEmpty {
      sections.append("ARGUMENTS:\n" + spec.arguments.map { entry($0.name, $0.help) }.joined(separator: "\n"))
    }
    sections.append(
      "OPTIONS:\n" + spec.allOptions.map { entry($0.synopsis, optionHelp($0, spec)) }.joined(separator: "\n"))
    if !command.subcommands.isEmpty {
      let lines = command.subcommands.map { entry($0.spec.name, $0.spec.abstract, wrapped: false) }
      sections.append(
        "SUBCOMMANDS:\n" + lines.joined(separator: "\n") + "\n\n  See '\(path) <subcommand> --help' for each one.")
    }
    if !spec.discussion.isEmpty { sections.append(spec.discussion) }
    if !spec.example.isEmpty {
      sections.append("EXAMPLE:\n" + spec.example.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
    }
    return sections.joined(separator: "\n\n")
  }

  /// An option's help, with the JSON fields for `--json`.
  public static func optionHelp(_ option: OptionSpec, _ spec: CommandSpec) -> String {
    guard option == CommandSpec.jsonOption, let shape = spec.json else { return option.help }
    return String(option.help.dropLast()) + ": " + shape.help
  }

  /// `  name              help…`, wrapped at `width` unless `wrapped` is
  /// false (lists that scripts read one line per entry).
  public static func entry(_ name: String, _ help: String, wrapped: Bool = true) -> String {
    let lines = wrapped ? wrap(help, width: width - column) : [help]
    let indent = String(repeating: " ", count: column)
    let head = "  " + name
    var result: [String]
    if head.count <= column - 2 {
      result = [padded(head, to: column) + (lines.first ?? "")]
      result += lines.dropFirst().map { indent + $0 }
    } else {
      result = [head] + lines.map { indent + $0 }
    }
    return result.joined(separator: "\n")
  }

  /// Splits text into lines of at most `width` characters at spaces.
  public static func wrap(_ text: String, width: Int) -> [String] {
    var lines = [String]()
    var line = ""
    for word in text.split(separator: " ") {
      if !line.isEmpty && line.count + 1 + word.count > width {
        lines.append(line)
        line = ""
      }
      line += (line.isEmpty ? "" : " ") + word
    }
    if !line.isEmpty { lines.append(line) }
    return lines
  }
}
