import Foundation
import TaskCrypto
import TaskSystem
import TaskVault

/// `taskkey sync export|import`: moves the synchronisable store between
/// devices as an end-to-end encrypted bundle.
struct SyncCommand: Command {
  static let name = "sync"
  static let abstract = "Export or import the synchronisable store (note keys) as an encrypted bundle."
  static let usage =
    "taskkey sync export [--out F] | import F [--adopt-primary] [--json] [--passphrase-file F | --passphrase-fd N]"
  static let options = """
    SUBCOMMANDS:
      export            Write a sync bundle of the note keyring and the
                        synchronisable items, sealed under a key derived from
                        the vault passphrase. Device-only items never go in.
      import F          Merge bundle F: keys by key id (none is ever dropped),
                        items by name (the later change wins).

    OPTIONS:
      --out F           (export) Write to a new 0600 file F instead of stdout
                        ('-' is stdout). 'import -' reads standard input.
      --adopt-primary   (import) Make the bundle's primary key the primary here.
      --json            (import) Print the report as JSON.
    \(PassphraseSource.help)
      -h, --help        Show this help.
    """
  static let example = """
      # On the laptop, then on the desktop:
      taskkey sync export --out ~/Sync/tasker-keys.tksync
      taskkey sync import ~/Sync/tasker-keys.tksync
    """

  enum Action {
    case export(out: String?)
    case `import`(path: String, adoptPrimary: Bool)
  }

  let action: Action
  let json: Bool
  let passphrase: PassphraseSource

  init(parsing arguments: inout Arguments) throws {
    let out = try arguments.option("--out")
    let adopt = try arguments.flag("--adopt-primary")
    json = try arguments.flag("--json")
    passphrase = try PassphraseSource(parsing: &arguments)
    let words = try arguments.positionals()
    switch (words.first, words.count) {
    case ("export", 1): action = .export(out: out)
    case ("import", 2): action = .import(path: words[1], adoptPrimary: adopt)
    default: throw arguments.usageError("expected 'sync export' or 'sync import F'")
    }
  }

  struct Report: Encodable {
    let addedKeyIDs: [String]
    let unchangedKeyIDs: [String]
    let previousPrimaryID: String
    let primaryID: String
    let addedItems: [String]
    let updatedItems: [String]
    let keptItems: [String]
    let skippedItems: [String]
    let retiredKeyIDs: [String]
    let refusedRetiredKeyIDs: [String]
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    switch action {
    case .export(let out):
      let secret = try passphrase.read(prompt: "Vault passphrase: ")
      let bundle = try vaultCall { try vault.exportSyncBundle(passphrase: secret) }
      if let out, out != standardStreamPath {
        try writeNewFile(out, bundle)
        try streams.print("Wrote the sync bundle to \(out).")
      } else {
        try refuseBinaryOnTerminal("a binary sync bundle")
        try streams.writeOutput(bundle)
      }
    case .import(let path, let adoptPrimary):
      let bundle = try readBundle(path, streams)
      // Say "locked" before asking for a passphrase that could not be used.
      if case .locked(let reason) = try vaultCall({ try vault.status() }).lockState {
        throw CLIError.vault(.locked(reason: reason))
      }
      let secret = try passphrase.read(prompt: "Bundle passphrase: ")
      let report = try vaultCall { try vault.importSyncBundle(bundle, passphrase: secret, adoptPrimary: adoptPrimary) }
      let output = Report(
        addedKeyIDs: report.addedKeyIDs.map(\.hex), unchangedKeyIDs: report.unchangedKeyIDs.map(\.hex),
        previousPrimaryID: report.previousPrimaryID.hex, primaryID: report.primaryID.hex,
        addedItems: report.addedItems, updatedItems: report.updatedItems, keptItems: report.keptItems,
        skippedItems: report.skippedItems, retiredKeyIDs: report.retiredKeyIDs.map(\.hex),
        refusedRetiredKeyIDs: report.refusedRetiredKeyIDs.map(\.hex))
      if json {
        try streams.print(try jsonText(output))
      } else {
        try streams.print(
          "Keys added: \(output.addedKeyIDs.isEmpty ? "none" : output.addedKeyIDs.joined(separator: " "))")
        try streams.print("Keys already here: \(output.unchangedKeyIDs.count)")
        try streams.print(
          "Keys retired (retired on the other device): "
            + (output.retiredKeyIDs.isEmpty ? "none" : output.retiredKeyIDs.joined(separator: " ")))
        if !output.refusedRetiredKeyIDs.isEmpty {
          try streams.print("Retired keys not added back: \(output.refusedRetiredKeyIDs.joined(separator: " "))")
        }
        try streams.print(
          "Primary: \(output.primaryID)\(report.primaryID == report.previousPrimaryID ? " (unchanged)" : " (changed)")")
        try streams.print(
          "Items added: \(output.addedItems.count), updated: \(output.updatedItems.count), kept: \(output.keptItems.count), skipped (device-only here): \(output.skippedItems.count)"
        )
      }
    }
  }

  func readBundle(_ path: String, _ streams: StandardStreams) throws -> [UInt8] {
    // The largest valid bundle is a little over 8 MiB.
    if path == standardStreamPath { return try streams.readInput(9 << 20) }
    return try readInputFile(path, limit: 9 << 20)
  }

  func writeNewFile(_ path: String, _ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try createNewFile(path, contents: $0) }
  }
}
