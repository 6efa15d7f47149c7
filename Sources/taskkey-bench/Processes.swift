import CBenchBaseline
import Foundation

/// Runs `arguments` (a path first) with standard input from `input`;
/// returns nanoseconds, failing when the process does not exit 0.
func run(_ arguments: [String], input: String? = nil, output: String? = nil) throws -> (UInt64, Int) {
  var argv = arguments.map { strdup($0) } + [nil]
  defer { for pointer in argv { free(pointer) } }
  var peak = 0
  let elapsed = taskkey_bench_run(&argv, input, output, &peak)
  guard elapsed > 0 else { throw BenchError.failed("'\(arguments.joined(separator: " "))' failed") }
  return (elapsed, peak)
}

/// A scratch TaskKey home with an unlocked vault (fast test KDF: the
/// benchmark times commands, not the passphrase KDF), a key file, a sealed
/// value and an assistant key.
struct Scratch {
  let directory: String
  let taskkey: String

  init(taskkey: String) throws {
    self.taskkey = taskkey
    directory = NSTemporaryDirectory() + "taskkey-bench-\(getpid())"
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(
      atPath: directory + "/home", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    setenv("TASKKEY_HOME", directory + "/home", 1)
    try write("passphrase", "bench passphrase, not secret\n")
    try write("plain", String(repeating: "a", count: 256) + "\n")
    _ = try run([taskkey, "init", "--kdf", "fast-test-only", "--passphrase-file", path("passphrase")])
    _ = try run([taskkey, "unlock", "--passphrase-file", path("passphrase")])
    _ = try run([taskkey, "keygen", "--out", path("note.key")])
    _ = try run([taskkey, "seal", "--key-file", path("note.key")], input: path("plain"), output: path("sealed"))
    _ = try run([taskkey, "mint", "--name", "bench"], output: path("minted"))
    let minted = try String(contentsOfFile: path("minted"), encoding: .utf8)
    guard let key = minted.split(separator: "\n").first(where: { $0.hasPrefix("tk_") }) else {
      throw BenchError.failed("mint printed no tk_ key")
    }
    try write("assistant.key", key + "\n")
  }

  func path(_ name: String) -> String { directory + "/" + name }

  func write(_ name: String, _ text: String) throws {
    try text.write(toFile: path(name), atomically: false, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path(name))
  }

  func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Start-up: `taskkey seal`, `open` and `verify` as whole processes, paired
/// round by round with an empty Swift main.
func processRows(options: Options) throws -> [Row] {
  let taskkey = try options.path("taskkey")
  let empty = try options.path("empty-main")
  let scratch = try Scratch(taskkey: taskkey)
  defer { scratch.remove() }
  let rounds = options.quick ? 9 : 21
  let perRound = 5
  func mean(_ arguments: [String], input: String?) throws -> UInt64 {
    var total: UInt64 = 0
    for _ in 0..<perRound { total += try run(arguments, input: input).0 }
    return total / UInt64(perRound)
  }
  var rows = [Row]()
  let commands: [(String, [String], String)] = [
    (
      "taskkey seal (256 B, key file)", [taskkey, "seal", "--key-file", scratch.path("note.key")], scratch.path("plain")
    ),
    (
      "taskkey open (256 B, key file)", [taskkey, "open", "--key-file", scratch.path("note.key")],
      scratch.path("sealed")
    ),
    ("taskkey verify", [taskkey, "verify"], scratch.path("assistant.key")),
  ]
  var baselines = [("empty Swift main (dynamic runtime)", empty, true)]
  if let staticEmpty = options.values["empty-main-static"] {
    baselines.append(("empty Swift main (static runtime)", staticEmpty, false))
  }
  for (name, arguments, input) in commands where options.wants("process") {
    let result = try pairedRounds(
      rounds: rounds, ours: { try mean(arguments, input: input) },
      baselines: baselines.map { baseline in { try mean([baseline.1], input: nil) } })
    let milliseconds = Double(result.ours.sorted()[result.ours.count / 2]) / 1e6
    for (index, baseline) in baselines.enumerated() {
      let ratio = result.ratios[index]
      rows.append(
        Row(
          name: "\(name) / \(baseline.0)", size: "-",
          measured: String(format: "%.2f ms, %.2fx", milliseconds, ratio.median), spread: ratio.spread,
          goal: baseline.2 ? "<= 2.00x" : "-", met: baseline.2 ? ratio.median <= 2.0 : nil))
    }
  }
  if options.wants("process") { rows.append(try foundationRow(taskkey)) }
  if options.wants("verify") {
    rows += try ScaleBench.verifyRows(
      scratch: scratch, emptyMain: empty, quick: options.quick, lastUsedVersion1: options.values["last-used"] == "v1")
  }
  if options.wants("vault") { rows += try ScaleBench.vaultRows(scratch: scratch, quick: options.quick) }
  if options.wants("batch") { rows += try BatchBench.rows(scratch: scratch, quick: options.quick) }
  if options.wants("lines") { rows += try LineInputBench.rows(scratch: scratch, quick: options.quick) }
  if options.wants("kdf") { rows += try KDFBench.rows(scratch: scratch) }
  return rows
}

/// Whether the `taskkey` binary links Foundation's CoreFoundation (its
/// `__CFInitialize` symbol): that code alone costs each process ~0.5 ms of
/// start-up, a quarter of goal 6's budget, so a `String(format:)`, a date
/// formatter or `JSONSerialization` creeping back into the binary is a miss.
func foundationRow(_ taskkey: String) throws -> Row {
  let binary = try Data(contentsOf: URL(fileURLWithPath: taskkey))
  let links = binary.range(of: Data("__CFInitialize".utf8)) != nil
  return Row(
    name: "taskkey binary free of CoreFoundation (start-up)", size: "-",
    measured: links ? "links CoreFoundation" : "does not link it", spread: "-", goal: "not linked", met: !links)
}
