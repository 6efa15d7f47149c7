import CBenchBaseline
import Foundation
import TaskCrypto

/// Issue 24, goal 1, measured the way an outside harness measures it: TaskKey,
/// the C floor and Python each in a process of its own, started afresh every
/// round, in an order that rotates between rounds. Each process warms up,
/// times its own loop in thread CPU time and prints nanoseconds per call;
/// the table gives the median of the per-round ratios. The in-process rows
/// (`cryptoRows`, the Python peer kept running) measure the same goal the
/// other way; README says why the two may differ.
enum SeparateProcesses {
  /// The operations a child times (`taskkey-bench --time OP --size N
  /// --count C`): TaskKey's sealed-text calls and the floor's text jobs.
  static let operations = ["seal-text", "open-text", "open-text-bytes", "floor-seal-text", "floor-open-text"]

  /// The child: times `count` calls of `operation` on `size` bytes after
  /// `count / 4` calls of warm-up, and prints nanoseconds per call (the
  /// median of slices of 500 calls). With `--against FLOOR`, a development
  /// aid, it alternates slices with the floor's and prints their ratio.
  static func timeInThisProcess(_ operation: String, size: Int, count: Int, options: Options) throws {
    let keyring = try Keyring.generate()
    let sealed = try SealedValue.seal(
      bytes: [UInt8](repeating: 0x61, count: size), using: keyring.primary, context: context)
    let body = try Self.body(operation, size: size, keyring: keyring, sealed: sealed)
    if let floorOperation = options.values["against"] {
      // Development aid: slices of 500 calls alternating with the floor's,
      // in this one process; prints the median of the per-slice ratios.
      let floor = try Self.body(floorOperation, size: size, keyring: keyring, sealed: sealed)
      var ratios = [Double]()
      _ = try body(2000)
      _ = try floor(2000)
      for slice in 0..<max(1, count / 500) {
        let (a, b) = slice % 2 == 0 ? (try body(500), try floor(500)) : (try floor(500), try body(500))
        ratios.append(slice % 2 == 0 ? Double(a) / Double(b) : Double(b) / Double(a))
      }
      ratios.sort()
      print(
        String(
          format: "median %.3f  p25 %.3f  p75 %.3f", ratios[ratios.count / 2], ratios[ratios.count / 4],
          ratios[ratios.count * 3 / 4]))
      return
    }
    // Warm-up, then the loop in slices of 500 calls: the median slice is
    // the figure, so a burst of load on the shared machine during one
    // slice does not move it.
    _ = try body(max(1, count / 4))
    var slices = [UInt64]()
    for _ in 0..<max(1, count / 500) {
      let elapsed = try body(500)
      guard elapsed > 0 else { throw BenchError.failed("the timed loop of \(operation) failed") }
      slices.append(elapsed)
    }
    slices.sort()
    print(String(format: "%.3f", Double(slices[slices.count / 2]) / 500))
  }

  /// A timed loop of `operation`: given a call count, its thread CPU
  /// nanoseconds.
  private static func body(_ operation: String, size: Int, keyring: Keyring, sealed: String) throws -> (Int) throws
    -> UInt64
  {
    let note = keyring.primary
    let text = String(repeating: "a", count: size)
    switch operation {
    case "seal-text":
      return { n in
        try nanoseconds { for _ in 0..<n { _ = try SealedValue.seal(text, using: keyring, context: context) } }
      }
    case "open-text":
      return { n in
        try nanoseconds { for _ in 0..<n { _ = try SealedValue.open(sealed, using: keyring, context: context) } }
      }
    case "open-text-bytes":
      return { n in
        try nanoseconds { for _ in 0..<n { _ = try SealedValue.openBytes(sealed, using: keyring, context: context) } }
      }
    case "floor-seal-text", "floor-open-text":
      let aad = Array(("tc1.\(note.id.hex):" + context).utf8)
      var rawKey = [UInt8](repeating: 0, count: 32)
      note.key.withUnsafeBytes { rawKey = Array($0) }
      guard let floor = taskkey_floor_new(rawKey, size, aad, aad.count) else {
        throw BenchError.failed("the OpenSSL floor could not be set up")
      }
      let sealing = operation == "floor-seal-text"
      return { n in sealing ? taskkey_floor_text_seal(floor, size, n) : taskkey_floor_text_open(floor, size, n) }
    default:
      throw BenchError.failed("unknown --time operation '\(operation)' (one of \(operations.joined(separator: ", ")))")
    }
  }

  /// One child's nanoseconds per call, from its standard output.
  private static func perCall(_ arguments: [String], scratch: String) throws -> Double {
    _ = try run(arguments, output: scratch)
    let text = try String(contentsOfFile: scratch, encoding: .utf8)
    guard let value = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0 else {
      throw BenchError.failed("'\(arguments.joined(separator: " "))' printed '\(text)'")
    }
    return value
  }

  /// Goal 1's rows for 256-byte notes, every side a fresh process each
  /// round: seal and open from text against the floor's text jobs (<=
  /// 1.30x) and against Python's bare AESGCM.encrypt / decrypt (< 1.00x).
  static func rows(options: Options) throws -> [Row] {
    let bench =
      CommandLine.arguments[0].hasPrefix("/")
      ? CommandLine.arguments[0]
      : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0]
    let pythonPath = try options.path("python")
    let peer = try options.path("peer")
    let rounds = options.quick ? 11 : 31
    let size = 256
    let count = options.quick ? 20_000 : 50_000
    let scratch = NSTemporaryDirectory() + "taskkey-bench-separate-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let aad = "tc1.00000000:" + context
    func ours(_ operation: String) -> [String] {
      [bench, "--time", operation, "--size", "\(size)", "--count", "\(count)"]
    }
    func python(_ operation: String) -> [String] {
      [pythonPath, peer, aad, "--once", operation, "\(size)", "\(count)"]
    }
    var rows = [Row]()
    let jobs: [(name: String, ours: String, floor: String, peer: String, peerName: String)] = [
      ("SealedValue.seal (text)", "seal-text", "floor-seal-text", "encrypt", "Python AESGCM.encrypt"),
      ("SealedValue.open (text -> String)", "open-text", "floor-open-text", "decrypt", "Python AESGCM.decrypt"),
      ("SealedValue.openBytes (text)", "open-text-bytes", "floor-open-text", "decrypt", "Python AESGCM.decrypt"),
    ]
    for job in jobs {
      var floorRatios = Ratios(values: [])
      var peerRatios = Ratios(values: [])
      var times = [Double]()
      for round in 0..<rounds {
        let sides = [ours(job.ours), ours(job.floor), python(job.peer)]
        var measured = [Double](repeating: 0, count: 3)
        for step in 0..<3 {
          let side = (round + step) % 3
          measured[side] = try perCall(sides[side], scratch: scratch)
        }
        floorRatios.values.append(measured[0] / measured[1])
        peerRatios.values.append(measured[0] / measured[2])
        times.append(measured[0])
      }
      let median = times.sorted()[times.count / 2]
      rows.append(
        Row(
          name: "\(job.name) / C floor, separate processes", size: sizeText(size),
          measured: String(format: "%.0f ns/call, %.2fx", median, floorRatios.median), spread: floorRatios.spread,
          goal: "<= 1.30x", met: floorRatios.median <= 1.3))
      rows.append(
        Row(
          name: "\(job.name) / \(job.peerName), separate processes", size: sizeText(size),
          measured: String(format: "%.2fx", peerRatios.median), spread: peerRatios.spread,
          goal: "< 1.00x (faster)", met: peerRatios.median < 1.0))
    }
    return rows
  }
}
