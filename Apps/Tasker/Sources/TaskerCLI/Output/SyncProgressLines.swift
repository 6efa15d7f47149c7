import CommandKit
import TaskerSync

/// Shows a sync's progress on standard error when it is a terminal (and
/// not `-q`): a line per step, and one line per transfer drawn again in
/// place as it grows (`tasker: sending attachment 1 of 1: 37% of 1.0 GiB`),
/// ended before the next line, or by `end` when the sync stopped midway.
final class SyncProgressLines {
  private let streams: StandardStreams
  /// Whether a transfer's line is drawn and not yet ended.
  private var open = false

  init(_ streams: StandardStreams) { self.streams = streams }

  /// Shows `progress`.
  func show(_ progress: SyncProgress) {
    switch progress {
    case .step(let text):
      end()
      streams.terminalNote("tasker: " + text)
    case .transfer(let label, let bytes, let total):
      let done = bytes >= total
      streams.progress(
        "tasker: \(label): \(SyncProgress.percent(bytes, of: total))% of \(Self.size(total))", done: done)
      open = !done
    }
  }

  /// Ends a transfer's line left open (the transfer failed): what is
  /// printed next starts on a line of its own.
  func end() {
    if open { streams.progress("", done: true) }
    open = false
  }

  /// `n` bytes in the largest unit that keeps one digit before the point.
  static func size(_ bytes: UInt64) -> String {
    let units = ["KiB", "MiB", "GiB", "TiB"]
    guard bytes >= 1024 else { return "\(bytes) B" }
    var value = Double(bytes) / 1024
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[unit])"
  }

  /// Runs `body` with a progress function for it, the line ended however it ends.
  static func around<Result>(
    _ streams: StandardStreams, _ body: (_ progress: @escaping (SyncProgress) -> Void) throws -> Result
  ) rethrows -> Result {
    let lines = SyncProgressLines(streams)
    defer { lines.end() }
    return try body(lines.show)
  }
}
