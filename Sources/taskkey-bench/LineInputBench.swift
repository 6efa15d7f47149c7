import CBenchBaseline
import Foundation

/// Issue 24, goal 2: a JSON-lines command reads one long line in linear
/// time whatever the source. `taskkey rewrap` passes a plain line of 1, 4,
/// 16 and 24 MiB (the line limit) through, its standard input once a pipe
/// filled 64 KiB at a time (so each read returns at most a pipe buffer, as
/// from a shell pipeline) and once the file itself, paired round by round;
/// the goal is the pipe within 1.2x of the file, in CPU time of the child.
enum LineInputBench {
  static let maximumRatio = 1.2

  static func rows(scratch: Scratch, quick: Bool) throws -> [Row] {
    let rounds = quick ? 5 : 11
    let arguments = [scratch.taskkey, "rewrap", "--context", "bench/line"]
    var rows = [Row]()
    for mebibytes in [1, 4, 16, 24] {
      let input = scratch.path("line-\(mebibytes).txt")
      let output = scratch.path("line-\(mebibytes).out")
      var line = [UInt8](repeating: UInt8(ascii: "a"), count: mebibytes << 20)
      line.append(UInt8(ascii: "\n"))
      guard FileManager.default.createFile(atPath: input, contents: Data(line), attributes: [.posixPermissions: 0o600])
      else { throw BenchError.failed("cannot create \(input)") }
      defer {
        try? FileManager.default.removeItem(atPath: input)
        try? FileManager.default.removeItem(atPath: output)
      }
      var argv = arguments.map { strdup($0) } + [nil]
      defer { for pointer in argv { free(pointer) } }
      let piped = {
        let elapsed = taskkey_bench_run_piped(&argv, input, output)
        guard elapsed > 0 else { throw BenchError.failed("'\(arguments.joined(separator: " "))' from a pipe failed") }
        return elapsed
      }
      _ = try piped()
      guard try Data(contentsOf: URL(fileURLWithPath: output)) == Data(line) else {
        throw BenchError.failed("rewrap of a \(mebibytes) MiB plain line did not pass it through unchanged")
      }
      let result = try pairedRounds(
        rounds: rounds, ours: piped, baselines: [{ try run(arguments, input: input, output: output).0 }])
      let milliseconds = Double(result.ours.sorted()[result.ours.count / 2]) / 1e6
      let ratio = result.ratios[0]
      rows.append(
        Row(
          name: "taskkey rewrap, one line from a pipe / from a file", size: "\(mebibytes) MiB",
          measured: String(format: "%.1f ms, %.2fx", milliseconds, ratio.median), spread: ratio.spread,
          goal: String(format: "<= %.2fx", maximumRatio), met: ratio.median <= maximumRatio))
    }
    return rows
  }
}
