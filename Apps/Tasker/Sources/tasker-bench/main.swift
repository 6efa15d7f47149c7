// tasker-bench: Tasker at scale, each figure next to its floor in the same run.
//
//   make app-bench    (the shipped build; or by hand:)
//   .build/shipped/release/tasker-bench [--tasks N] [--note-bytes B] [--runs R] [--attachment-mib M]
//     [--keep DIR] | --lock-kept DIR
//
// Makes a throwaway vault (fast test KDF) and database, fills N tasks with
// B-byte plain notes, then times the `tasker` binary beside it (wall clock,
// median of R runs, at least 101 for `--version` and `show`, output to
// /dev/null) against a floor: the sqlite3 shell running the same query,
// `tasker --version` (process start), and an SQL UPDATE rewriting the same
// bytes without any crypto. With `--keep DIR` the
// sealed database and the unlocked vault stay in DIR (TASKER_HOME=DIR/tasker,
// TASKKEY_HOME=DIR/keys) for scripts/time_commands.py; `--lock-kept DIR`
// then locks that vault (its session key leaves /dev/shm) and removes DIR.
import Foundation
import TaskCrypto
import TaskVault
import TaskerCore

struct Options {
  var tasks = 100_000
  var noteBytes = 1024
  var runs = 7
  var attachmentMiB = 1024
  var keep: String?
  var lockKept: String?

  init(_ arguments: [String]) {
    var index = 0
    while index + 1 < arguments.count {
      let value = Int(arguments[index + 1]) ?? 0
      switch arguments[index] {
      case "--keep": keep = arguments[index + 1]
      case "--lock-kept": lockKept = arguments[index + 1]
      case "--tasks": tasks = value
      case "--note-bytes": noteBytes = value
      case "--runs": runs = value
      case "--attachment-mib": attachmentMiB = value
      default: fail("unknown option \(arguments[index])")
      }
      index += 2
    }
    guard tasks > 0, noteBytes > 0, runs > 0, attachmentMiB >= 0 else { fail("options must be positive") }
  }
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("tasker-bench: \(message)\n".utf8))
  exit(1)
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  try body()
  return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func milliseconds(_ value: Double) -> String {
  String(format: value < 0.01 ? "%.3f ms" : "%.1f ms", value * 1000)
}

/// Runs a binary with stdout to /dev/null and returns its wall time; a
/// non-zero exit ends the bench.
func run(_ path: String, _ arguments: [String], environment: [String: String]) -> Double {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  process.environment = environment
  process.standardOutput = FileHandle.nullDevice
  // waitUntilExit polls a run loop and adds tens of milliseconds on Linux
  // (`/bin/true` measured 50 ms); the termination handler runs on SIGCHLD.
  let exited = DispatchSemaphore(value: 0)
  process.terminationHandler = { _ in exited.signal() }
  let elapsed = seconds {
    do { try process.run() } catch { fail("cannot run \(path): \(error)") }
    exited.wait()
  }
  guard process.terminationStatus == 0 else { fail("\(path) \(arguments) exited \(process.terminationStatus)") }
  return elapsed
}

/// Runs a binary with stdout to /dev/null, sampling its peak resident size
/// (VmHWM) until it exits.
func peakMemory(_ path: String, _ arguments: [String], environment: [String: String]) -> (Double, Int) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  process.environment = environment
  process.standardOutput = FileHandle.nullDevice
  var peakKiB = 0
  let elapsed = seconds {
    do { try process.run() } catch { fail("cannot run \(path): \(error)") }
    let status = "/proc/\(process.processIdentifier)/status"
    while process.isRunning {
      if let text = try? String(contentsOfFile: status, encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
      {
        peakKiB = max(peakKiB, kib)
      }
      usleep(2000)
    }
  }
  guard process.terminationStatus == 0 else { fail("\(path) \(arguments) exited \(process.terminationStatus)") }
  return (elapsed, peakKiB)
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
if let kept = options.lockKept {
  do {
    try Vault(at: kept + "/keys").lock()
    try FileManager.default.removeItem(atPath: kept)
  } catch {
    fail("cannot lock and remove \(kept): \(error)")
  }
  exit(0)
}
let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
let tasker = binDirectory + "/tasker"
guard FileManager.default.isExecutableFile(atPath: tasker) else { fail("no tasker beside the bench: build it first") }
let sqlite3 = ["/usr/bin/sqlite3", "/bin/sqlite3"].first { FileManager.default.isExecutableFile(atPath: $0) }
guard let sqlite3 else { fail("sqlite3 is not installed (apt-get install sqlite3)") }

let root = options.keep ?? NSTemporaryDirectory() + "/tasker-bench-\(ProcessInfo.processInfo.processIdentifier)"
try? FileManager.default.removeItem(atPath: root)
try FileManager.default.createDirectory(
  atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
defer { if options.keep == nil { try? FileManager.default.removeItem(atPath: root) } }
let home = TaskerHome(directory: root + "/tasker")
let keys = root + "/keys"
let environment = ["TASKER_HOME": home.directory, "TASKKEY_HOME": keys, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
let passphrase = try Array("bench passphrase".utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
let vault = try Vault.create(at: keys, passphrase: passphrase, preset: .fastTestOnly)
try vault.unlock(passphrase: passphrase)
defer { if options.keep == nil { try? vault.lock() } }

// Fill: plain notes, as a database written before encryption was turned on.
let store = try TaskStore(home: home, keys: VaultKeySource(directory: keys))
try store.setBodyEncryption(false)
let fill = try seconds {
  var drafts = [TaskDraft]()
  drafts.reserveCapacity(10_000)
  for index in 1...options.tasks {
    var draft = TaskDraft(title: "Task number \(index)")
    let prefix = "note \(index) "
    draft.notes = prefix + String(repeating: "n", count: max(0, options.noteBytes - prefix.utf8.count))
    draft.due = try CalendarDate(parsing: "2026-12-\(index % 28 + 1 < 10 ? "0" : "")\(index % 28 + 1)")
    draft.priority = Priority(rawValue: index % 4) ?? .none
    drafts.append(draft)
    if drafts.count == 10_000 || index == options.tasks {
      try store.addTasks(drafts)
      drafts.removeAll(keepingCapacity: true)
    }
  }
}
let middle = String(options.tasks / 2)
let listingSQL =
  "SELECT id, title, due, estimate_minutes, priority, energy, status, contexts FROM tasks WHERE status = 'open' ORDER BY due IS NULL, due, id"

/// The median wall time of `runs` runs after one warm-up run.
func timed(_ path: String, _ arguments: [String], runs: Int = options.runs) -> Double {
  _ = run(path, arguments, environment: environment)  // warm the page cache
  return median((0..<runs).map { _ in run(path, arguments, environment: environment) })
}

/// Runs for a command of a few milliseconds, whose median needs more than
/// `--runs` samples on a shared machine.
let shortRuns = max(options.runs, 101)

var rows = [(String, String, String)]()
rows.append(
  ("fill: \(options.tasks) tasks, \(options.noteBytes)-byte notes (library, 10 transactions)", milliseconds(fill), ""))
let processStart = timed(tasker, ["--version"], runs: shortRuns)
rows.append(
  (
    "`tasker --version` (process start)", milliseconds(processStart),
    "`/bin/true`: \(milliseconds(timed("/bin/true", [])))"
  ))
rows.append(
  (
    "`tasker list` (plain)", milliseconds(timed(tasker, ["list"])),
    "sqlite3 shell, same query: \(milliseconds(timed(sqlite3, [home.databasePath, listingSQL])))"
  ))
rows.append(
  ("`tasker show \(middle)` (plain note)", milliseconds(timed(tasker, ["show", middle], runs: shortRuns)), ""))

// The floor for encrypt: SQLite rewriting every note with same-sized text, no crypto, on a copy.
let copy = root + "/copy.db"
try FileManager.default.copyItem(atPath: home.databasePath, toPath: copy)
let sealedSize = (options.noteBytes + 28 + 2) / 3 * 4 + 13
let floor = run(sqlite3, [copy, "UPDATE tasks SET notes = printf('%.\(sealedSize)c', 'x')"], environment: environment)
let encrypt = run(tasker, ["encrypt"], environment: environment)
let encryptRate = Double(options.tasks) / encrypt
rows.append(
  (
    "`tasker encrypt` of \(options.tasks) bodies",
    String(format: "%.2f s = %.0f bodies/s", encrypt, encryptRate),
    String(
      format: "SQL UPDATE of the same bytes, no crypto: %.2f s = %.0f rows/s", floor, Double(options.tasks) / floor)
  ))
rows.append(
  ("`tasker encrypt` again (nothing to do)", milliseconds(run(tasker, ["encrypt"], environment: environment)), ""))
rows.append(("`tasker list` (sealed notes)", milliseconds(timed(tasker, ["list"])), ""))
rows.append(
  (
    "`tasker show \(middle)` (sealed note, vault read)",
    milliseconds(timed(tasker, ["show", middle], runs: shortRuns)),
    "process start above"
  ))

// In process: the store calls alone, without process start.
let reader = try TaskStore(home: home, keys: VaultKeySource(directory: keys))
let firstShow = try seconds { _ = try reader.task(id: Int64(options.tasks / 2)) }
let warmShow = median(
  try (0..<options.runs).map { run in try seconds { _ = try reader.task(id: Int64(options.tasks / 3 + run)) } })
let warmList = median(try (0..<options.runs).map { _ in try seconds { _ = try reader.tasks() } })
rows.append(("in process: `task(id:)` first call (opens the vault)", milliseconds(firstShow), ""))
rows.append(("in process: `task(id:)` after", milliseconds(warmShow), ""))
rows.append(("in process: `tasks()` (\(options.tasks) summaries)", milliseconds(warmList), ""))
rows.append(("`tasker plan-context --json --limit 1000`", milliseconds(timed(tasker, ["plan-context", "--json"])), ""))

if options.attachmentMiB > 0 {
  let file = root + "/big.bin"
  _ = FileManager.default.createFile(atPath: file, contents: nil)
  let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
  try handle.truncate(atOffset: UInt64(options.attachmentMiB) << 20)
  try handle.close()
  let (add, addPeak) = peakMemory(tasker, ["attach", "add", "--task", "1", file], environment: environment)
  let (get, getPeak) = peakMemory(tasker, ["attach", "get", "1"], environment: environment)
  rows.append(
    (
      "`tasker attach add` of \(options.attachmentMiB) MiB",
      String(format: "%.2f s, peak RSS %d MiB", add, addPeak / 1024), ""
    ))
  rows.append(
    (
      "`tasker attach get` of \(options.attachmentMiB) MiB to /dev/null",
      String(format: "%.2f s, peak RSS %d MiB", get, getPeak / 1024), ""
    ))
}

let load =
  (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(
    separator: " ") ?? "?"
print("| measurement | Tasker | floor / peer in the same run |")
print("| --- | --- | --- |")
for (name, value, floor) in rows { print("| \(name) | \(value) | \(floor) |") }
// The issue's goals, each against the in-process figure and the whole command.
let listCommand = timed(tasker, ["list"])
let showCommand = timed(tasker, ["show", middle], runs: shortRuns)
func goal(_ met: Bool) -> String { met ? "met" : "MISSED" }
print("")
print("| goal | in process | whole command (process start \(milliseconds(processStart))) |")
print("| --- | --- | --- |")
print(
  "| list < 200 ms | \(milliseconds(warmList)) \(goal(warmList < 0.2)) | \(milliseconds(listCommand)) \(goal(listCommand < 0.2)) |"
)
print(
  "| show < 5 ms | \(milliseconds(warmShow)) \(goal(warmShow < 0.005)) | \(milliseconds(showCommand)) \(goal(showCommand < 0.005)) |"
)
print("| encrypt ≥ 50,000 bodies/s | | \(Int(encryptRate)) bodies/s \(goal(encryptRate >= 50_000)) |")
print("")
print(
  "\(ProcessInfo.processInfo.activeProcessorCount) CPUs, load average \(load); median of \(options.runs) runs "
    + "(\(shortRuns) for `--version` and `show`) after one warm-up."
)
