import CommandKit
import FoundationEssentials
import TaskerCore
import TaskerHTTP
import TaskerPlanning

/// The one way a command sends something to a planning provider: the
/// user's confirmation for a public-network host (once per provider), the
/// key read from its device-only item at that moment, the exchange, and a
/// line in the provider log for every attempt.
struct ProviderDelivery {
  /// The options every sending command takes.
  static let yes = OptionSpec.flag(
    "--yes", help: "Confirm sending to a provider on the public network without a prompt (for scripts); asked once.")
  static let timeout = OptionSpec.value(
    "--timeout", "SECONDS", .number, help: "Give up after SECONDS in all (1 to 600; default 120).")
  static let provider = OptionSpec.value(
    "--provider", "NAME", .text,
    help: "The provider to use (default: the only one set up).")
  static let dryRun = OptionSpec.flag(
    "--dry-run", help: "Print the exact request body that would be sent (never the key) and send nothing.")

  /// The seconds `--timeout` gives, or the default.
  ///
  /// - Throws: `UsageError` outside 1 to 600.
  static func seconds(_ arguments: ParsedArguments) throws -> Int {
    guard let text = arguments.value(timeout) else { return ProviderClient.defaultTotalSeconds }
    guard let seconds = Int(text), (1...600).contains(seconds) else {
      throw arguments.usageError("--timeout takes 1 to 600 seconds")
    }
    return seconds
  }

  let book: ProviderBook
  let record: ProviderRecord
  let context: CommandContext

  /// The delivery to the provider `name` (or the only one).
  ///
  /// - Throws: `PlanningError.noProvider`, `.severalProviders`,
  ///   `.providerNotFound`, the vault's errors.
  init(provider name: String?, context: CommandContext) throws {
    book = try ProviderBook(environment: context.environment)
    record = try book.choose(name)
    self.context = context
  }

  /// Prints what `--dry-run` shows: the body on standard output, where it
  /// would go and which key item on standard error.
  func printDryRun(_ request: PlanRequest) throws {
    try context.write(request.body + [0x0A])
    let key = record.keyItem.map { "the key from vault item \($0)" } ?? "no key"
    context.note(
      "tasker: dry run: nothing was sent; this body would be POSTed to "
        + "\(ProviderClient.endpoint(of: record).text) (\(record.endpoint.scope.rawValue)) with \(key)")
  }

  /// Sends `request`, after the confirmation a public-network host needs,
  /// and logs the attempt whatever its outcome.
  ///
  /// - Parameters:
  ///   - request: The body to send.
  ///   - kind: What it is for, for the log.
  ///   - yes: Whether `--yes` confirmed sending.
  ///   - seconds: The limit of the exchange.
  ///   - check: Checks the 200 answer's body; its error is logged as
  ///     `answer_refused` and thrown.
  /// - Returns: What `check` returned.
  /// - Throws: `PlanningError` (`notConfirmed` before anything is sent),
  ///   the vault's and the store's errors.
  func send<Answer>(
    _ request: PlanRequest, kind: ProviderCallKind, yes: Bool, seconds: Int,
    check: ([UInt8]) throws(PlanningError) -> Answer
  ) throws -> Answer {
    let store = try context.store(create: true)
    try confirm(candidates: request.labels.count, yes: yes)
    let key = try book.bearerKey(for: record)
    let exchange = ProviderClient().send(request.body, to: record, key: key, totalSeconds: seconds)
    var outcome = exchange.outcome
    var failure = exchange.error
    var answer: Answer?
    if failure == nil, let response = exchange.response {
      do {
        answer = try check(response.body)
      } catch {
        outcome = .answerRefused
        failure = error
      }
    }
    try store.recordProviderCall(
      ProviderCall(
        at: Int64(Date().timeIntervalSince1970), provider: record.name, origin: record.endpoint.origin, kind: kind,
        candidates: request.labels.count, bytesSent: exchange.response?.bytesSent ?? 0,
        bytesReceived: exchange.response?.bytesReceived ?? 0, status: exchange.response?.status, outcome: outcome))
    if let failure { throw failure }
    guard let answer else { throw PlanningError.answerRefused(reason: "no answer") }
    return answer
  }

  /// Asks once, for a host on the public network, and records the yes in
  /// the provider's record.
  ///
  /// - Throws: `PlanningError.notConfirmed` without a terminal and
  ///   without `--yes`, or when the user does not answer yes.
  private func confirm(candidates: Int, yes: Bool) throws {
    guard record.needsConfirmation else { return }
    let host = record.endpoint.host
    if !yes {
      let streams = context.streams
      guard streams.inputIsTerminal, streams.errorIsTerminal else { throw PlanningError.notConfirmed(host: host) }
      let what =
        candidates == 0
        ? "a test request and your key" : "\(candidates) tasks' titles, estimates, due days, priorities and energy"
      context.printError(
        "tasker: \(host) is on the public network (asked once for provider \(record.name)). "
          + "Send it \(what) for model \(record.model)? [y/N]")
      guard ["y", "yes"].contains(try Self.readAnswer(streams).lowercased()) else {
        throw PlanningError.notConfirmed(host: host)
      }
    }
    try book.save(record.confirmed(at: Int64(Date().timeIntervalSince1970)))
  }

  /// One line from the terminal, at most 64 bytes kept.
  private static func readAnswer(_ streams: StandardStreams) throws -> String {
    var line: [UInt8] = []
    var byte = [UInt8](repeating: 0, count: 1)
    while true {
      let count = try byte.withUnsafeMutableBytes { try streams.readInput($0) }
      guard count == 1, byte[0] != 0x0A else { break }
      if line.count < 64 { line.append(byte[0]) }
    }
    while let last = line.last, last == 0x20 || last == 0x09 || last == 0x0D { line.removeLast() }
    while let first = line.first, first == 0x20 || first == 0x09 { line.removeFirst() }
    return String(decoding: line, as: UTF8.self)
  }
}
