import Foundation

/// `taskkey vectors`: the group of `vectors check`.
struct VectorsCommand: CommandGroup {
  static let spec = CommandSpec(
    name: "vectors", abstract: "Check test vector files (default: the Vectors/ directory) against this build.",
    example: """
      # What an auditor runs from a checkout:
      taskkey vectors check Vectors/
      """)
  static let subcommands: [any Command.Type] = [VectorsCheckCommand.self]
}

/// `taskkey vectors check [PATH...]`.
struct VectorsCheckCommand: Command {
  static let spec = CommandSpec(
    name: "check", abstract: "Run vector files and report each case that did not give its expected outcome.",
    arguments: [
      ArgumentSpec(
        name: "PATH", kind: .file,
        help: "A vector file, or a directory whose *.json files are checked (default: ./Vectors).", optional: true,
        repeating: true)
    ],
    json: JSONShape(
      fields: ["files", "passed", "failed"],
      help: "{files: [{path, format, cases, failures: [...]}], passed, failed}."),
    example: """
      taskkey vectors check Vectors/
      """)

  let paths: [String]
  let json: Bool

  init(_ arguments: ParsedArguments) {
    json = arguments.flag(CommandSpec.jsonOption)
    paths = arguments.positionals.isEmpty ? ["Vectors"] : arguments.positionals
  }

  func run(_ streams: StandardStreams) throws {
    let files = try paths.flatMap(Self.expand)
    let reports = files.map(VectorChecker.check)
    let failed = reports.filter { !$0.passed }.count
    if json {
      let object: [String: Any] = [
        "files": reports.map {
          ["path": $0.path, "format": $0.format ?? NSNull(), "cases": $0.cases, "failures": $0.failures]
            as [String: Any]
        },
        "passed": reports.count - failed,
        "failed": failed,
      ]
      let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
      try streams.write(Array(data) + [UInt8(ascii: "\n")])
    } else {
      for report in reports {
        let status = report.passed ? "ok  " : "FAIL"
        try streams.print("\(status) \(report.path) (\(report.format ?? "unknown format"), \(report.cases) cases)")
        for failure in report.failures { try streams.print("     \(failure)") }
        if !report.skipped.isEmpty {
          try streams.print(
            "     skipped \(report.skipped.count) (parameters this build does not use):"
          )
          for skipped in report.skipped { try streams.print("       \(skipped)") }
        }
      }
      try streams.print("\(reports.count - failed) passed, \(failed) failed")
    }
    if failed > 0 { throw CLIError.vectorsFailed(count: failed) }
  }

  /// A file as itself; a directory as its *.json files, sorted, recursively.
  static func expand(_ path: String) throws -> [String] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw CLIError.cannotOpen(path: path, reason: "no such file or directory")
    }
    guard isDirectory.boolValue else { return [path] }
    guard let enumerator = FileManager.default.enumerator(atPath: path) else {
      throw CLIError.cannotOpen(path: path, reason: "cannot list the directory")
    }
    return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".json") }.sorted()
      .map { (path as NSString).appendingPathComponent($0) }
  }
}
