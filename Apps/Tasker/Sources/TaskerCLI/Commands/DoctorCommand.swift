import CommandKit
import TaskerCore

/// `tasker doctor`: checks the home, the database and what seals it,
/// changing nothing.
struct DoctorCommand: Command {
  static let spec = CommandSpec(
    name: "doctor",
    abstract: "Check permissions, database integrity, encryption state, keys in use and pending approvals.",
    json: JSONShape(
      fields: ["healthy", "severity", "findings", "encryption", "keys", "pending_approvals"],
      help: "the findings (severity, code, subject, message, hint), the encryption census, the keys in use and "
        + "the pending approvals."),
    discussion: "Reads only: it never repairs, migrates or creates anything, and opens nothing while a file is not "
      + "private. It exits 0 when nothing is wrong (notes and warnings included) and 18 when a finding is an error.",
    example: "tasker doctor --json")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let report = TaskStore.diagnose(home: try context.home(), keys: VaultKeySource(environment: context.environment))
    if json {
      try context.printJSON(Self.json(report))
    } else {
      for finding in report.findings {
        let subject = finding.subject.map { " \(TerminalText.visible($0)):" } ?? ""
        try context.print("\(finding.severity.rawValue)\t\(finding.code.rawValue)\(subject) \(finding.message)")
        if let hint = finding.hint, finding.severity >= .warning { try context.print("\thint: \(hint)") }
      }
      if let census = report.encryption {
        try context.print(
          "encryption\tbodies \(Self.word(census.bodyEncryption)), attachments \(Self.word(census.attachmentEncryption)); "
            + "\(census.sealedNotes + census.sealedPageBodies) bodies sealed, "
            + "\(census.plainNotes + census.plainPageBodies) plain; \(census.sealedAttachments) attachments sealed, "
            + "\(census.plainAttachments) plain")
      }
      for usage in report.keys {
        try context.print("key\t\(usage.keyID)\t\(usage.taskNotes + usage.pageBodies + usage.attachments) values")
      }
      if let pending = report.pendingApprovals { try context.print("approvals\t\(pending) pending") }
    }
    if report.severity == .error { throw QuietExit(code: .doctorProblems) }
  }

  static func word(_ setting: Bool?) -> String {
    setting.map { $0 ? "on" : "off" } ?? "unknown (vault locked)"
  }

  /// The report in the project's JSON.
  static func json(_ report: Diagnosis) -> JSONValue {
    let findings = report.findings.map { finding -> JSONValue in
      .object([
        "severity": .string(finding.severity.rawValue), "code": .string(finding.code.rawValue),
        "subject": .optional(finding.subject), "message": .string(finding.message), "hint": .optional(finding.hint),
      ])
    }
    let encryption = report.encryption.map { census -> JSONValue in
      .object([
        "body_encryption": census.bodyEncryption.map(JSONValue.bool) ?? .null,
        "attachment_encryption": census.attachmentEncryption.map(JSONValue.bool) ?? .null,
        "sealed_notes": .int(census.sealedNotes), "plain_notes": .int(census.plainNotes),
        "sealed_page_bodies": .int(census.sealedPageBodies), "plain_page_bodies": .int(census.plainPageBodies),
        "sealed_attachments": .int(census.sealedAttachments), "plain_attachments": .int(census.plainAttachments),
      ])
    }
    let keys = report.keys.map { usage -> JSONValue in
      .object([
        "key_id": .string(usage.keyID), "task_notes": .int(usage.taskNotes), "page_bodies": .int(usage.pageBodies),
        "attachments": .int(usage.attachments), "approval_arguments": .int(usage.approvalArguments),
      ])
    }
    return .object([
      "healthy": .bool(report.severity != .error), "severity": .string(report.severity.rawValue),
      "findings": .array(findings), "encryption": encryption ?? .null, "keys": .array(keys),
      "pending_approvals": .optional(report.pendingApprovals),
    ])
  }
}
