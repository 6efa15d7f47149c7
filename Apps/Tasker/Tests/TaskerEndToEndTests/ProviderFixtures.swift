import Foundation
import TaskerTestSupport
import Testing

/// The planning day every provider test passes as `--today`.
let planningDay = "2026-12-01"

/// The open tasks `addPlanningTasks` leaves, in plan-context order (by due
/// day, undated last): database ids 4, 5, 3, 6, so labels t1…t4 are not ids.
let planningTasks: [(id: String, title: String)] = [
  ("4", "Call the bank"), ("5", "Write the report"), ("3", "Pay \"rent\" / €"), ("6", "Tidy up"),
]

extension TestDevice {
  /// Runs `tasker` and records an issue unless it exits 0.
  @discardableResult
  func succeed(_ arguments: [String], input: String = "", sourceLocation: SourceLocation = #_sourceLocation)
    throws -> ProcessResult
  {
    let result = try tasker(arguments, input: input)
    #expect(result.status == 0, "tasker \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    return result
  }

  /// Adds two tasks that are then deleted and completed, and the four open
  /// tasks of `planningTasks` with every field the plan context carries.
  func addPlanningTasks() throws {
    try succeed(["add", "Thrown away"])
    try succeed(["add", "Already done"])
    try succeed(["delete", "1"])
    try succeed(["done", "2"])
    try succeed(
      ["add", "Pay \"rent\" / €", "--due", "2026-12-09", "--estimate", "15", "--priority", "high", "--energy", "low"])
    try succeed(["add", "Call the bank", "--due", "2026-11-30", "--priority", "medium"])
    try succeed(["add", "Write the report", "--due", "2026-12-05", "--estimate", "90", "--energy", "high"])
    try succeed(["add", "Tidy up"])
  }

  /// Stores `value` as the vault item `name` (`taskkey item set`, the value
  /// on standard input), device-only unless asked otherwise.
  func setKey(_ name: String, _ value: String, deviceOnly: Bool = true) throws {
    let set = try taskkey(["item", "set", name] + (deviceOnly ? ["--device-only"] : []), input: value + "\n")
    #expect(set.status == 0, "taskkey item set: \(set.stderr)")
  }

  /// `tasker provider add NAME --url URL` with `options`.
  @discardableResult
  func addProvider(_ name: String, url: String, _ options: [String] = []) throws -> ProcessResult {
    try succeed(["provider", "add", name, "--url", url] + options)
  }

  /// `plan_order` of task `id` as `tasker show ID --json` prints it (nil
  /// when null).
  func planOrder(_ id: String) throws -> Int? {
    let shown = try succeed(["show", id, "--json"])
    let object = try #require(try shown.json() as? [String: Any])
    #expect(object.keys.contains("plan_order"), "show --json has plan_order: \(object.keys.sorted())")
    return object["plan_order"] as? Int
  }

  /// `plan_order` of the tasks of `planningTasks`, in that order.
  func planOrders() throws -> [Int?] {
    try planningTasks.map { try planOrder($0.id) }
  }

  /// `tasker provider log --json`'s calls, newest first.
  func providerCalls() throws -> [[String: Any]] {
    let log = try succeed(["provider", "log", "--json"])
    let object = try #require(try log.json() as? [String: Any])
    return try #require(object["calls"] as? [[String: Any]])
  }

  /// Every row of every table but `provider_log` and `sqlite_sequence`, read
  /// with the `sqlite3` shell, `plan_order` left out of `tasks` when
  /// `withoutPlanOrder`: what a plan must not change.
  func tableSnapshot(withoutPlanOrder: Bool = true) throws -> String {
    let names = try sqlite(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('provider_log', 'sqlite_sequence') "
        + "ORDER BY name")
    #expect(names.status == 0, "\(names.stderr)")
    var snapshot = ""
    for name in names.stdoutText.split(separator: "\n") {
      let rows = try Binary(path: Binary.which("sqlite3")).run(
        ["-json", home.databasePath, "SELECT * FROM \"\(name)\" ORDER BY rowid"])
      var parsed =
        rows.stdout.isEmpty ? [] : try JSONSerialization.jsonObject(with: Data(rows.stdout)) as? [[String: Any]] ?? []
      if withoutPlanOrder && name == "tasks" { parsed = parsed.map { $0.filter { $0.key != "plan_order" } } }
      let text = try JSONSerialization.data(withJSONObject: parsed, options: [.sortedKeys])
      snapshot += "\(name): " + String(decoding: text, as: UTF8.self) + "\n"
    }
    return snapshot
  }

  /// Every file under the Tasker home, concatenated (database, WAL, journal,
  /// attachments).
  func homeBytes() throws -> [UInt8] {
    var bytes = [UInt8]()
    let enumerator = FileManager.default.enumerator(atPath: home.directory)
    while let name = enumerator?.nextObject() as? String {
      var isDirectory: ObjCBool = false
      let path = home.directory + "/" + name
      if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
        bytes += [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
      }
    }
    return bytes
  }
}

/// A random secret-looking value that occurs nowhere else.
func randomSecret(_ prefix: String) -> String {
  prefix + "-" + (0..<12).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
}

extension ProcessResult {
  /// Standard output without the one newline that ends a `--dry-run` line.
  var printedBody: String {
    let text = stdoutText
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
  }
}
