import CBenchBaseline
import Foundation

/// One line of the results table: a goal, what was measured, and whether
/// the goal was met. A row without a limit is reported, not judged.
struct Row {
  var name: String
  var size: String
  var measured: String
  var spread: String
  var goal: String
  var met: Bool?
}

/// Per-round ratios of two timings taken back to back, summarised by their
/// median and range: pairing by round keeps a burst of machine load from
/// landing on one side only.
struct Ratios {
  var values: [Double]

  var median: Double { sorted[sorted.count / 2] }
  var minimum: Double { sorted.first! }
  var maximum: Double { sorted.last! }
  private var sorted: [Double] { values.sorted() }

  var spread: String { String(format: "%.2f-%.2f", minimum, maximum) }
}

/// Times `body` in CPU nanoseconds of the calling thread.
func nanoseconds(_ body: () throws -> Void) rethrows -> UInt64 {
  let start = taskkey_bench_now()
  try body()
  return taskkey_bench_now() - start
}

/// Runs `rounds` rounds; in each, `ours` and every baseline run once, in
/// an order that alternates between rounds. Returns, per baseline, the
/// ratios ours / baseline, and the median time of ours per round.
func pairedRounds(
  rounds: Int, ours: () throws -> UInt64, baselines: [() throws -> UInt64]
) throws -> (ratios: [Ratios], ours: [UInt64]) {
  var ratios = Array(repeating: Ratios(values: []), count: baselines.count)
  var oursTimes = [UInt64]()
  for round in 0..<rounds {
    var mine: UInt64 = 0
    var theirs = [UInt64](repeating: 0, count: baselines.count)
    if round % 2 == 0 { mine = try ours() }
    for (index, baseline) in baselines.enumerated() { theirs[index] = try baseline() }
    if round % 2 == 1 { mine = try ours() }
    for index in baselines.indices {
      guard theirs[index] > 0, mine > 0 else { throw BenchError.failed("a timed run failed (returned 0)") }
      ratios[index].values.append(Double(mine) / Double(theirs[index]))
    }
    oursTimes.append(mine)
  }
  return (ratios, oursTimes)
}

/// Why the benchmark itself could not run.
enum BenchError: Error, CustomStringConvertible {
  case failed(String)

  var description: String {
    switch self {
    case .failed(let reason): return "taskkey-bench: \(reason)"
    }
  }
}

func sizeText(_ size: Int) -> String {
  size >= 1 << 20 ? "\(size >> 20) MiB" : size >= 1024 ? "\(size >> 10) KiB" : "\(size) B"
}

/// Prints the table in Markdown, ready for the README.
func printTable(_ rows: [Row]) {
  print("| check | size | TaskKey | ratio min-max | goal | result |")
  print("|---|---|---|---|---|---|")
  for row in rows {
    let result = row.met.map { $0 ? "met" : "MISSED" } ?? "(reported)"
    print("| \(row.name) | \(row.size) | \(row.measured) | \(row.spread) | \(row.goal) | \(result) |")
  }
}
