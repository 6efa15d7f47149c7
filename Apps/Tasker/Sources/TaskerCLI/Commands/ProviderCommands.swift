import CommandKit
import FoundationEssentials
import TaskerCore
import TaskerHTTP
import TaskerPlanning

/// `tasker provider add|list|remove|test|log`: the planning providers of
/// this device, off until one is added.
struct ProviderCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "provider",
    abstract: "Set up the OpenAI-compatible planning providers 'plan' and 'ask' may send to (none by default).",
    discussion: "A provider is a local AI server (llama.cpp's llama-server, Ollama, vLLM, LM Studio) or a cloud "
      + "service, reached at its chat-completions endpoint. Its record is a device-only vault item "
      + "(tasker/provider/NAME); its key stays in the device-only vault item you name and is read at the moment of "
      + "each request. With no provider, Tasker makes no network request.",
    example: """
      tasker provider add local --url http://127.0.0.1:8080/v1
      taskkey item set provider/openai --device-only
      tasker provider add openai --url https://api.openai.com/v1 --model gpt-4o-mini --key-item provider/openai
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    ProviderAddCommand.self, ProviderListCommand.self, ProviderRemoveCommand.self, ProviderTestCommand.self,
    ProviderLogCommand.self,
  ]

  /// `NAME`: a provider's name.
  static let name = ArgumentSpec(name: "NAME", kind: .text, help: "The provider's name (a-z, 0-9, -; up to 32).")

  /// The fields of a provider in JSON.
  static let fields = ["name", "url", "scope", "model", "key_item", "response_format", "confirmed_at"]

  /// A provider in the project's JSON; never the key's value.
  static func json(_ record: ProviderRecord) -> JSONValue {
    .object([
      "name": .string(record.name), "url": .string(record.endpoint.text),
      "scope": .string(record.endpoint.scope.rawValue), "model": .string(record.model),
      "key_item": .optional(record.keyItem), "response_format": .bool(record.requestsSchema),
      "confirmed_at": TimeStamp.json(seconds: record.confirmedAt),
    ])
  }
}

/// `tasker provider add NAME --url URL [--model M] [--key-item ITEM] [--no-response-format]`.
struct ProviderAddCommand: Command {
  static let url = OptionSpec.value(
    "--url", "URL",
    help: "The OpenAI-compatible base URL, such as http://127.0.0.1:8080/v1; requests go to URL/chat/completions. "
      + "Plain http only to loopback or private-network addresses.", required: true)
  static let model = OptionSpec.value("--model", "MODEL", help: "The model to ask for (default: default).")
  static let keyItem = OptionSpec.value(
    "--key-item", "ITEM",
    help: "The device-only vault item holding the key (taskkey item set ITEM --device-only); needed for a provider "
      + "on the public network.")
  static let noSchema = OptionSpec.flag(
    "--no-response-format",
    help: "Do not send the plan's JSON schema as response_format (for servers that refuse it); answers are checked "
      + "the same.")
  static let spec = CommandSpec(
    name: "add", abstract: "Add a planning provider; nothing is sent until 'plan', 'ask' or 'provider test'.",
    arguments: [ProviderCommand.name], options: [url, model, keyItem, noSchema],
    json: JSONShape(fields: ProviderCommand.fields, help: "the provider added."),
    discussion: "Needs the vault unlocked: the record is kept in it, device-only. A provider on the public network "
      + "(any host name but localhost, any public address) is asked about once, at its first request.",
    example: "tasker provider add local --url http://127.0.0.1:11434/v1 --model llama3.2")

  let record: ProviderRecord
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    let endpoint = try HTTPEndpoint(parsing: arguments.value(Self.url)!)
    record = try ProviderRecord(
      name: arguments.argument(0)!, endpoint: endpoint, model: arguments.value(Self.model) ?? "default",
      keyItem: arguments.value(Self.keyItem), requestsSchema: !arguments.flag(Self.noSchema))
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let book = try ProviderBook(environment: context.environment)
    // The key item must be there and device-only now, not only at the first request (the value is wiped unread).
    _ = try book.bearerKey(for: record)
    try book.add(record)
    if json { return try context.printJSON(ProviderCommand.json(record)) }
    try context.print(
      "provider \(record.name) added: \(record.endpoint.text) (\(record.endpoint.scope.rawValue)), model "
        + "\(record.model), " + (record.keyItem.map { "key from vault item \($0)" } ?? "no key"))
  }
}

/// `tasker provider list`.
struct ProviderListCommand: Command {
  static let spec = CommandSpec(
    name: "list", abstract: "List the planning providers (never their keys).",
    json: JSONShape(
      fields: ["providers"], help: "the providers, each with " + ProviderCommand.fields.joined(separator: ", ") + "."),
    example: "tasker provider list --json")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let records = try ProviderBook(environment: context.environment).records()
    if json { return try context.printJSON(.object(["providers": .array(records.map(ProviderCommand.json))])) }
    for record in records {
      let confirmation =
        record.endpoint.scope != .publicNetwork
        ? "no confirmation needed"
        : record.confirmedAt.map { "confirmed \(TimeStamp.utc(seconds: $0))" } ?? "not confirmed yet"
      try context.print(
        [
          record.name, record.endpoint.text, record.endpoint.scope.rawValue, "model \(record.model)",
          record.keyItem.map { "key \($0)" } ?? "no key", confirmation,
        ].joined(separator: "\t"))
    }
  }
}

/// `tasker provider remove NAME`.
struct ProviderRemoveCommand: Command {
  static let spec = CommandSpec(
    name: "remove", abstract: "Remove a planning provider (its key item stays in the vault).",
    arguments: [ProviderCommand.name], example: "tasker provider remove local")

  let name: String

  init(_ arguments: ParsedArguments) throws {
    name = arguments.argument(0)!
  }

  func run(_ context: CommandContext) throws {
    try ProviderBook(environment: context.environment).remove(named: name)
    try context.print("provider \(name) removed")
  }
}

/// `tasker provider test NAME`: one request without task data.
struct ProviderTestCommand: Command {
  static let spec = CommandSpec(
    name: "test", abstract: "Send one request without any task data and report the answer.",
    arguments: [ProviderCommand.name], options: [ProviderDelivery.yes, ProviderDelivery.timeout],
    json: JSONShape(fields: ["provider", "status", "milliseconds"], help: "the provider, HTTP status and time taken."),
    discussion: "The request asks the model to reply 'ok'; it carries the key, if any, and no task. It is logged.",
    example: "tasker provider test local")

  let name: String
  let yes: Bool
  let seconds: Int
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    name = arguments.argument(0)!
    yes = arguments.flag(ProviderDelivery.yes)
    seconds = try ProviderDelivery.seconds(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let delivery = try ProviderDelivery(provider: name, context: context)
    let request = try PlanRequest(
      .test, candidates: [], today: CalendarDate.localToday(), model: delivery.record.model, requestsSchema: false)
    let clock = ContinuousClock()
    let start = clock.now
    _ = try delivery.send(request, kind: .test, yes: yes, seconds: seconds, check: PlanAnswer.text)
    let elapsed = clock.now - start
    let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    if json {
      return try context.printJSON(
        .object(["provider": .string(name), "status": .int(200), "milliseconds": .int(milliseconds)]))
    }
    try context.print("provider \(name) answered HTTP 200 in \(milliseconds) ms")
  }
}

/// `tasker provider log [--limit N]`.
struct ProviderLogCommand: Command {
  static let limit = OptionSpec.value("--limit", "N", .recordID, help: "The newest N requests (default 50).")
  static let fields = [
    "at", "provider", "origin", "kind", "candidates", "bytes_sent", "bytes_received", "status", "outcome",
  ]
  static let spec = CommandSpec(
    name: "log", abstract: "Show the requests sent to planning providers, newest first (no task data is kept).",
    options: [limit],
    json: JSONShape(fields: ["calls"], help: "the requests, each with " + fields.joined(separator: ", ") + "."),
    example: "tasker provider log --json")

  let count: Int
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    count = arguments.recordID(Self.limit).map { Int(min($0, 100_000)) } ?? 50
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let calls = try context.readerIfPresent()?.providerCalls(limit: count) ?? []
    if json { return try context.printJSON(.object(["calls": .array(calls.map(Self.json))])) }
    for call in calls {
      try context.print(
        [
          TimeStamp.local(Double(call.at)), call.provider, call.origin, call.kind.rawValue, "\(call.candidates) tasks",
          "sent \(call.bytesSent) B", "received \(call.bytesReceived) B",
          call.status.map { "HTTP \($0)" } ?? "no response", call.outcome.rawValue,
        ].joined(separator: "\t"))
    }
  }

  static func json(_ call: ProviderCall) -> JSONValue {
    .object([
      "at": TimeStamp.json(seconds: call.at), "provider": .string(call.provider), "origin": .string(call.origin),
      "kind": .string(call.kind.rawValue), "candidates": .int(call.candidates), "bytes_sent": .int(call.bytesSent),
      "bytes_received": .int(call.bytesReceived), "status": .optional(call.status),
      "outcome": .string(call.outcome.rawValue),
    ])
  }
}
