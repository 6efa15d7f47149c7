import AssistantKeys
import Foundation
import TaskCrypto
import TaskSystem
import TaskVault

/// `taskkey item set|get|list|remove`: the vault's items.
struct ItemCommand: Command {
  static let name = "item"
  static let abstract = "Set, get, list or remove vault items (values on stdin and stdout)."
  static let usage =
    "taskkey item set NAME [--device-only] [--label L] [--exact] | get NAME [--exact] | list [--json] | remove NAME"
  static let options = """
    SUBCOMMANDS:
      set NAME          Store standard input (at most 64 KiB) under NAME.
      get NAME          Write the value of NAME to standard output.
      list              List names, classes, labels and times (never values).
      remove NAME       Remove NAME.

    OPTIONS:
      --device-only     (set) Keep the item in the device-only store
                        (after-first-unlock-this-device-only): it never goes
                        into a sync bundle or a backup. For AI-provider keys.
      --label L         (set) A label to show in lists (default: the name).
      --exact           (set, get) Take and give bytes exactly; by default one
                        trailing newline is removed on set and added on get.
      --json            (list) A JSON object {"items": [{name, label, class,
                        created, modified}]}.
      -h, --help        Show this help.
    """
  static let example = """
      # Keep an OpenAI key on this device only:
      taskkey item set provider/openai --device-only < key.txt
    """

  enum Action {
    case set(name: String, deviceOnly: Bool, label: String?)
    case get(name: String)
    case list
    case remove(name: String)
  }

  let action: Action
  let exact: Bool
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    let deviceOnly = try arguments.flag("--device-only")
    let label = try arguments.option("--label")
    exact = try arguments.flag("--exact")
    json = try arguments.flag("--json")
    let words = try arguments.positionals()
    switch (words.first, words.count) {
    case ("set", 2): action = .set(name: words[1], deviceOnly: deviceOnly, label: label)
    case ("get", 2): action = .get(name: words[1])
    case ("list", 1): action = .list
    case ("remove", 2): action = .remove(name: words[1])
    case (nil, _): throw arguments.usageError("missing subcommand: set, get, list or remove")
    default: throw arguments.usageError("expected 'set NAME', 'get NAME', 'list' or 'remove NAME'")
    }
    switch action {
    case .set(let name, _, _), .get(let name), .remove(let name):
      guard !name.hasPrefix(AssistantKeyRegistry.reservedItemPrefix) else {
        throw arguments.usageError(
          "'\(name)' is in '\(AssistantKeyRegistry.reservedItemPrefix)', which TaskKey keeps for its own items")
      }
    case .list: break
    }
    if case .set = action {
    } else if deviceOnly || label != nil {
      throw arguments.usageError("--device-only and --label apply to 'item set' only")
    }
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
    let vault = try openVault(streams)
    switch action {
    case .set(let name, let deviceOnly, let label):
      let value = try readSecretInput(
        limit: VaultLimits.maximumValueByteCount, exact: exact, prompt: "Value of \(name): ")
      try vaultCall {
        try vault.setItem(
          value, named: name, label: label, class: deviceOnly ? .afterFirstUnlockThisDeviceOnly : .afterFirstUnlock)
      }
    case .get(let name):
      let item = try vaultCall { try vault.item(named: name) }
      try item.value.withUnsafeBytes { try writeAll(fd: 1, $0, path: "<stdout>") }
      if !exact { try streams.writeOutput([UInt8(ascii: "\n")]) }
    case .list:
      let items = try vaultCall { try vault.items() }.filter {
        !$0.name.hasPrefix(AssistantKeyRegistry.reservedItemPrefix)
      }
      let listed = items.map {
        Listed(
          name: $0.name, label: $0.label, class: $0.itemClass.rawName, created: isoDate($0.created),
          modified: isoDate($0.modified))
      }
      if json {
        try streams.print(try jsonText(Listing(items: listed)))
      } else {
        for item in listed {
          try streams.print("\(item.name)\t\(item.class)\t\(item.modified)\t\(item.label)")
        }
      }
    case .remove(let name):
      try vaultCall { try vault.removeItem(named: name) }
    }
  }
}

/// Reads standard input straight into locked memory, refusing more than
/// `limit` bytes; removes one trailing newline unless `exact`. When
/// standard input is a terminal, `prompt` goes to standard error and one
/// line is read with echo off, so a pasted secret is never shown.
func readSecretInput(limit: Int, exact: Bool, prompt: String) throws -> SecureBytes {
  if FileDescriptor.standardInput.isTerminal { return try Terminal.askOnStandardInput(prompt: prompt, limit: limit) }
  let buffer = try cryptoCall { try SecureBytes(zeroedCount: limit + 2) }
  var length = 0
  try buffer.withUnsafeMutableBytes { out in
    length = try systemCall { try FileDescriptor.standardInput.read(into: out) }
    if !exact && length > 0 && out[length - 1] == UInt8(ascii: "\n") { length -= 1 }
  }
  guard length <= limit else { throw CLIError.inputTooLarge(limit: limit) }
  return try buffer.withUnsafeBytes { raw in
    try cryptoCall { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<length])) }
  }
}
