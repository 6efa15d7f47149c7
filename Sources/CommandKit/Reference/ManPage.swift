/// A program's man page in man(7) format, printed from its declarations:
/// every command with its usage, arguments, options and example, the
/// common options, the exit codes the program returns, then the
/// program's own sections.
struct ManPage {
  let program: CommandProgram

  /// `text` escaped for man(7): backslashes, hyphens, and a leading `.` or
  /// `'` that would start a request.
  static func escape(_ text: String) -> String {
    text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
      .split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }
      .joined(separator: "\n")
  }

  func render() -> String {
    let name = program.name
    let manual = program.manual
    var page = """
      .TH \(name.uppercased()) 1 "" "\(name) \(program.version)" "\(manual.manual)"
      .SH NAME
      \(name) \\- \(Self.escape(manual.title))
      .SH SYNOPSIS
      .B \(name)
      [\\fB\\-q\\fR|\\fB\\-v\\fR]
      .I command
      [\\fIoptions\\fR]
      .SH DESCRIPTION

      """
    page += manual.description.map(Self.escape).joined(separator: "\n.PP\n") + "\n.SH COMMANDS\n"
    for node in program.nodes {
      let spec = node.command.spec
      page += ".SS \(Self.escape(node.words.joined(separator: " ")))\n\(Self.escape(spec.abstract))\n"
      let usage = HelpText.usageLine(spec, path: node.path, subcommands: node.command.subcommands)
      page += ".PP\n.B \(Self.escape(usage))\n"
      for argument in spec.arguments {
        page += ".TP\n.I \(Self.escape(argument.name))\n\(Self.escape(argument.help))\n"
      }
      for option in spec.options + (spec.json == nil ? [] : [CommandSpec.jsonOption]) {
        page += ".TP\n.B \(Self.escape(option.synopsis))\n\(Self.escape(HelpText.optionHelp(option, spec)))\n"
      }
      if !spec.discussion.isEmpty {
        page += ".PP\n\(Self.escape(spec.discussion.replacing("\n", with: " ")))\n"
      }
      if !spec.example.isEmpty { page += ".PP\nExample:\n.nf\n\(Self.escape(spec.example))\n.fi\n" }
    }
    page += ".SH OPTIONS\nEvery command takes:\n"
    for option in CommandSpec.commonOptions {
      page += ".TP\n.B \(Self.escape(option.synopsis))\n\(Self.escape(option.help))\n"
    }
    page += ".SH EXIT STATUS\n.TS\nl l.\n"
    for code in program.exitCodes { page += "\(code.rawValue)\t\(Self.escape(code.summary))\n" }
    page += ".TE\n" + manual.sections + "\n"
    return page
  }
}
