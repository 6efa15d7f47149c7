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

/// `taskkey vectors check [PATH...]`: runs vector files against this build.
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
      fields: ["files", "passed", "failed", "skipped", "files_passed", "files_failed"],
      help: "{files: [{path, format, passed, failed, skipped, failures: [...], skipped_groups: [...]}], passed, "
        + "failed, skipped, files_passed, files_failed}; the counts are cases."),
    example: """
      taskkey vectors check Vectors/
      """)

  let paths: [String]
  let json: Bool

  init(_ arguments: ParsedArguments) {
    json = arguments.flag(CommandSpec.jsonOption)
    paths = arguments.positionals.isEmpty ? ["Vectors"] : arguments.positionals
  }

  /// Prints one line per file with its case counts (failures and skipped
  /// groups named under it), a line of file totals, and, last, the case
  /// totals: "N passed, N failed, N skipped".
  func run(_ streams: StandardStreams) throws {
    let files = try paths.flatMap(Self.expand)
    let reports = files.map(VectorCheck.check)
    let filesFailed = reports.filter { !$0.isPassing }.count
    let passed = reports.reduce(0) { $0 + $1.passed }
    let failed = reports.reduce(0) { $0 + $1.failed }
    let skipped = reports.reduce(0) { $0 + $1.skipped }
    if json {
      let object: [String: Any] = [
        "files": reports.map {
          [
            "path": $0.path, "format": $0.format ?? NSNull(), "passed": $0.passed, "failed": $0.failed,
            "skipped": $0.skipped, "failures": $0.failures, "skipped_groups": $0.skippedGroups,
          ] as [String: Any]
        },
        "passed": passed, "failed": failed, "skipped": skipped,
        "files_passed": reports.count - filesFailed, "files_failed": filesFailed,
      ]
      let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
      try streams.write(Array(data) + [UInt8(ascii: "\n")])
    } else {
      for report in reports {
        try streams.print(
          "\(report.isPassing ? "ok  " : "FAIL") \(report.path) (\(report.format ?? "unknown format")): "
            + "\(report.passed) passed, \(report.failed) failed, \(report.skipped) skipped")
        for failure in report.failures { try streams.print("     \(failure)") }
        for group in report.skippedGroups { try streams.print("     skipped: \(group)") }
      }
      try streams.print("files: \(reports.count - filesFailed) passed, \(filesFailed) failed")
      try streams.print("\(passed) passed, \(failed) failed, \(skipped) skipped")
    }
    if filesFailed > 0 { throw CLIError.vectorsFailed(count: filesFailed) }
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
