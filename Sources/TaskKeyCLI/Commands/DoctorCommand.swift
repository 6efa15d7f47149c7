import BackupRules
import CommandKit

/// `taskkey doctor`: permissions, exclusion markers, unlock state, KDF.
struct DoctorCommand: Command {
  static let repairOption = OptionSpec.flag(
    "--repair",
    help: "Tighten loose modes (0700 directories, 0600 files) and re-create missing exclusion markers of "
      + "device-only/ (CACHEDIR.TAG, .nobackup, user.xdg.robots.backup=false).")

  static let spec = CommandSpec(
    name: "doctor",
    abstract: "Check (and repair) permissions and backup-exclusion markers; show unlock state and KDF.",
    options: [repairOption],
    json: JSONShape(
      fields: ["healthy", "findings"],
      help: "{healthy (bool), findings: [{check, severity (\"ok\", \"warning\", \"problem\"), message, repaired}]}."),
    discussion: "Exits 0 when no problem is left, 18 when one is.",
    example: """
      # After copying the vault by hand, put the markers back:
      taskkey doctor --repair
      """)

  let repair: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) {
    repair = arguments.flag(Self.repairOption)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Output: Encodable {
    struct Finding: Encodable {
      let check: String
      let severity: String
      let message: String
      let repaired: Bool
    }
    let healthy: Bool
    let findings: [Finding]
  }

  func run(_ streams: StandardStreams) throws {
    // Doctor reads the directory itself: it must work while permissions are wrong.
    let report = try BackupRules.doctor(directory: try vaultDirectory(streams), repair: repair)
    if json {
      try streams.printJSON(
        Output(
          healthy: report.healthy,
          findings: report.findings.map {
            .init(check: $0.check, severity: $0.severity.rawValue, message: $0.message, repaired: $0.repaired)
          }))
    } else {
      for finding in report.findings {
        let mark = finding.repaired ? "fixed" : finding.severity.rawValue
        try streams.print(
          "\(padded(mark, to: 8))\(finding.check): \(finding.message)")
      }
    }
    if !report.healthy { throw QuietExit(code: .doctorProblems) }
  }
}
