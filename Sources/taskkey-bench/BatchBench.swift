import Foundation

/// Rewrap and JSON-lines seal/open (issue 14 goal 7): values per second for
/// 64-byte bodies and peak resident memory, from 10^3 to 10^6 lines, each
/// run a whole `taskkey` process writing its result with `--out` (streaming,
/// all or nothing). Rates are values per CPU second of the process (user +
/// system), so other work on a shared machine does not count.
enum BatchBench {
  static let minimumRate = 250_000.0
  static let maximumPeakKiB = 64 * 1024
  /// How far the peak may rise from the smallest to the largest input.
  static let flatnessKiB = 8 * 1024

  static func rows(scratch: Scratch, quick: Bool) throws -> [Row] {
    let taskkey = scratch.taskkey
    let counts = quick ? [1_000, 10_000, 100_000] : [1_000, 10_000, 100_000, 1_000_000]
    var rows = [Row]()
    var peaks: [String: [Int]] = [:]
    for count in counts {
      let plain = scratch.path("plain-\(count).jsonl")
      try writePlainLines(count: count, to: plain)
      let sealed = scratch.path("sealed-\(count).jsonl")
      let rewrapped = scratch.path("rewrapped-\(count).jsonl")
      let opened = scratch.path("opened-\(count).jsonl")
      let fields = ["--field", "body", "--context-field", "ctx"]
      // Seal under the current key, rotate, then rewrap and open.
      let seal = try measured(scratch, [taskkey, "seal"] + fields + ["--input", plain, "--out", sealed])
      _ = try run([taskkey, "rotate"])
      let rewrap = try measured(scratch, [taskkey, "rewrap"] + fields + ["--input", sealed, "--out", rewrapped])
      let open = try measured(scratch, [taskkey, "open"] + fields + ["--input", rewrapped, "--out", opened])
      guard try Data(contentsOf: URL(fileURLWithPath: opened)) == Data(contentsOf: URL(fileURLWithPath: plain)) else {
        throw BenchError.failed("seal, rewrap and open of \(count) lines did not give the input back")
      }
      for (name, result) in [("seal --field", seal), ("rewrap --field", rewrap), ("open --field", open)] {
        let rate = Double(count) / (Double(result.0) / 1e9)
        let peak = result.1
        peaks[name, default: []].append(peak)
        let judged = count >= 100_000
        rows.append(
          Row(
            name: "taskkey \(name), 64 B bodies", size: "\(count) lines",
            measured: String(format: "%.0fk values/s, peak RSS %.1f MiB", rate / 1000, Double(peak) / 1024),
            spread: "-", goal: judged ? ">= 250k/s, < 64 MiB" : "< 64 MiB",
            met: (judged ? rate >= minimumRate : true) && peak < maximumPeakKiB))
      }
      for file in [plain, sealed, rewrapped, opened] { try? FileManager.default.removeItem(atPath: file) }
    }
    for (name, values) in peaks.sorted(by: { $0.key < $1.key }) {
      let rise = values.last! - values.first!
      rows.append(
        Row(
          name: "taskkey \(name) peak RSS flat", size: "\(counts.first!)-\(counts.last!) lines",
          measured: String(format: "rises %.1f MiB", Double(rise) / 1024), spread: "-", goal: "< 8 MiB",
          met: rise < flatnessKiB))
    }
    return rows
  }

  /// Runs `arguments` under `/usr/bin/time -f %M`: CPU nanoseconds (of
  /// time and its child) and the child's own peak RSS in KiB. A process
  /// started straight from this one would report this process's peak as
  /// its own (the kernel carries the spawning address space's high-water
  /// mark across exec).
  static func measured(_ scratch: Scratch, _ arguments: [String]) throws -> (UInt64, Int) {
    let report = scratch.path("time-report")
    let (cpu, _) = try run(["/usr/bin/time", "-f", "%M", "-o", report] + arguments)
    let text = try String(contentsOfFile: report, encoding: .utf8)
    guard let kib = text.split(separator: "\n").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
      throw BenchError.failed("/usr/bin/time wrote '\(text)'")
    }
    return (cpu, kib)
  }

  /// `{"id":N,"ctx":"note/N/body","body":"<64 characters>"}` per line.
  static func writePlainLines(count: Int, to path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
      throw BenchError.failed("cannot create \(path)")
    }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var chunk = ""
    for index in 0..<count {
      let body = String(repeating: "n", count: 56) + String(format: "%08d", index)
      chunk += "{\"id\":\(index),\"ctx\":\"note/\(index)/body\",\"body\":\"\(body)\"}\n"
      if chunk.utf8.count > 1 << 20 {
        handle.write(Data(chunk.utf8))
        chunk = ""
      }
    }
    handle.write(Data(chunk.utf8))
  }
}
