import CommandKit
import FoundationEssentials
import TaskKeyVectors

/// `taskkey vectors`: the group of `vectors check`.
struct VectorsCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "vectors", abstract: "Check test vector files (default: the Vectors/ directory) against this build.",
    example: """
      # What an auditor runs from a checkout:
      taskkey vectors check Vectors/
      """)
  static let subcommands: [any CommandDeclaration.Type] = [VectorsCheckCommand.self]
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
      let object = JSONValue.object([
        "files": .array(
          reports.map {
            .object([
              "path": .string($0.path), "format": .optional($0.format), "passed": .int($0.passed),
              "failed": .int($0.failed), "skipped": .int($0.skipped), "failures": .strings($0.failures),
              "skipped_groups": .strings($0.skippedGroups),
            ])
          }),
        "passed": .int(passed), "failed": .int(failed), "skipped": .int(skipped),
        "files_passed": .int(reports.count - filesFailed), "files_failed": .int(filesFailed),
      ])
      try streams.write(object.encoded + [UInt8(ascii: "\n")])
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
    var isDirectory = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw CLIError.cannotOpen(path: path, reason: "no such file or directory")
    }
    guard isDirectory else { return [path] }
    guard let subpaths = try? FileManager.default.subpathsOfDirectory(atPath: path) else {
      throw CLIError.cannotOpen(path: path, reason: "cannot list the directory")
    }
    return subpaths.filter { $0.hasSuffix(".json") }.sorted()
      .map { (path.hasSuffix("/") ? path : path + "/") + $0 }
  }
}
