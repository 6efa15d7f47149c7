import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskVault

/// `taskkey item set|get|list|remove`: the vault's items.
struct ItemCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "item", abstract: "Set, get, list or remove vault items (values on stdin and stdout).",
    example: """
      # Keep an OpenAI key on this device only:
      taskkey item set provider/openai --device-only < key.txt
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    ItemSetCommand.self, ItemGetCommand.self, ItemListCommand.self, ItemRemoveCommand.self,
  ]
  static let nameArgument = ArgumentSpec(name: "NAME", kind: .itemName, help: "The item's name.")

  /// NAME, refused in the prefix TaskKey keeps for its own items.
  static func name(_ arguments: ParsedArguments) throws -> String {
    let name = arguments.argument(0)!
    let reserved = AssistantKeyRegistry.reservedItemPrefix
    guard !name.hasPrefix(reserved) else {
      throw arguments.usageError("'\(name)' is in '\(reserved)', which TaskKey keeps for its own items")
    }
    return name
  }
  static let exactOption = OptionSpec.flag(
    "--exact", help: "Take and give bytes exactly; by default one trailing newline is removed on set and added on get.")
}

/// `taskkey item set NAME`.
struct ItemSetCommand: Command {
  static let deviceOnlyOption = OptionSpec.flag(
    "--device-only",
    help: "Keep the item in the device-only store (after-first-unlock-this-device-only): it never goes into a "
      + "sync bundle or a backup. For AI-provider keys.")
  static let labelOption = OptionSpec.value("--label", "L", help: "A label to show in lists (default: the name).")

  static let spec = CommandSpec(
    name: "set", abstract: "Store standard input (at most 64 KiB) under NAME.", arguments: [ItemCommand.nameArgument],
    options: [deviceOnlyOption, labelOption, ItemCommand.exactOption],
    example: """
      taskkey item set provider/openai --device-only < key.txt
      """)

  let name: String
  let deviceOnly: Bool
  let label: String?
  let exact: Bool

  init(_ arguments: ParsedArguments) throws {
    name = try ItemCommand.name(arguments)
    deviceOnly = arguments.flag(Self.deviceOnlyOption)
    label = arguments.value(Self.labelOption)
    exact = arguments.flag(ItemCommand.exactOption)
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    let value = try streams.readSecret(
      limit: VaultLimits.maximumValueByteCount, exact: exact, prompt: "Value of \(name): ")
    try vault.setItem(
      value, named: name, label: label, class: deviceOnly ? .afterFirstUnlockThisDeviceOnly : .afterFirstUnlock)
  }
}

/// `taskkey item get NAME`.
struct ItemGetCommand: Command {
  static let spec = CommandSpec(
    name: "get", abstract: "Write the value of NAME to standard output.", arguments: [ItemCommand.nameArgument],
    options: [ItemCommand.exactOption],
    example: """
      taskkey item get provider/openai
      """)

  let name: String
  let exact: Bool

  init(_ arguments: ParsedArguments) throws {
    name = try ItemCommand.name(arguments)
    exact = arguments.flag(ItemCommand.exactOption)
  }

  func run(_ streams: StandardStreams) throws {
    let item = try openVault(streams).item(named: name)
    try streams.write(secret: item.value)
    if !exact { try streams.write([UInt8(ascii: "\n")]) }
  }
}

/// `taskkey item list`.
struct ItemListCommand: Command {
  static let spec = CommandSpec(
    name: "list", abstract: "List names, classes, labels and times (never values).",
    json: JSONShape(fields: ["items"], help: "{items: [{name, label, class, created, modified}]}."),
    example: """
      taskkey item list --json
      """)

  let json: Bool

  init(_ arguments: ParsedArguments) {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Listed: Encodable {
    let name: String
    let label: String
    let `class`: String
    let created: String
    let modified: String
  }

  struct Listing: Encodable {
    let items: [Listed]
  }

  func run(_ streams: StandardStreams) throws {
    let items = try openVault(streams).items().filter { !$0.name.hasPrefix(AssistantKeyRegistry.reservedItemPrefix) }
    if json {
      return try streams.printJSON(
        Listing(
          items: items.map {
            Listed(
              name: $0.name, label: $0.label, class: $0.itemClass.rawName, created: isoTime($0.created),
              modified: isoTime($0.modified))
          }))
    }
    let times = TimeText(streams)
    for item in items {
      try streams.print("\(item.name)\t\(item.itemClass.rawName)\t\(times.show(item.modified))\t\(item.label)")
    }
  }
}

/// `taskkey item remove NAME`.
struct ItemRemoveCommand: Command {
  static let spec = CommandSpec(
    name: "remove", abstract: "Remove NAME.", arguments: [ItemCommand.nameArgument],
    example: """
      taskkey item remove provider/openai
      """)

  let name: String

  init(_ arguments: ParsedArguments) throws {
    name = try ItemCommand.name(arguments)
  }

  func run(_ streams: StandardStreams) throws {
    try openVault(streams).removeItem(named: name)
  }
}
